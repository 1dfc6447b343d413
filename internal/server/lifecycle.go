package server

import (
	"context"
	"encoding/json"
	"path/filepath"

	"github.com/task-x/task-x-runtime/internal/jsonrpc"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/provider/all"
	"github.com/task-x/task-x-runtime/internal/store"
)

// initialize checks protocolVersion (-32002 with data.serverProtocolVersion;
// the client may try again), takes dataDir and sandbox, and marks task files
// left running by a dead runtime as failed (protocol.md initialize, addendum
// §11).
func (s *Server) initialize(ctx context.Context, params json.RawMessage) (any, error) {
	var p protocol.InitializeParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == nil || *p.ProtocolVersion != protocol.Version {
		return nil, jsonrpc.NewError(jsonrpc.ErrProtocolVersion.Code, "unsupported protocolVersion; this runtime speaks version 1").
			WithData(map[string]int{"serverProtocolVersion": protocol.Version})
	}
	var st *store.Store
	if p.DataDir != "" {
		if !filepath.IsAbs(p.DataDir) {
			return nil, invalidParams("dataDir must be an absolute path")
		}
		var err error
		if st, err = store.Open(filepath.Clean(p.DataDir)); err != nil {
			return nil, invalidParams("dataDir: %v", err)
		}
		if failed, err := st.FailOrphans(nil); err != nil {
			s.log.Warn("marking orphaned tasks failed", "err", err)
		} else if len(failed) > 0 {
			s.log.Info("orphaned running tasks marked failed", "count", len(failed))
		}
	}
	sandbox := true
	if p.Sandbox != nil {
		sandbox = *p.Sandbox
	}

	s.mu.Lock()
	if s.state != stateUninitialized {
		s.mu.Unlock()
		return nil, jsonrpc.NewError(jsonrpc.ErrInvalidRequest.Code, "initialize was already received")
	}
	s.state = stateRunning
	if st != nil {
		s.runner.Store = st
		s.dataDir = filepath.Clean(p.DataDir)
	}
	s.sandbox = sandbox
	s.mu.Unlock()

	res := protocol.InitializeResult{
		ProtocolVersion: protocol.Version,
		ServerInfo:      protocol.ServerInfo{Name: "task-x-runtime", Version: s.opts.Version},
		Providers:       providerInfos(),
		Sandbox:         sandbox,
	}
	if st != nil {
		d := filepath.Clean(p.DataDir)
		res.DataDir = &d
	}
	return res, nil
}

func providerInfos() []protocol.ProviderInfo {
	out := make([]protocol.ProviderInfo, 0, len(provider.Kinds))
	for _, k := range provider.Kinds {
		c := all.Capabilities(k)
		out = append(out, protocol.ProviderInfo{Kind: protocol.ProviderKind(k), Capabilities: protocol.ProviderCapabilities{
			Streaming: c.Streaming, Tools: c.Tools, Vision: c.Vision, Thinking: c.Thinking,
			ListModels: c.ListModels, ModelInfo: c.ModelInfo, ContextWindow: c.ContextWindow,
		}, RequiresAPIKey: all.RequiresAPIKey(k)})
	}
	return out
}

func (s *Server) providerCapabilities(ctx context.Context, params json.RawMessage) (any, error) {
	return providerInfos(), nil
}

// shutdown cancels in-flight work and rejects new requests; the reply to
// shutdown itself still goes out (protocol.md Lifecycle).
func (s *Server) shutdown(ctx context.Context, params json.RawMessage) (any, error) {
	s.mu.Lock()
	s.state = stateShuttingDown
	s.mu.Unlock()
	s.conn.Shutdown(ctx)
	s.closeMCP()
	s.closeProject()
	return nil, nil
}

package server

import (
	"context"
	"encoding/json"

	"github.com/task-x/task-x-runtime/internal/jsonrpc"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/session"
)

// methodInfo is one method of the table: call decodes its params, checks
// them and runs it.
type methodInfo struct {
	call func(ctx context.Context, params json.RawMessage) (any, error)
}

// none is the params type of a method that takes none: they are not read.
type none struct{}

// validator is params that check themselves after decoding; an error is
// the method's -32602 with its message.
type validator interface{ validate() error }

// method is one registration of the table, in the spirit of the MCP
// go-sdk's newServerMethodInfo[P, R]: the params type P and the result
// type R of a method, with its handler. Decoding, the unknown-field rule,
// param checks and the error mapping happen here and in handle, for every
// method alike: params are decoded into P (absent or null params are P's
// zero value; a JSON type that does not fit is -32602 naming the field),
// unknown fields are ignored (protocol.md rejects them only in a
// ProviderConfig, which provider.ParseConfig checks), a P with a validate
// method is checked (-32602), and the handler's error is mapped by
// wireError to the protocol's code.
func method[P, R any](h func(ctx context.Context, p *P) (R, error)) methodInfo {
	return methodInfo{call: func(ctx context.Context, params json.RawMessage) (any, error) {
		var p P
		if _, skip := any(&p).(*none); !skip {
			if err := decodeParams(params, &p); err != nil {
				return nil, err
			}
		}
		if v, ok := any(&p).(validator); ok {
			if err := v.validate(); err != nil {
				return nil, invalidParams("%v", err)
			}
		}
		res, err := h(ctx, &p)
		if err != nil {
			return nil, err
		}
		return res, nil
	}}
}

// decodeParams unmarshals params into v; bad JSON types are -32602.
func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidParams("invalid params: %v", err)
	}
	return nil
}

// table is the method table: one registration per method.
func (s *Server) table() map[string]methodInfo {
	ss := s.sess
	return map[string]methodInfo{
		protocol.MethodInitialize: method(s.initialize),
		protocol.MethodShutdown:   method(s.shutdown),

		protocol.MethodProviderCaps: method(func(ctx context.Context, _ *none) ([]protocol.ProviderInfo, error) {
			return session.Providers(), nil
		}),
		protocol.MethodListModels: method(func(ctx context.Context, p *providerParams) (protocol.ListModelsResult, error) {
			ids, err := ss.ModelIDs(ctx, p.Provider)
			return protocol.ListModelsResult{Models: ids}, err
		}),
		protocol.MethodModels: method(func(ctx context.Context, p *providerParams) (protocol.ModelsResult, error) {
			list, err := ss.Models(ctx, p.Provider)
			return protocol.ModelsResult{Models: list}, err
		}),
		protocol.MethodContextWindow: method(func(ctx context.Context, p *providerParams) (protocol.ContextWindowResult, error) {
			return ss.ContextWindow(ctx, p.Provider)
		}),
		protocol.MethodProviderTest: method(func(ctx context.Context, p *providerParams) (protocol.ProviderTestResult, error) {
			return ss.TestProvider(ctx, p.Provider)
		}),
		protocol.MethodChatSend: method(func(ctx context.Context, p *chatParams) (*protocol.ChatResult, error) {
			id, _ := jsonrpc.RequestID(ctx)
			raw, err := json.Marshal(id)
			if err != nil {
				return nil, err
			}
			return ss.Chat(ctx, protocol.ID(raw), p.Provider, p.Request)
		}),

		protocol.MethodWorkspaceOpen: method(func(ctx context.Context, p *protocol.WorkspaceOpenParams) (protocol.WorkspaceSummary, error) {
			return ss.Open(ctx, p.Root, p.Exclude)
		}),
		protocol.MethodWorkspaceRefresh: method(func(ctx context.Context, _ *none) (protocol.WorkspaceSummary, error) {
			return ss.Refresh(ctx)
		}),
		protocol.MethodContextInspect: method(func(ctx context.Context, _ *none) (protocol.WorkspaceSummary, error) {
			return ss.Summary()
		}),
		protocol.MethodContextRetrieve: method(func(ctx context.Context, p *retrieveParams) (protocol.RetrieveResult, error) {
			return ss.Retrieve(ctx, p.Query, p.BudgetTokens, p.FocusPaths)
		}),
		protocol.MethodGraphProject: method(func(ctx context.Context, p *protocol.GraphProjectParams) (protocol.GraphProjectResult, error) {
			return ss.GraphProject(*p)
		}),
		protocol.MethodGraphFile: method(func(ctx context.Context, p *protocol.GraphFileParams) (protocol.GraphFileResult, error) {
			return ss.GraphFile(p.Path)
		}),

		protocol.MethodAgentRun: method(func(ctx context.Context, p *session.RunRequest) (json.RawMessage, error) {
			return ss.Run(ctx, p)
		}),
		protocol.MethodClaudeRun: method(func(ctx context.Context, p *session.ClaudeRequest) (json.RawMessage, error) {
			return ss.RunClaude(ctx, p)
		}),
		protocol.MethodAgentBestOf: method(func(ctx context.Context, p *session.BestOfRequest) (json.RawMessage, error) {
			return ss.BestOf(ctx, p)
		}),
		protocol.MethodAgentSteer: method(func(ctx context.Context, p *protocol.SteerParams) (bool, error) {
			return ss.Steer(p.TaskID, p.Text)
		}),
		protocol.MethodAgentCancelTool: method(func(ctx context.Context, p *protocol.CancelToolParams) (bool, error) {
			return ss.CancelTool(ctx, p.TaskID, p.CallID), nil
		}),
		protocol.MethodAgentCancelSubagent: method(func(ctx context.Context, p *protocol.TaskIDParams) (bool, error) {
			return ss.CancelSubagent(ctx, p.TaskID), nil
		}),
		protocol.MethodAgentTasks: method(func(ctx context.Context, _ *none) (protocol.TasksResult, error) {
			list, err := ss.Tasks()
			return protocol.TasksResult{Tasks: list}, err
		}),
		protocol.MethodAgentTask: method(func(ctx context.Context, p *protocol.TaskIDParams) (session.SavedTask, error) {
			return ss.Task(p.TaskID)
		}),
		protocol.MethodAgentDeleteTask: method(func(ctx context.Context, p *protocol.TaskIDParams) (bool, error) {
			return ss.DeleteTask(p.TaskID)
		}),
		protocol.MethodAgentReplay: method(func(ctx context.Context, p *protocol.TaskIDParams) (protocol.ReplayResult, error) {
			return ss.Replay(ctx, p.TaskID)
		}),
		protocol.MethodPromptRefine: method(func(ctx context.Context, p *session.RefineRequest) (*session.RefineResult, error) {
			return ss.Refine(ctx, p)
		}),

		protocol.MethodToolsList: method(func(ctx context.Context, _ *none) (protocol.ToolsListResult, error) {
			return protocol.ToolsListResult{Tools: ss.Tools()}, nil
		}),
		protocol.MethodToolsCall: method(func(ctx context.Context, p *protocol.ToolsCallParams) (json.RawMessage, error) {
			return ss.CallTool(ctx, p.Name, p.Input)
		}),

		protocol.MethodEditsList: method(func(ctx context.Context, _ *none) (protocol.EditsListResult, error) {
			ops, err := ss.EditsList()
			return protocol.EditsListResult{Operations: ops}, err
		}),
		protocol.MethodEditsPending: method(func(ctx context.Context, _ *none) (protocol.EditsPendingResult, error) {
			files, err := ss.EditsPending()
			return protocol.EditsPendingResult{Files: files}, err
		}),
		protocol.MethodEditsKeep: method(func(ctx context.Context, p *protocol.PathsParams) (protocol.KeepResult, error) {
			paths, err := ss.Keep(p.Paths)
			return protocol.KeepResult{Kept: paths}, err
		}),
		protocol.MethodEditsRevert: method(func(ctx context.Context, p *protocol.PathsParams) (protocol.RevertResult, error) {
			paths, conflicts, err := ss.Revert(ctx, p.Paths)
			return protocol.RevertResult{Reverted: paths, Conflicts: conflicts}, err
		}),
		protocol.MethodEditsUndo: method(func(ctx context.Context, p *protocol.UndoParams) (protocol.UndoResult, error) {
			paths, conflicts, err := ss.Undo(ctx, p.Operation)
			return protocol.UndoResult{Restored: paths, Conflicts: conflicts}, err
		}),

		protocol.MethodMCPConfigure: method(func(ctx context.Context, p *mcpParams) (protocol.MCPStatus, error) {
			return ss.ConfigureMCP(ctx, p.Servers, p.WorkspaceTrusted)
		}),
		protocol.MethodMCPStatus: method(func(ctx context.Context, _ *none) (protocol.MCPStatus, error) {
			return ss.MCPStatus(), nil
		}),
		protocol.MethodConfigHooks: method(func(ctx context.Context, p *hooksParams) (session.HooksResult, error) {
			return ss.ConfigureHooks(p.Hooks, p.WorkspaceTrusted)
		}),
		protocol.MethodSkillsList: method(func(ctx context.Context, _ *none) (protocol.SkillsListResult, error) {
			return ss.Skills(), nil
		}),
		protocol.MethodSkillsResolve: method(func(ctx context.Context, p *protocol.SkillsResolveParams) (protocol.SkillsResolveResult, error) {
			return ss.ResolveSkills(p.Prompt, p.Paths)
		}),

		protocol.MethodWorktreesApply: method(func(ctx context.Context, p *protocol.WorktreeNameParams) (protocol.WorktreeApplyResult, error) {
			return ss.ApplyWorktree(ctx, p.Name)
		}),
		protocol.MethodWorktreesDiscard: method(func(ctx context.Context, p *protocol.WorktreeNameParams) (protocol.WorktreeDiscardResult, error) {
			ok, err := ss.DiscardWorktree(ctx, p.Name)
			return protocol.WorktreeDiscardResult{Discarded: ok}, err
		}),
		protocol.MethodWorktreesList: method(func(ctx context.Context, _ *none) (protocol.WorktreesListResult, error) {
			list, err := ss.Worktrees()
			return protocol.WorktreesListResult{Worktrees: list}, err
		}),
	}
}

// initialize checks protocolVersion (-32002 with data.serverProtocolVersion;
// the client may try again), takes dataDir and sandbox, and marks task
// files left running by a dead runtime as failed (protocol.md initialize,
// addendum §11).
func (s *Server) initialize(ctx context.Context, p *protocol.InitializeParams) (*protocol.InitializeResult, error) {
	if p.ProtocolVersion == nil || *p.ProtocolVersion != protocol.Version {
		return nil, jsonrpc.NewError(jsonrpc.ErrProtocolVersion.Code, "unsupported protocolVersion; this runtime speaks version 1").
			WithData(map[string]int{"serverProtocolVersion": protocol.Version})
	}
	s.mu.Lock()
	st := s.state
	s.mu.Unlock()
	if st != stateUninitialized {
		return nil, jsonrpc.NewError(jsonrpc.ErrInvalidRequest.Code, "initialize was already received")
	}
	dataDir, sandbox, err := s.sess.Init(p.DataDir, p.Sandbox)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.state = stateRunning
	s.mu.Unlock()
	return &protocol.InitializeResult{
		ProtocolVersion: protocol.Version,
		ServerInfo:      protocol.ServerInfo{Name: "task-x-runtime", Version: s.opts.Version},
		Providers:       session.Providers(),
		Sandbox:         sandbox,
		DataDir:         dataDir,
	}, nil
}

// shutdown cancels in-flight work and rejects new requests; the reply to
// shutdown itself still goes out (protocol.md Lifecycle).
func (s *Server) shutdown(ctx context.Context, _ *none) (*none, error) {
	s.mu.Lock()
	s.state = stateShuttingDown
	s.mu.Unlock()
	s.conn.Shutdown(ctx)
	s.sess.Close()
	return nil, nil
}

// Params the protocol types cannot stand for yet: a ProviderConfig, a
// hooks object and MCP servers are checked from their raw JSON (unknown
// fields of a ProviderConfig are rejected, provider.ParseConfig; absent is
// told from empty), budgetTokens from its absence.
type (
	providerParams struct {
		Provider json.RawMessage `json:"provider"`
	}
	chatParams struct {
		Provider json.RawMessage `json:"provider"`
		Request  json.RawMessage `json:"request"`
	}
	retrieveParams struct {
		Query        string   `json:"query"`
		BudgetTokens *int     `json:"budgetTokens"`
		FocusPaths   []string `json:"focusPaths"`
	}
	mcpParams struct {
		Servers          json.RawMessage `json:"servers"`
		WorkspaceTrusted bool            `json:"workspaceTrusted"`
	}
	hooksParams struct {
		Hooks            json.RawMessage `json:"hooks"`
		WorkspaceTrusted bool            `json:"workspaceTrusted"`
	}
)

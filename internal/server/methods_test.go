package server

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/task-x/task-x-runtime/internal/jsonrpc"
	"github.com/task-x/task-x-runtime/internal/protocol"
)

// TestMethodTable: every request method of protocol.md (protocol.Methods)
// has one registration and nothing else has; params that do not fit their type are -32602 naming the
// problem, absent or null params are the zero value, and a method that
// takes none does not read them.
func TestMethodTable(t *testing.T) {
	s := New(nil)
	for _, m := range protocol.Methods {
		_, ok := s.methods[m.Name]
		if want := m.Direction == protocol.ClientRequest; ok != want {
			t.Errorf("%s (%v): registered %v", m.Name, m.Direction, ok)
		}
	}
	for name := range s.methods {
		if m, ok := protocol.MethodByName(name); !ok || m.Direction != protocol.ClientRequest {
			t.Errorf("%s is registered but is no request of the protocol", name)
		}
	}
	ctx := context.Background()
	_, err := s.methods[protocol.MethodWorkspaceOpen].call(ctx, json.RawMessage(`{"root":5}`))
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.ErrInvalidParams.Code {
		t.Fatalf("a root that is a number: %v", err)
	}
	for _, params := range []string{"", "null", `{}`} {
		_, err := s.methods[protocol.MethodWorkspaceOpen].call(ctx, json.RawMessage(params))
		if f := s.sess.Classify(err); err == nil || f.Message != "root is required" {
			t.Errorf("params %q: %v, want root is required", params, err)
		}
	}
	res, err := s.methods[protocol.MethodProviderCaps].call(ctx, json.RawMessage(`[1, 2]`))
	if list, ok := res.([]protocol.ProviderInfo); err != nil || !ok || len(list) == 0 {
		t.Fatalf("provider/capabilities with params it does not take: %v %v", res, err)
	}
	_, err = s.methods[protocol.MethodContextInspect].call(ctx, nil)
	if werr, ok := s.wireError(err).(*jsonrpc.Error); !ok || werr.Code != jsonrpc.ErrNoWorkspace.Code {
		t.Fatalf("context/inspect without a workspace: %v", err)
	}
}

package server

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/task-x/task-x-runtime/internal/jsonrpc"
	"github.com/task-x/task-x-runtime/internal/protocol"
)

// TestMethodTable: every request method of protocol.md has one
// registration; params that do not fit their type are -32602 naming the
// problem, absent or null params are the zero value, and a method that
// takes none does not read them.
func TestMethodTable(t *testing.T) {
	s := New(nil)
	for _, m := range []string{
		protocol.MethodInitialize, protocol.MethodShutdown, protocol.MethodProviderCaps, protocol.MethodListModels,
		protocol.MethodModels, protocol.MethodContextWindow, protocol.MethodProviderTest, protocol.MethodChatSend,
		protocol.MethodWorkspaceOpen, protocol.MethodContextInspect, protocol.MethodAgentRun, protocol.MethodClaudeRun,
		protocol.MethodAgentTasks, protocol.MethodAgentTask, protocol.MethodAgentDeleteTask, protocol.MethodAgentReplay,
		protocol.MethodToolsList, protocol.MethodToolsCall, protocol.MethodAgentSteer, protocol.MethodAgentCancelTool,
		protocol.MethodAgentCancelSubagent, protocol.MethodEditsList, protocol.MethodEditsPending, protocol.MethodEditsKeep,
		protocol.MethodEditsRevert, protocol.MethodEditsUndo, protocol.MethodGraphProject, protocol.MethodGraphFile,
		protocol.MethodWorkspaceRefresh, protocol.MethodMCPConfigure, protocol.MethodMCPStatus, protocol.MethodSkillsList,
		protocol.MethodSkillsResolve, protocol.MethodConfigHooks, protocol.MethodPromptRefine, protocol.MethodContextRetrieve,
		protocol.MethodAgentBestOf, protocol.MethodWorktreesApply, protocol.MethodWorktreesDiscard, protocol.MethodWorktreesList,
	} {
		if _, ok := s.methods[m]; !ok {
			t.Errorf("%s has no registration", m)
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

package agent

import (
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// The loop emits protocol.AgentEvent values (the closed set of
// internal/protocol, docs/events.md), in order, through Options.Emit. The
// helpers below give the domain values the events carry their wire types.

// WireToolCalls is calls as an assistantMessage carries them.
func WireToolCalls(calls []provider.ToolCall) []protocol.ToolCall {
	out := make([]protocol.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = protocol.ToolCall(c)
	}
	return out
}

// WireFileChange is c as fileChanged and done carry it.
func WireFileChange(c tool.FileChange) protocol.FileChange {
	return protocol.FileChange{Path: c.Path, Kind: protocol.FileChangeKind(c.Kind), Added: c.Added, Removed: c.Removed}
}

// WireFileChanges is files as done carries them.
func WireFileChanges(files []tool.FileChange) []protocol.FileChange {
	out := make([]protocol.FileChange, len(files))
	for i, c := range files {
		out[i] = WireFileChange(c)
	}
	return out
}

// FileChanged is the fileChanged event of one change of call callID.
func FileChanged(callID string, c tool.FileChange) protocol.FileChangedEvent {
	return protocol.FileChangedEvent{CallID: callID, Path: c.Path, Kind: protocol.FileChangeKind(c.Kind), Added: c.Added, Removed: c.Removed}
}

// Done is the done event of a summary.
func Done(sum Summary) protocol.DoneEvent {
	return protocol.DoneEvent{Status: protocol.TaskStatus(sum.Status), Error: sum.Error, Text: sum.Text,
		ChangedFiles: WireFileChanges(sum.ChangedFiles), Usage: protocol.Usage(sum.Usage), Model: sum.Model,
		Iterations: sum.Iterations, ToolCalls: sum.ToolCalls}
}

// planEvent is the plan event of an update_plan call.
func planEvent(p tool.PlanUpdate) protocol.PlanEvent {
	steps := make([]protocol.PlanItem, len(p.Plan))
	for i, s := range p.Plan {
		steps[i] = protocol.PlanItem(s)
	}
	return protocol.PlanEvent{Explanation: p.Explanation, Steps: steps}
}

package agent

import (
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// The loop emits protocol.AgentEvent values (the closed set of
// internal/protocol, docs/events.md), in order, through Options.Emit; the
// task layer gives the shared ones (task.Done, task.FileChanged, ...).

// planEvent is the plan event of an update_plan call.
func planEvent(p tool.PlanUpdate) protocol.PlanEvent {
	return protocol.PlanEvent{Explanation: p.Explanation, Steps: p.Plan}
}

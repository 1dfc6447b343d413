package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/tool"
)

// Limits of update_plan.
const (
	planMaxSteps     = 50
	planMaxStepChars = 500
	planMaxNoteChars = 2000
)

// updatePlan is the update_plan tool: the agent keeps a short todo list of
// its task (each step pending, inProgress or completed, at most one
// inProgress) and sends the whole list each time it changes. It changes
// nothing in the workspace (class read); the loop shows the list to the
// client as a `plan` event.
type updatePlan struct{}

func (updatePlan) Spec() tool.Spec {
	return tool.Spec{
		Name: "update_plan",
		Description: "Keep a short plan of the task as a todo list the user sees. Send the whole list every time: " +
			"each step a short sentence with its status, pending, inProgress or completed; at most one step inProgress. " +
			"Use it for tasks of several steps: make the plan first, mark a step inProgress when you start it and " +
			"completed when it is done. Skip it for a one-step task.",
		Permission:  tool.ClassRead,
		InputSchema: updatePlanSchema,
	}
}

// updatePlanInput is update_plan's input; it becomes the tool.PlanUpdate
// of the result.
type updatePlanInput struct {
	Explanation string           `json:"explanation,omitempty" jsonschema:"Optional: why the plan changed."`
	Plan        []updatePlanStep `json:"plan" jsonschema:"The whole plan, in order."`
}

type updatePlanStep struct {
	Step   string `json:"step" jsonschema:"The step, one short sentence."`
	Status string `json:"status" jsonschema:"Where the step stands."`
}

var updatePlanSchema = tool.InputSchema[updatePlanInput](tool.Constraints{
	"plan":        {MinItems: tool.N(1), MaxItems: tool.N(50)},
	"plan.status": {Enum: []string{"pending", "inProgress", "completed"}},
})

func (updatePlan) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var raw updatePlanInput
	if err := decodeInput(input, &raw); err != nil {
		return tool.Result{}, err
	}
	in := tool.PlanUpdate{Explanation: raw.Explanation}
	for _, s := range raw.Plan {
		in.Plan = append(in.Plan, tool.PlanStep(s))
	}
	if len(in.Plan) == 0 || len(in.Plan) > planMaxSteps {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "plan must have 1 to %d steps, got %d", planMaxSteps, len(in.Plan))
	}
	if utf8.RuneCountInString(in.Explanation) > planMaxNoteChars {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "explanation is over %d characters", planMaxNoteChars)
	}
	counts := map[string]int{}
	for i, s := range in.Plan {
		step := strings.TrimSpace(s.Step)
		switch {
		case step == "":
			return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "plan[%d].step is empty", i)
		case utf8.RuneCountInString(step) > planMaxStepChars:
			return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "plan[%d].step is over %d characters", i, planMaxStepChars)
		}
		switch s.Status {
		case "pending", "inProgress", "completed":
		default:
			return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "plan[%d].status must be pending, inProgress or completed, got %q", i, s.Status)
		}
		counts[s.Status]++
		in.Plan[i].Step = step
	}
	if counts["inProgress"] > 1 {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "at most one step can be inProgress, got %d", counts["inProgress"])
	}
	in.Explanation = strings.TrimSpace(in.Explanation)
	return tool.Result{
		Content: fmt.Sprintf("Plan updated: %d steps, %d completed, %d in progress, %d pending.",
			len(in.Plan), counts["completed"], counts["inProgress"], counts["pending"]),
		Data: in,
	}, nil
}

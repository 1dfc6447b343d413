package builtin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/tool"
)

func TestUpdatePlan(t *testing.T) {
	run := func(in string) (tool.Result, error) {
		return updatePlan{}.Run(context.Background(), &tool.Env{}, json.RawMessage(in))
	}
	res, err := run(`{"explanation":" found the bug ","plan":[{"step":" read the handler ","status":"completed"},{"step":"fix it","status":"inProgress"},{"step":"test","status":"pending"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := res.Data.(tool.PlanUpdate)
	if !ok || p.Explanation != "found the bug" || len(p.Plan) != 3 || p.Plan[0] != (tool.PlanStep{Step: "read the handler", Status: "completed"}) ||
		res.Content != "Plan updated: 3 steps, 1 completed, 1 in progress, 1 pending." {
		t.Fatalf("%+v", res)
	}
	for in, want := range map[string]string{
		`{"plan":[]}`: "1 to 50 steps",
		`{"plan":[{"step":"a","status":"done"}]}`:                                          "status must be",
		`{"plan":[{"step":"  ","status":"pending"}]}`:                                      "step is empty",
		`{"plan":[{"step":"a","status":"inProgress"},{"step":"b","status":"inProgress"}]}`: "at most one",
		`{"plan":[{"step":"a","status":"pending"}],"extra":1}`:                             "",
	} {
		_, err := run(in)
		te, ok := tool.AsError(err)
		if !ok || te.Kind != tool.ErrInvalidInput || !strings.Contains(te.Message, want) {
			t.Errorf("%s: %v", in, err)
		}
	}
}

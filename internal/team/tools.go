package team

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/worktree"
)

// The team tools of a lead task (protocol.md Team mode, addendum §4).
// Their schemas are the ones below; docs/team.md lists them.
//
// run_subagent and run_plan are of class edit: they start agents that
// change files (in worktrees) and merge into the working tree, so the
// policy asks before them as before an edit (allowAll, acceptEdits and
// allow rules let them run). The subagents ask for their own calls with
// their own task ids. worktree_apply writes the working tree (edit);
// worktree_discard removes a worktree (destructive).

var runSubagentSchema = tool.InputSchema[runSubagentInput](nil)

var runPlanSchema = tool.InputSchema[PlanInput](tool.Constraints{
	"steps": {MinItems: tool.N(1), MaxItems: tool.N(12)},
})

var worktreeNameSchema = tool.InputSchema[worktreeNameInput](nil)

type runSubagentTool struct{ s *session }

// runSubagentInput is run_subagent's input.
type runSubagentInput struct {
	Role      string `json:"role" jsonschema:"research, implementation, testing, review or documentation (common aliases such as code, qa, docs, reviewer are accepted)"`
	Objective string `json:"objective" jsonschema:"What the subagent must do: a complete, self-contained instruction"`
	Context   string `json:"context,omitempty" jsonschema:"Anything else it needs: findings so far, files, constraints"`
}

// worktreeNameInput is the input of worktree_apply and worktree_discard.
type worktreeNameInput struct {
	Name string `json:"name" jsonschema:"The worktree name a subagent or plan step reported"`
}

func (t *runSubagentTool) Spec() tool.Spec {
	return tool.Spec{Name: "run_subagent", Permission: tool.ClassEdit, InputSchema: runSubagentSchema,
		Description: "Run one subagent with a role and an objective and wait for its report. Writing roles (implementation, testing, documentation) " +
			"work in their own git worktree: their change is committed there and NOT merged; merge it with worktree_apply or drop it with " +
			"worktree_discard. Read-only roles (research, review) read the working tree. A review ends with task-x-findings."}
}

func (t *runSubagentTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in runSubagentInput
	if err := decodeInput(input, &in); err != nil {
		return tool.Result{}, err
	}
	role, err := ParseRole(in.Role)
	if err != nil {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "invalid input: role: %v", err)
	}
	if strings.TrimSpace(in.Objective) == "" {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "objective is required")
	}
	s := t.s
	res := s.lead.Subagents.Run(ctx, s.spec(role, strings.TrimSpace(in.Objective), strings.TrimSpace(in.Context), "", nil))
	s.ran(res)
	kept := res.Dir != "" && !s.dropEmpty(ctx, res)
	return tool.Result{Content: subagentText(res, kept), Data: subagentData(res, kept)}, nil
}

func subagentText(res Result, kept bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Subagent %s (%s, task %s): %s", res.Name, res.Role, res.TaskID, res.Status)
	if res.Error != nil {
		fmt.Fprintf(&b, ": %s", *res.Error)
	}
	b.WriteString("\n")
	if kept {
		fmt.Fprintf(&b, "Its change is in worktree %s, not merged: %d file(s), +%d −%d:", res.Name, len(res.Change.Files), res.Change.Added, res.Change.Removed)
		for _, f := range res.Change.Files {
			fmt.Fprintf(&b, " %s", f.Path)
		}
		fmt.Fprintf(&b, "\nMerge it with worktree_apply {\"name\": %q} or drop it with worktree_discard.\n", res.Name)
	} else if res.Role.Writes() {
		b.WriteString("It changed no file.\n")
	}
	if len(res.Findings) > 0 {
		fmt.Fprintf(&b, "Findings: %d (also shown to the user).\n", len(res.Findings))
	}
	if res.Report != "" {
		b.WriteString("\nReport:\n")
		b.WriteString(cutText(res.Report, maxReportInResult))
		b.WriteString("\n")
	}
	return b.String()
}

func subagentData(res Result, kept bool) map[string]any {
	var wt any
	if kept {
		wt = res.Name
	}
	files := res.Change.Files
	if files == nil {
		files = []worktree.Stat{}
	}
	d := map[string]any{"name": res.Name, "taskId": res.TaskID, "role": res.Role, "status": res.Status, "error": res.Error,
		"report": res.Report, "worktree": wt, "files": files, "added": res.Change.Added, "removed": res.Change.Removed,
		"costUsd": res.CostUSD, "tokens": res.Tokens}
	if res.Role == Review {
		d["findings"] = res.Findings
	}
	return d
}

type runPlanTool struct{ s *session }

func (t *runPlanTool) Spec() tool.Spec {
	return tool.Spec{Name: "run_plan", Permission: tool.ClassEdit, InputSchema: runPlanSchema,
		Description: "Run a plan of 1 to 12 subagent steps. A step starts when the steps in its dependsOn completed (several at a time) and gets " +
			"their reports; a writing step starts from the changes of its writing ancestors. A step whose dependency did not complete is skipped. " +
			"At the end the writing steps are merged into the working tree in dependency order (pending the user's review); a step that " +
			"conflicts keeps its worktree for worktree_apply or worktree_discard."}
}

func (t *runPlanTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	pl, err := t.Plan(ctx, env, input)
	if err != nil {
		return tool.Result{}, err
	}
	return pl.Apply(ctx)
}

// Plan checks the plan before the user is asked (tool.Previewer): a plan
// that would be refused fails without an approval, and the approval shows
// the steps in the order they can run.
func (t *runPlanTool) Plan(ctx context.Context, env *tool.Env, input json.RawMessage) (*tool.Plan, error) {
	p, err := ParsePlan(input, roleLookup)
	if err != nil {
		return nil, err
	}
	return &tool.Plan{Preview: planPreview(p, t.s.lead.MaxParallel), Apply: func(ctx context.Context) (tool.Result, error) {
		res, changes, ops := t.s.runPlan(ctx, p, tool.CallID(ctx))
		out := tool.Result{Content: res.Text(), Data: res, Changes: changes}
		if len(ops) > 0 {
			out.Operation, out.Operations = ops[0], ops[1:]
		}
		return out, nil
	}}, nil
}

// planPreview is the approval's text of a plan: its steps in dependency
// order with their roles, dependencies and objectives.
func planPreview(p *Plan, maxParallel int) string {
	if maxParallel <= 0 {
		maxParallel = DefaultMaxParallel
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Run a plan of %d step(s), at most %d at a time", len(p.Steps), maxParallel)
	if p.Merge {
		b.WriteString("; the writing steps are merged into the working tree at the end (pending review):\n")
	} else {
		b.WriteString("; nothing is merged (the writing steps keep their worktrees):\n")
	}
	for i, s := range p.Order() {
		kind := "reads the working tree"
		if s.Writes {
			kind = "writes in its own worktree"
		}
		fmt.Fprintf(&b, "\n%d. %s (%s, %s)", i+1, s.ID, s.Role, kind)
		if len(s.DependsOn) > 0 {
			fmt.Fprintf(&b, " after %s", strings.Join(s.DependsOn, ", "))
		}
		fmt.Fprintf(&b, ": %s\n", cutText(s.Objective, 500))
	}
	return b.String()
}

type worktreeApplyTool struct{ s *session }

func (t *worktreeApplyTool) Spec() tool.Spec {
	return tool.Spec{Name: "worktree_apply", Permission: tool.ClassEdit, InputSchema: worktreeNameSchema,
		Description: "Merge a task-x worktree's committed change into the working tree through the edit log (pending the user's review, " +
			"undoable). A file that does not merge cleanly writes nothing and keeps the worktree; once applied, the worktree is removed."}
}

func (t *worktreeApplyTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	name, err := worktreeName(input)
	if err != nil {
		return tool.Result{}, err
	}
	res, changes, err := t.s.apply(ctx, name)
	if err != nil {
		return tool.Result{}, worktreeError(name, err)
	}
	if !res.Applied {
		msg := "the change does not apply to the working tree"
		if res.Error != nil {
			msg = *res.Error
		}
		return tool.Result{}, tool.Errorf(tool.ErrStale, "worktree %s was not applied and is kept: %s", name, msg)
	}
	out := tool.Result{Data: res, Changes: changes}
	if res.Operation != nil {
		out.Operation = *res.Operation
	}
	if len(res.Changed) == 0 {
		out.Content = fmt.Sprintf("Worktree %s had nothing to change in the working tree; it was removed.", name)
	} else {
		out.Content = fmt.Sprintf("Applied worktree %s (pending review): %s. The worktree was removed.", name, strings.Join(res.Changed, ", "))
	}
	return out, nil
}

type worktreeDiscardTool struct{ s *session }

func (t *worktreeDiscardTool) Spec() tool.Spec {
	return tool.Spec{Name: "worktree_discard", Permission: tool.ClassDestructive, InputSchema: worktreeNameSchema,
		Description: "Remove a task-x worktree and its branch without merging its change."}
}

func (t *worktreeDiscardTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	name, err := worktreeName(input)
	if err != nil {
		return tool.Result{}, err
	}
	if err := t.s.worktrees().Discard(ctx, name); err != nil {
		return tool.Result{}, worktreeError(name, err)
	}
	return tool.Result{Content: fmt.Sprintf("Worktree %s was removed.", name), Data: map[string]any{"discarded": true}}, nil
}

func worktreeName(input json.RawMessage) (string, error) {
	var in worktreeNameInput
	if err := decodeInput(input, &in); err != nil {
		return "", err
	}
	name := strings.TrimSpace(in.Name)
	if !worktree.ValidName(name) {
		return "", tool.Errorf(tool.ErrInvalidInput, "name %q is not a task-x worktree name", in.Name)
	}
	return name, nil
}

func worktreeError(name string, err error) error {
	if errors.Is(err, worktree.ErrUnknown) {
		return tool.Errorf(tool.ErrNotFound, "no task-x worktree is called %s", name)
	}
	return tool.Errorf(tool.ErrIO, "worktree %s: %v", name, err)
}

// decodeInput decodes a tool input object, refusing unknown fields.
func decodeInput(input json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return tool.Errorf(tool.ErrInvalidInput, "input: %v", err)
	}
	return nil
}

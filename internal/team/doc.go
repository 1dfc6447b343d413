// Package team owns team mode and best-of-N: subagents run as tasks of the
// task layer (internal/task) in the role's git worktree (internal/worktree)
// or on the main tree, the lead agent's team tools (run_subagent, run_plan,
// worktree_apply, worktree_discard), the plan scheduler (plan.go: steps by
// their dependencies, at most maxParallel at a time, reports and committed
// patches handed down, skips, merges through the edit log), review findings
// (findings.go), the subagents' costs in the lead's metrics (metrics.go),
// agent/cancelSubagent and agent/bestOf. Front ends decode their params and
// call it; it knows no wire types.
//
// Subagents (subagent.go, roles.go): a subagent is a task.Request with its
// own task id, run by the front end's task.Runner. A writing role
// (implementation, testing, documentation) gets its own git worktree at
// the lead's HEAD (seeded with Spec.Seed's committed changes) and a
// project opened on it: tools, sandbox, edit checks and validations are
// rooted there, and its work is committed when it ends. A read-only role
// (research, review) reads the main project with read tools only (dir
// null). Every event of the subagent reaches the lead's Emit wrapped as
// `subagent { name, taskId, event }`, between `subagentStarted` and
// `subagentFinished`. Each subagent runs under a context of its own:
// Runner.Cancel ends it and its command trees, and cancelling the lead's
// context ends every subagent. The API:
//
//	r := &team.Runner{Tasks: taskRunner, Main: proj, Worktrees: mgr, Env: envFor}
//	res := r.Run(ctx, team.Spec{Role: team.Implementation, Objective: "...",
//		Engine: engine, Kind: "openai", Model: "gpt-x", Policy: pol, Emit: leadEmit})
//	r.Cancel(res.TaskID) // agent/cancelSubagent, from another goroutine
//	out, err := r.BestOf(ctx, team.BestOfRequest{...}) // agent/bestOf
//
// Source: ../shared/spec/protocol.md (Team mode; Best of N; Costs; Review
// findings; agent/cancelSubagent, worktrees/*) and addendum §4, §7, §12.
// docs/team.md records the decisions.
package team

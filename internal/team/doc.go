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
// Source: ../shared/spec/protocol.md (Team mode; Best of N; Costs; Review
// findings; agent/cancelSubagent, worktrees/*) and addendum §4, §7, §12.
// docs/team.md records the decisions.
package team

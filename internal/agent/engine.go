package agent

import (
	"context"

	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/validate"
)

// Engine is the runtime's own agent loop as a task.Engine: the provider,
// its routes and fallbacks, prices and limits are the engine's; everything
// else comes from the Job.
type Engine struct {
	Provider  provider.Provider
	Routes    []Route
	Fallbacks []provider.Provider
	Prices    []Price
	Limits    Limits
	Windows   *provider.WindowCache
	// Classify gives a prompt's task kind for Routes.
	Classify func(prompt string) string
	// Validation configures the checks at the final answer (addendum
	// §12); the agent runs them.
	Validation validate.Config
	// WaitTools waits for tools still joining the registry (MCP servers
	// starting) and returns warnings (Options.WaitTools).
	WaitTools func(ctx context.Context) []string
	// Redact removes the runtime's keys from check output.
	Redact func(string) string
}

// Run runs the agent loop for job.
func (e *Engine) Run(ctx context.Context, job *task.Job) (task.Summary, []provider.Message) {
	ctl := NewControl()
	job.Attach(ctl)
	return Run(ctx, Params{
		TaskID:     job.TaskID,
		Prompt:     job.Prompt,
		ChatMode:   job.ChatMode,
		Images:     job.Images,
		Policy:     job.Policy,
		System:     job.System,
		Excerpts:   job.Excerpts,
		History:    job.History,
		Limits:     e.Limits,
		Skills:     job.Skills,
		Validation: e.Validation,
	}, Options{
		Provider:  e.Provider,
		Tools:     job.Tools,
		Env:       job.Env,
		Approve:   job.Approve,
		Emit:      job.Emit,
		Logger:    job.Logger,
		Control:   ctl,
		Routes:    e.Routes,
		Fallbacks: e.Fallbacks,
		Prices:    e.Prices,
		Windows:   e.Windows,
		Classify:  e.Classify,
		Hooks:     job.Hooks,
		WaitTools: e.WaitTools,
		Redact:    e.Redact,
	})
}

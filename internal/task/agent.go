package task

import (
	"context"

	"github.com/task-x/task-x-runtime/internal/agent"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/validate"
)

// AgentEngine is the runtime's own agent loop (internal/agent) as an
// Engine: the provider, its routes and fallbacks, prices and limits are
// the engine's; everything else comes from the Job.
type AgentEngine struct {
	Provider  provider.Provider
	Routes    []agent.Route
	Fallbacks []provider.Provider
	Prices    []agent.Price
	Limits    agent.Limits
	Windows   *provider.WindowCache
	// Classify gives a prompt's task kind for Routes.
	Classify func(prompt string) string
	// Validation configures the checks at the final answer (addendum
	// §12); the agent runs them.
	Validation validate.Config
	// WaitTools waits for tools still joining the registry (MCP servers
	// starting) and returns warnings (agent.Options.WaitTools).
	WaitTools func(ctx context.Context) []string
	// Redact removes the runtime's keys from check output.
	Redact func(string) string
}

// Run runs the agent loop for job.
func (e *AgentEngine) Run(ctx context.Context, job *Job) (agent.Summary, []provider.Message) {
	ctl := agent.NewControl()
	job.Attach(ctl)
	return agent.Run(ctx, agent.Params{
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
	}, agent.Options{
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

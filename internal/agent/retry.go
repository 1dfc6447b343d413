package agent

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
)

// RetryPolicy bounds the loop's retries of one model call (chat/send itself
// never retries, protocol.md Errors). The wait before retry n (from 1) is a
// random duration in [d/2, d) with d = min(Cap, Base·2^(n-1)); a Retry-After
// from the provider replaces it when present. A Retry-After longer than
// MaxRetryAfter is not waited for: the provider has failed for good and the
// next fallback takes over.
type RetryPolicy struct {
	MaxRetries    int           // default 3 (so at most 4 calls)
	Base          time.Duration // default 1 s
	Cap           time.Duration // default 30 s
	MaxRetryAfter time.Duration // default 2 minutes
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxRetries <= 0 {
		p.MaxRetries = 3
	}
	if p.Base <= 0 {
		p.Base = time.Second
	}
	if p.Cap <= 0 {
		p.Cap = 30 * time.Second
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 2 * time.Minute
	}
	return p
}

// delay is the wait before retry n (from 1), and false when the provider's
// Retry-After is too long to wait for.
func (p RetryPolicy) delay(n int, retryAfter time.Duration) (time.Duration, bool) {
	if retryAfter > 0 {
		return retryAfter, retryAfter <= p.MaxRetryAfter
	}
	d := p.Base << (n - 1)
	if d > p.Cap || d <= 0 {
		d = p.Cap
	}
	return d/2 + rand.N(d/2+1), true
}

// Route is one agent/run `routes` entry: prompts of these task kinds
// (addendum §10: question, codeModification, bugFix, refactoring, testing,
// documentation, review, planning) go to Provider.
type Route struct {
	Kinds    []string
	Provider provider.Provider
}

// chain returns the providers of the task in the order they take over: the
// route for kind (else Options.Provider), then Options.Fallbacks.
func chain(opts Options, kind string) []provider.Provider {
	first := opts.Provider
	if kind != "" {
		for _, rt := range opts.Routes {
			for _, k := range rt.Kinds {
				if k == kind && rt.Provider != nil {
					first = rt.Provider
				}
			}
			if first != opts.Provider {
				break
			}
		}
	}
	var out []provider.Provider
	if first != nil {
		out = append(out, first)
	}
	for _, f := range opts.Fallbacks {
		if f != nil {
			out = append(out, f)
		}
	}
	return out
}

func modelName(p provider.Provider) string {
	cfg := p.Config()
	return string(cfg.Kind) + "/" + cfg.Model
}

// callModel runs one model turn with retries, the image fallback and
// provider fallbacks. The error is the last provider's, for good.
func (r *run) callModel(ctx context.Context, specs []provider.ToolSpec) (*provider.Result, error) {
	imageRetried := false
	for {
		res, err := r.streamWithRetry(ctx, specs)
		if err == nil || ctx.Err() != nil {
			return res, err
		}
		pe := provider.AsError(err)
		if pe.Kind == provider.KindInvalidRequest && !imageRetried && hasImages(r.messages) {
			// An image the provider rejects must not stay in the history
			// and break every later turn.
			imageRetried = true
			n := stripImages(r.messages)
			r.emit(protocol.WarningEvent{Message: fmt.Sprintf("the provider rejected the request holding %d image(s); they were replaced by a note and the call is retried", n)})
			r.log.Info("images removed after invalidRequest", "images", n)
			continue
		}
		if r.cur+1 >= len(r.chain) {
			return nil, err
		}
		from := modelName(r.prov)
		r.log.Warn("provider failed for good; switching", "kind", pe.Kind, "status", pe.Status)
		r.use(ctx, r.cur+1)
		r.emit(protocol.ModelSwitchedEvent{From: from, To: modelName(r.prov), Reason: string(pe.Kind) + ": " + pe.Message})
		r.emit(protocol.ModelEvent{Provider: string(r.prov.Config().Kind), Model: r.sum.Model})
	}
}

// streamWithRetry calls the current provider, retrying retryable errors.
func (r *run) streamWithRetry(ctx context.Context, specs []provider.ToolSpec) (*provider.Result, error) {
	pol := r.opts.Retry.withDefaults()
	for n := 1; ; n++ {
		res, err := r.stream(ctx, specs)
		if err == nil || ctx.Err() != nil {
			return res, err
		}
		pe := provider.AsError(err)
		if !pe.Retryable() || n > pol.MaxRetries {
			return nil, err
		}
		d, ok := pol.delay(n, pe.RetryAfter)
		if !ok {
			return nil, err
		}
		r.emit(protocol.RetryEvent{Attempt: n, MaxAttempts: pol.MaxRetries, DelayMs: d.Milliseconds(),
			Kind: protocol.ProviderErrorKind(pe.Kind), Status: pe.Status, Message: pe.Message})
		r.log.Info("retrying model call", "attempt", n, "maxAttempts", pol.MaxRetries, "delayMs", d.Milliseconds(),
			"kind", pe.Kind, "status", pe.Status)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, provider.Errorf(provider.KindCancelled, "cancelled")
		case <-t.C:
		}
	}
}

// stream runs one call of the current provider, relaying text and thinking
// deltas.
func (r *run) stream(ctx context.Context, specs []provider.ToolSpec) (*provider.Result, error) {
	req := &provider.Request{System: r.system(), Messages: r.messages, Tools: specs, MaxTokens: r.maxTokens,
		ContextWindow: r.window}
	r.lastRaw = r.rawEstimate()
	start := time.Now()
	r.partial.Reset()
	res, err := r.prov.Stream(ctx, req, func(ev provider.Event) {
		switch ev.Type {
		case provider.EventTextDelta:
			r.partial.WriteString(ev.Text)
			r.emit(protocol.TextDeltaEvent{Text: ev.Text})
		case provider.EventThinkingDelta:
			r.emit(protocol.ThinkingDeltaEvent{Text: ev.Text})
		}
	})
	if err == nil && res == nil {
		err = provider.Errorf(provider.KindProtocol, "the provider returned no result")
	}
	if err != nil {
		return nil, err
	}
	attrs := []any{"iteration", r.sum.Iterations, "toolCalls", len(res.ToolCalls), "stopReason", res.StopReason,
		"durationMs", time.Since(start).Milliseconds()}
	if res.UsageReported {
		attrs = append(attrs, "inputTokens", res.Usage.InputTokens, "outputTokens", res.Usage.OutputTokens)
	} else {
		attrs = append(attrs, "usage", "not reported")
	}
	r.log.Info("model call", attrs...)
	return res, nil
}

func hasImages(msgs []provider.Message) bool {
	for _, m := range msgs {
		for _, p := range m.Content {
			if p.Type == provider.PartImage {
				return true
			}
		}
	}
	return false
}

// imageRemovedNote replaces an image the provider would not accept.
const imageRemovedNote = "[An image was attached here, but the model provider could not accept it, so it was removed.]"

// stripImages replaces every image part with a text note and returns how
// many there were.
func stripImages(msgs []provider.Message) int {
	n := 0
	for i := range msgs {
		for j, p := range msgs[i].Content {
			if p.Type == provider.PartImage {
				msgs[i].Content[j] = provider.Part{Type: provider.PartText, Text: imageRemovedNote}
				n++
			}
		}
	}
	return n
}

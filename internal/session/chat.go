package session

import (
	"context"
	"encoding/json"
	"time"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
)

// Chat is chat/send: one model call with the provider cfg for the
// ChatRequest request, its events sent as chat/event with requestID from
// their own goroutine (text deltas merged while the client is written to,
// keys redacted across deltas), answering their fold {text, toolCalls,
// stopReason, usage}. It never retries (protocol.md chat/send, Errors).
func (s *Session) Chat(ctx context.Context, requestID protocol.ID, cfg, request json.RawMessage) (*protocol.ChatResult, error) {
	prov, err := s.parseProvider(cfg)
	if err != nil {
		return nil, err
	}
	if len(request) == 0 || string(request) == "null" {
		return nil, &provider.Error{Kind: provider.KindInvalidRequest, Field: "request", Message: "request is required"}
	}
	req, err := provider.ParseRequest(request)
	if err != nil {
		return nil, err
	}
	detach(ctx)
	out := newChatRelay(func(ev provider.Event) {
		s.notify(ctx, protocol.MethodChatEvent, protocol.ChatEventParams{RequestID: requestID, Event: wireChatEvent(ev)})
	})
	// Every key the runtime holds is redacted from what it emits (addendum
	// §11), also when the model streams one in pieces.
	redact := newDeltaRedactor(s.secrets)
	start := time.Now()
	res, err := prov.Stream(ctx, req, func(ev provider.Event) { redact.chatEvents(ev, out.push) })
	redact.flush(func(typ, text string) { out.push(provider.Event{Type: provider.EventType(typ), Text: text}) })
	out.close()
	if err != nil {
		return nil, err
	}
	// Each model call logs its token counts at info (protocol.md Framing), as
	// agent/run's calls do; counts the provider did not report are left out.
	attrs := []any{"method", protocol.MethodChatSend, "model", prov.Config().Model, "toolCalls", len(res.ToolCalls),
		"stopReason", res.StopReason, "durationMs", time.Since(start).Milliseconds()}
	if res.UsageReported {
		attrs = append(attrs, "inputTokens", res.Usage.InputTokens, "outputTokens", res.Usage.OutputTokens)
	} else {
		attrs = append(attrs, "usage", "not reported")
	}
	s.log.Info("model call", attrs...)
	res.Text = s.secrets.Redact(res.Text)
	if res.ToolCalls == nil {
		res.ToolCalls = []provider.ToolCall{}
	}
	for i := range res.ToolCalls {
		res.ToolCalls[i].Input = json.RawMessage(s.secrets.Redact(string(res.ToolCalls[i].Input)))
	}
	return &protocol.ChatResult{Text: res.Text, ToolCalls: res.ToolCalls, StopReason: res.StopReason, Usage: res.ReportedUsage()}, nil
}

// wireChatEvent is a provider.Event as a protocol.md chat/event event.
func wireChatEvent(ev provider.Event) protocol.ChatEvent {
	switch ev.Type {
	case provider.EventTextDelta:
		return protocol.ChatTextDeltaEvent{Text: ev.Text}
	case provider.EventThinkingDelta:
		return protocol.ChatThinkingDeltaEvent{Text: ev.Text}
	case provider.EventToolCall:
		return protocol.ChatToolCallEvent{ID: ev.ToolCall.ID, Input: ev.ToolCall.Input, Name: ev.ToolCall.Name}
	case provider.EventUsage:
		return protocol.ChatUsageEvent{Usage: ev.Usage}
	case provider.EventDone:
		return protocol.ChatDoneEvent{StopReason: ev.StopReason}
	}
	return protocol.RawEvent(mustJSON(map[string]any{"type": ev.Type}))
}

// newChatRelay relays provider events, merging text (and thinking) deltas
// that pile up while the client is being written to.
func newChatRelay(send func(provider.Event)) *relay[provider.Event] {
	return newRelay(send,
		func(e provider.Event) (string, bool) {
			return e.Text, e.Type == provider.EventTextDelta || e.Type == provider.EventThinkingDelta
		},
		func(a, b provider.Event) bool { return a.Type == b.Type },
		func(first provider.Event, text string) provider.Event { first.Text = text; return first })
}

package session

import (
	"context"
	"errors"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/task"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// Kind is what a failed call was, as protocol.md Errors names it; a front
// end maps it to its own code.
type Kind int

const (
	KindInternal      Kind = iota // -32603
	KindInvalidParams             // -32602
	KindNoWorkspace               // -32004
	KindProvider                  // -32001
	KindTool                      // -32005
	KindCancelled                 // -32800
)

// Failure is an error as the client sees it: its kind, its message and its
// data (nil for none), every key the session holds redacted.
type Failure struct {
	Kind    Kind
	Message string
	Data    any
}

// Classify maps an error of a session method: an *InvalidError or a task
// layer's invalid request is invalid params; ErrNoWorkspace; a
// *provider.Error (local validation with a field is invalid params with
// {kind, message, field}; cancelled; else a ProviderError); a *tool.Error
// with {kind, message}; a cancelled context; anything else internal.
func (s *Session) Classify(err error) Failure {
	red := s.secrets.Redact
	var inv *InvalidError
	if errors.As(err, &inv) {
		return Failure{Kind: KindInvalidParams, Message: red(inv.Msg)}
	}
	var ie *task.InvalidError
	if errors.As(err, &ie) {
		return Failure{Kind: KindInvalidParams, Message: red(ie.Msg)}
	}
	if errors.Is(err, ErrNoWorkspace) {
		return Failure{Kind: KindNoWorkspace, Message: ErrNoWorkspace.Error()}
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		msg := red(pe.Message)
		if (pe.Kind == provider.KindInvalidConfig || pe.Kind == provider.KindInvalidRequest) && pe.Field != "" {
			return Failure{Kind: KindInvalidParams, Message: msg,
				Data: map[string]string{"kind": string(pe.Kind), "message": msg, "field": pe.Field}}
		}
		if pe.Kind == provider.KindCancelled {
			return cancelled()
		}
		return Failure{Kind: KindProvider, Message: msg, Data: s.providerErrorData(pe)}
	}
	var te *tool.Error
	if errors.As(err, &te) {
		msg := red(te.Message)
		return Failure{Kind: KindTool, Message: msg, Data: protocol.ToolErrorData{Kind: te.Kind, Message: msg}}
	}
	if errors.Is(err, context.Canceled) {
		return cancelled()
	}
	return Failure{Kind: KindInternal, Message: red(err.Error())}
}

func cancelled() Failure {
	return Failure{Kind: KindCancelled, Message: "request cancelled", Data: map[string]string{"kind": "cancelled"}}
}

func (s *Session) providerErrorData(pe *provider.Error) protocol.ProviderError {
	d := protocol.ProviderError{Kind: protocol.ProviderErrorKind(pe.Kind), Message: s.secrets.Redact(pe.Message), Retryable: pe.Retryable()}
	if pe.Status != 0 {
		st := pe.Status
		d.Status = &st
	}
	if pe.RetryAfter > 0 {
		ms := pe.RetryAfter.Milliseconds()
		d.RetryAfterMs = &ms
	}
	return d
}

package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/session"
)

// askUser maps agent/askUser (the ask_user tool) to what the client
// offers (docs/acp.md "Questions"):
//   - a client with form elicitation (clientCapabilities.elicitation.form)
//     gets one elicitation/create: a form with a field per question (a
//     radio question a single-select string, a checkbox one a multi-select
//     array), tied to the session and the ask_user tool call; accept gives
//     the answers, decline and cancel dismiss;
//   - else, when every question is a radio one, each is a
//     session/request_permission in turn, one option per label (kind
//     allow_once) and "Skip" (reject_once); Skip or a cancelled outcome
//     dismisses;
//   - else (a checkbox question and no form) the client cannot answer: an
//     error wrapping session.ErrCannotAsk, which ask_user turns into a
//     result saying the user could not be asked.
//
// A failed request is an error (ask_user: dismissed); a cancelled turn
// ends the request ($/cancel_request) and dismisses. ask_user bounds the
// wait (10 min), so the tool never hangs on a client that does not
// answer.
func (a *Agent) askUser(ctx context.Context, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	var p protocol.AskUserParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	s := a.sessionOfTask(p.TaskID)
	if s == nil {
		return nil, errors.New("acp: a question of a task without a session")
	}
	a.mu.Lock()
	form := a.client.Elicitation.Form != nil
	a.mu.Unlock()
	if len(p.Questions) == 0 {
		return answersReply(map[string][]string{})
	}
	callID, _ := s.updates.callRef(p.TaskID, p.CallID)
	if form {
		return a.askByForm(ctx, s, callID, p.Questions)
	}
	for _, q := range p.Questions {
		if q.Kind != protocol.QuestionRadio {
			return nil, fmt.Errorf("%w: question %q takes several answers, and the client offers no form (ACP elicitation) for it", session.ErrCannotAsk, q.ID)
		}
	}
	answers := map[string][]string{}
	for _, q := range p.Questions {
		label, ok, err := a.askByPermission(ctx, s, callID, q)
		if err != nil {
			return nil, err
		}
		if !ok {
			return answersReply(nil)
		}
		answers[q.ID] = []string{label}
	}
	return answersReply(answers)
}

// answersReply is agent/askUser's result: nil answers mean dismissed.
func answersReply(answers map[string][]string) (json.RawMessage, error) {
	if answers == nil {
		return json.RawMessage(`{"answers":null}`), nil
	}
	return json.Marshal(protocol.AskUserResult{Answers: &answers})
}

// askByForm puts every question in one elicitation/create form.
func (a *Agent) askByForm(ctx context.Context, s *acpSession, callID string, qs []protocol.Question) (json.RawMessage, error) {
	props := map[string]any{}
	var required []string
	texts := make([]string, 0, len(qs))
	// Keys the runtime holds never go to the client: the texts and labels
	// are sent redacted and the labels picked mapped back to ours.
	shown := func(q protocol.Question) []string {
		out := make([]string, len(q.Options))
		for i, o := range q.Options {
			out[i] = a.secrets.Redact(o)
		}
		return out
	}
	for _, q := range qs {
		text := a.secrets.Redact(q.Text)
		texts = append(texts, text)
		if q.Kind == protocol.QuestionCheckbox {
			props[q.ID] = map[string]any{"type": "array", "title": text, "items": map[string]any{"type": "string", "enum": shown(q)}}
			continue
		}
		props[q.ID] = map[string]any{"type": "string", "title": text, "enum": shown(q)}
		required = append(required, q.ID)
	}
	schema := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		schema["required"] = required
	}
	msg := texts[0]
	if len(texts) > 1 {
		msg = "The agent asks:\n- " + strings.Join(texts, "\n- ")
	}
	res, err := a.conn.Call(ctx, methodCreateElicitation, map[string]any{
		"sessionId": s.id, "toolCallId": callID, "mode": "form", "message": msg, "requestedSchema": schema,
	})
	if err != nil {
		return nil, err
	}
	var r struct {
		Action  string                     `json:"action"`
		Content map[string]json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, fmt.Errorf("elicitation answer: %w", err)
	}
	if r.Action != "accept" {
		return answersReply(nil) // decline, cancel
	}
	answers := map[string][]string{}
	for _, q := range qs {
		var picked []string
		var one string
		if v := r.Content[q.ID]; json.Unmarshal(v, &one) == nil {
			picked = []string{one}
		} else {
			_ = json.Unmarshal(v, &picked) // a multi-select; anything else is no answer
		}
		labels := shown(q)
		answers[q.ID] = []string{}
		for _, p := range picked {
			if i := slices.Index(labels, p); i >= 0 {
				answers[q.ID] = append(answers[q.ID], q.Options[i])
			}
		}
	}
	return answersReply(answers)
}

// askByPermission asks one radio question with session/request_permission:
// the label picked, or ok false when the user skipped it or the turn was
// cancelled.
func (a *Agent) askByPermission(ctx context.Context, s *acpSession, callID string, q protocol.Question) (label string, ok bool, err error) {
	opts := make([]permissionOption, 0, len(q.Options)+1)
	for i, o := range q.Options {
		opts = append(opts, permissionOption{OptionID: "answer_" + strconv.Itoa(i), Name: a.secrets.Redact(o), Kind: "allow_once"})
	}
	opts = append(opts, permissionOption{OptionID: "skip", Name: "Skip (do not answer)", Kind: "reject_once"})
	text := a.secrets.Redact(q.Text)
	tc := toolCall{ToolCallID: callID, Title: text, Kind: "other", Status: "pending",
		Content: []toolCallContent{textContent(text)}}
	res, err := a.conn.Call(ctx, methodRequestPermission, permissionParams{SessionID: s.id, ToolCall: tc, Options: opts})
	if err != nil {
		return "", false, err
	}
	var r permissionResult
	if err := json.Unmarshal(res, &r); err != nil {
		return "", false, fmt.Errorf("permission answer: %w", err)
	}
	if r.Outcome.Outcome != "selected" {
		return "", false, nil
	}
	i, err := strconv.Atoi(strings.TrimPrefix(r.Outcome.OptionID, "answer_"))
	if !strings.HasPrefix(r.Outcome.OptionID, "answer_") || err != nil || i < 0 || i >= len(q.Options) {
		return "", false, nil // skip, or an option we did not offer
	}
	return q.Options[i], true, nil
}

package acp

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// askScript is a model that calls ask_user with the questions of the
// prompt it is given ("radio", "checkbox", "both"), then answers "done".
func askScript(prompt string, n int) turn {
	if n > 0 {
		return turn{text: "done"}
	}
	radio := map[string]any{"id": "color", "text": "Which color?", "options": []string{"Red", "Blue"}}
	check := map[string]any{"id": "parts", "text": "Which parts?", "kind": "checkbox", "options": []string{"a", "b", "c"}}
	var qs []any
	switch {
	case strings.Contains(prompt, "both"):
		qs = []any{radio, check}
	case strings.Contains(prompt, "checkbox"):
		qs = []any{check}
	default:
		qs = []any{radio}
	}
	return turn{calls: []call{{"ask_user", map[string]any{"questions": qs}}}}
}

// askResultOf is the ask_user tool result the session's updates carry
// (its completed tool_call_update) between two indexes.
func askResultOf(t *testing.T, p *peer, from, to int) map[string]any {
	t.Helper()
	for _, u := range updatesOf(p.updates(from, to), "tool_call_update") {
		if u["status"] != "completed" && u["status"] != "failed" {
			continue
		}
		cs, _ := u["content"].([]any)
		for _, c := range cs {
			s := text(map[string]any{"content": c.(map[string]any)["content"]})
			if i := strings.Index(s, `{"answered"`); i >= 0 {
				s = s[i:]
				s = s[:strings.LastIndex(s, "}")+1]
				var r map[string]any
				if err := json.Unmarshal([]byte(s), &r); err != nil {
					t.Fatalf("ask_user result %q: %v", s, err)
				}
				return r
			}
		}
	}
	t.Fatalf("no ask_user result in the updates: %v", p.updates(from, to))
	return nil
}

func newAskSession(t *testing.T, caps map[string]any, answer func(method string, params json.RawMessage) any) (*peer, string) {
	_, url := newFakeModel(t, askScript)
	p := startAgent(t, testConfig(t, url))
	p.answer = answer
	p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps})
	_, res := p.call("session/new", map[string]any{"cwd": workspace(t), "mcpServers": []any{}})
	var ns struct{ SessionID string }
	json.Unmarshal(res, &ns)
	return p, ns.SessionID
}

func prompt(p *peer, session, text string) (int, msg) {
	return p.reply(p.send("session/prompt", map[string]any{"sessionId": session, "prompt": []any{map[string]any{"type": "text", "text": text}}}))
}

// A client with form elicitation gets every question in one
// elicitation/create form (a radio question a single-select string, a
// checkbox one a multi-select array) tied to the ask_user call; its
// accepted content is the answers; decline dismisses.
func TestAskUserByElicitation(t *testing.T) {
	var mu sync.Mutex
	var forms []json.RawMessage
	action := "accept"
	p, sid := newAskSession(t, map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}, func(method string, params json.RawMessage) any {
		if method != "elicitation/create" {
			t.Errorf("unexpected %s %s", method, params)
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		forms = append(forms, params)
		if action != "accept" {
			return map[string]any{"action": action}
		}
		return map[string]any{"action": "accept", "content": map[string]any{"color": "Blue", "parts": []string{"a", "c", "zz"}}}
	})
	i, m := prompt(p, sid, "ask both")
	if m.Error != nil {
		t.Fatal(m.Error.Message)
	}
	r := askResultOf(t, p, 0, i)
	got, _ := json.Marshal(r)
	if string(got) != `{"answered":true,"answers":[{"question":"Which color?","selected":["Blue"]},{"question":"Which parts?","selected":["a","c"]}]}` {
		t.Fatalf("result: %s", got)
	}
	var f struct {
		SessionID, ToolCallID, Mode, Message string
		RequestedSchema                      struct {
			Type       string
			Properties map[string]struct {
				Type  string
				Title string
				Enum  []string
				Items struct {
					Type string
					Enum []string
				}
			}
			Required []string
		}
	}
	json.Unmarshal(forms[0], &f)
	color, parts := f.RequestedSchema.Properties["color"], f.RequestedSchema.Properties["parts"]
	if f.SessionID != sid || f.ToolCallID == "" || f.Mode != "form" || !strings.Contains(f.Message, "Which color?") ||
		f.RequestedSchema.Type != "object" || color.Type != "string" || color.Title != "Which color?" || strings.Join(color.Enum, ",") != "Red,Blue" ||
		parts.Type != "array" || parts.Items.Type != "string" || strings.Join(parts.Items.Enum, ",") != "a,b,c" ||
		strings.Join(f.RequestedSchema.Required, ",") != "color" {
		t.Fatalf("elicitation/create: %s", forms[0])
	}
	var calls []string
	for _, u := range updatesOf(p.updates(0, i), "tool_call") {
		calls = append(calls, u["toolCallId"].(string))
	}
	if len(calls) != 1 || calls[0] != f.ToolCallID {
		t.Fatalf("the form's toolCallId %q is not the ask_user call %v", f.ToolCallID, calls)
	}
	mu.Lock()
	action = "decline"
	mu.Unlock()
	j, _ := prompt(p, sid, "ask both again")
	if r := askResultOf(t, p, i+1, j); r["answered"] != false || r["unavailable"] != nil {
		t.Fatalf("declined: %v", r)
	}
}

// Without elicitation a radio question is a session/request_permission,
// one option per label and Skip; a checkbox question cannot be asked and
// the tool says so at once; a question left unanswered ends with the
// cancelled turn.
func TestAskUserByPermission(t *testing.T) {
	var mu sync.Mutex
	pick := "answer_1"
	var asked []json.RawMessage
	p, sid := newAskSession(t, nil, func(method string, params json.RawMessage) any {
		if method != "session/request_permission" {
			t.Errorf("unexpected %s %s", method, params)
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, params)
		if pick == "" {
			return noAnswer
		}
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": pick}}
	})
	i, m := prompt(p, sid, "ask radio")
	if m.Error != nil {
		t.Fatal(m.Error.Message)
	}
	if r, _ := json.Marshal(askResultOf(t, p, 0, i)); string(r) != `{"answered":true,"answers":[{"question":"Which color?","selected":["Blue"]}]}` {
		t.Fatalf("result: %s", r)
	}
	var req struct {
		ToolCall struct{ ToolCallID, Title string }
		Options  []struct{ OptionID, Name, Kind string }
	}
	json.Unmarshal(asked[0], &req)
	if req.ToolCall.Title != "Which color?" || len(req.Options) != 3 || req.Options[0] != (struct{ OptionID, Name, Kind string }{"answer_0", "Red", "allow_once"}) ||
		req.Options[2].OptionID != "skip" || req.Options[2].Kind != "reject_once" {
		t.Fatalf("request: %s", asked[0])
	}

	mu.Lock()
	pick = "skip"
	mu.Unlock()
	j, _ := prompt(p, sid, "ask radio again")
	if r := askResultOf(t, p, i+1, j); r["answered"] != false || r["unavailable"] != nil {
		t.Fatalf("skipped: %v", r)
	}

	k, _ := prompt(p, sid, "ask checkbox")
	r := askResultOf(t, p, j+1, k)
	if reason, _ := r["unavailable"].(string); r["answered"] != false || !strings.Contains(reason, "no form") || !strings.Contains(reason, "The user was not asked") {
		t.Fatalf("checkbox without a form: %v", r)
	}
	mu.Lock()
	n := len(asked)
	pick = ""
	mu.Unlock()
	if n != 2 {
		t.Fatalf("%d requests, want 2 (the checkbox question is not asked)", n)
	}

	id := p.send("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "ask radio, no answer"}}})
	p.waitMsg(0, func(m msg) bool {
		mu.Lock()
		defer mu.Unlock()
		return len(asked) == 3
	})
	p.notify("session/cancel", map[string]any{"sessionId": sid})
	_, m = p.reply(id)
	var res struct{ StopReason string }
	json.Unmarshal(m.Result, &res)
	if m.Error != nil || res.StopReason != "cancelled" {
		t.Fatalf("cancelled with a question open: %s %+v", m.Result, m.Error)
	}
}

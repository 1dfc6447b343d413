package acp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/jsonrpc"
	"github.com/task-x/task-x-runtime/internal/protocol"
)

// translator turns one ACP session's agent/event stream into
// session/update notifications (docs/acp.md has the table). It keeps what
// a later update needs: each tool call's title, kind, live output and
// whether it changed files; the team plan; the cost so far; whether this
// turn's answer was cut or streamed.
type translator struct {
	a *Agent
	s *acpSession

	mu       sync.Mutex
	calls    map[string]*callState // by ACP toolCallId
	plan     []planEntry           // a team plan's entries, by step
	steps    map[string]int        // plan step id → entry
	subSteps map[string]string     // subagent task id → its plan step
	costUSD  float64
	cut      bool // the answer was cut at the output token limit
	refused  bool // the provider's content filter stopped the answer (a refusal)
	authFail bool // the lead's model call failed on the provider's auth (401)
	streamed bool // text deltas came since the last assistant message
}

type callState struct {
	tool    string
	taskID  string // the task whose edit log entry holds the diff
	callID  string
	output  string // live output (its tail)
	changed bool   // a fileChanged came
	done    bool   // the first toolFinished of a background command came
}

// Bounds of what one update carries: a call's live output keeps its tail,
// a result's text its head.
const (
	maxOutput     = 64 << 10
	maxResultText = 16 << 10
)

func newTranslator(a *Agent, s *acpSession) *translator {
	return &translator{a: a, s: s, calls: map[string]*callState{}, steps: map[string]int{}, subSteps: map[string]string{}}
}

// begin starts a prompt's turn (calls a cancelled turn left open are
// forgotten).
func (t *translator) begin() {
	t.mu.Lock()
	t.cut, t.refused, t.streamed, t.authFail = false, false, false, false
	clear(t.calls)
	t.mu.Unlock()
}

// taskEnd is what of a task summary decides the stop reason: typed
// fields only (the status, the end reason), the error text only to be
// shown.
type taskEnd struct {
	Status    protocol.TaskStatus    `json:"status"`
	EndReason protocol.TaskEndReason `json:"endReason"`
	Error     *string                `json:"error"`
}

// stopReason maps the end of our task to ACP's from typed values, never
// from message text: completed is end_turn (max_tokens when the last
// answer was cut at the output token limit: the warning of kind
// outputCut; refusal when the provider's content filter stopped it: the
// warning of kind contentFilter), cancelled is cancelled; a failure with
// endReason maxIterations is max_turn_requests, promptRefused (a
// UserPromptSubmit hook) is refusal; any other failure is an error with its message
// (auth_required when the model call failed with the provider error kind
// auth).
func (t *translator) stopReason(end taskEnd) (any, error) {
	t.mu.Lock()
	cut, refused, authFail := t.cut, t.refused, t.authFail
	t.mu.Unlock()
	switch {
	case end.Status == protocol.TaskCompleted && refused:
		return promptResult{StopReason: "refusal"}, nil
	case end.Status == protocol.TaskCompleted && cut:
		return promptResult{StopReason: "max_tokens"}, nil
	case end.Status == protocol.TaskCompleted:
		return promptResult{StopReason: "end_turn"}, nil
	case end.Status == protocol.TaskCancelled:
		return promptResult{StopReason: "cancelled"}, nil
	case end.Status == protocol.TaskFailed && end.EndReason == protocol.EndMaxIterations:
		return promptResult{StopReason: "max_turn_requests"}, nil
	case end.Status == protocol.TaskFailed && end.EndReason == protocol.EndPromptRefused:
		return promptResult{StopReason: "refusal"}, nil
	}
	status := end.Status
	msg := ""
	if end.Error != nil {
		msg = *end.Error
	}
	if msg == "" {
		msg = "the task " + string(status)
	}
	if authFail && status == protocol.TaskFailed {
		// The provider refused the key: ACP's auth_required, so the
		// client offers authenticate.
		return nil, jsonrpc.NewError(codeAuthRequired, msg)
	}
	return nil, jsonrpc.NewError(jsonrpc.ErrInternal.Code, msg)
}

// event maps one event of task taskID (the session's own, or a subagent's
// wrapped in subagent events).
func (t *translator) event(taskID string, raw json.RawMessage, replay bool) {
	ev, err := protocol.DecodeAgentEvent(raw)
	if err != nil || ev == nil {
		return
	}
	t.mu.Lock()
	ups := t.mapEvent(ev, taskID, "", "", replay)
	t.mu.Unlock()
	for _, u := range ups {
		t.a.update(t.s.id, u)
	}
}

// mapEvent returns the updates of one event; prefix and label tell a
// subagent's calls apart ("" for the lead's). Called with t.mu held.
func (t *translator) mapEvent(ev protocol.AgentEvent, taskID, prefix, label string, replay bool) []any {
	chunk := func(kind, text string) []any {
		if text == "" {
			return nil
		}
		return []any{contentChunk{SessionUpdate: kind, Content: textBlock(text)}}
	}
	sub := prefix != ""
	switch e := ev.(type) {
	case protocol.UserMessageEvent:
		if !sub {
			return chunk("user_message_chunk", e.Text)
		}
	case protocol.IterationEvent:
		t.streamed = false
	case protocol.TextDeltaEvent:
		if !sub {
			t.streamed = true
			return chunk("agent_message_chunk", e.Text)
		}
	case protocol.ThinkingDeltaEvent:
		if !sub {
			return chunk("agent_thought_chunk", e.Text)
		}
	case protocol.AssistantMessageEvent:
		if !sub {
			// A new answer: the stop reason is of the last one (its
			// warning, if any, follows it).
			t.cut, t.refused = false, false
		}
		// Live, the deltas carried the text; a replay (deltas are not
		// recorded) or a provider that sent none gets it whole.
		streamed := t.streamed
		t.streamed = false
		if !sub && (replay || !streamed) {
			return chunk("agent_message_chunk", e.Text)
		}
	case protocol.ErrorEvent:
		if !sub && !replay && e.Kind == protocol.ErrKindAuth {
			t.authFail = true
		}
	case protocol.WarningEvent:
		switch {
		case sub:
		case e.Kind == protocol.WarningOutputCut:
			t.cut = true
		case e.Kind == protocol.WarningContentFilter:
			t.refused = true
		}
	case protocol.ToolStartedEvent:
		id := prefix + e.CallID
		t.calls[id] = &callState{tool: e.Tool, taskID: taskID, callID: e.CallID}
		return []any{toolCall{SessionUpdate: "tool_call", ToolCallID: id, Title: label + title(e.Tool, e.Input),
			Kind: toolKind(e.Tool, e.Permission), Status: "pending", Locations: t.locations(e.Input), RawInput: rawInput(e.Input)}}
	case protocol.ApprovalResolvedEvent:
		if e.Decision != protocol.DecisionDeny {
			return []any{toolCall{SessionUpdate: "tool_call_update", ToolCallID: prefix + e.CallID, Status: "in_progress"}}
		}
	case protocol.ToolOutputEvent:
		c := t.calls[prefix+e.CallID]
		if c == nil {
			return nil // a validation check's output
		}
		c.output = tail(c.output+e.Text, maxOutput)
		return []any{toolCall{SessionUpdate: "tool_call_update", ToolCallID: prefix + e.CallID, Status: "in_progress",
			Content: []toolCallContent{textContent(fence(c.output))}}}
	case protocol.FileChangedEvent:
		if c := t.calls[prefix+e.CallID]; c != nil {
			c.changed = true
		}
	case protocol.ToolFinishedEvent:
		return t.finished(prefix+e.CallID, e)
	case protocol.PlanEvent:
		if !sub {
			entries := make([]planEntry, len(e.Steps))
			for i, st := range e.Steps {
				entries[i] = planEntry{Content: st.Step, Priority: "medium", Status: planStatus(st.Status)}
			}
			return []any{planUpdate{SessionUpdate: "plan", Entries: entries}}
		}
	case protocol.PlanStartedEvent:
		if !sub {
			t.plan, t.steps = make([]planEntry, len(e.Steps)), map[string]int{}
			for i, st := range e.Steps {
				t.plan[i] = planEntry{Content: st.Role + ": " + st.Objective, Priority: "medium", Status: "pending"}
				t.steps[st.ID] = i
			}
			return []any{t.planUpdate()}
		}
	case protocol.SubagentStartedEvent:
		if sub {
			return nil
		}
		t.a.subagent(e.TaskID, t.s)
		out := []any{toolCall{SessionUpdate: "tool_call", ToolCallID: "subagent/" + e.TaskID,
			Title: fmt.Sprintf("%s subagent: %s", e.Role, oneLine(e.Objective, 200)), Kind: "think", Status: "in_progress"}}
		if e.Step != nil {
			t.subSteps[e.TaskID] = *e.Step
			if i, ok := t.steps[*e.Step]; ok {
				t.plan[i].Status = "in_progress"
				out = append(out, t.planUpdate())
			}
		}
		return out
	case protocol.SubagentEvent:
		if !sub {
			return t.mapEvent(e.Event, e.TaskID, e.TaskID+"/", "["+e.Name+"] ", replay)
		}
	case protocol.SubagentFinishedEvent:
		if sub {
			return nil
		}
		status := "completed"
		if e.Status != protocol.TaskCompleted {
			status = "failed"
		}
		text := fmt.Sprintf("%s: %d files, +%d -%d", e.Status, e.Files, e.Added, e.Removed)
		if e.Error != nil {
			text += "\n" + *e.Error
		}
		out := []any{toolCall{SessionUpdate: "tool_call_update", ToolCallID: "subagent/" + e.TaskID, Status: status,
			Content: []toolCallContent{textContent(text)}}}
		if i, ok := t.steps[t.subSteps[e.TaskID]]; ok {
			t.plan[i].Status = "completed"
			out = append(out, t.planUpdate())
		}
		return out
	case protocol.StepSkippedEvent:
		if i, ok := t.steps[e.Step]; ok && !sub {
			t.plan[i].Status = "completed"
			t.plan[i].Content += " (skipped: " + oneLine(e.Reason, 200) + ")"
			return []any{t.planUpdate()}
		}
	case protocol.UsageEvent:
		if !sub {
			t.costUSD = e.CostUSD
		}
	case protocol.ContextEvent:
		if !sub && e.WindowTokens > 0 {
			u := usageUpdate{SessionUpdate: "usage_update", Used: e.UsedTokens, Size: e.WindowTokens}
			if t.costUSD > 0 {
				u.Cost = &cost{Amount: t.costUSD, Currency: "USD"}
			}
			return []any{u}
		}
	}
	return nil
}

func (t *translator) planUpdate() planUpdate {
	return planUpdate{SessionUpdate: "plan", Entries: append([]planEntry(nil), t.plan...)}
}

// finished ends a tool call: its diffs (from the edit log, for a call
// that changed files) or its output and result.
func (t *translator) finished(id string, e protocol.ToolFinishedEvent) []any {
	c := t.calls[id]
	if c == nil {
		c = &callState{tool: e.Tool}
	}
	u := toolCall{SessionUpdate: "tool_call_update", ToolCallID: id, Status: "completed"}
	if !e.OK || stopped(e.Result) {
		u.Status = "failed"
	}
	if e.Background && !c.done {
		// The first of a background command's two: it goes on.
		c.done = true
		u.Status = "in_progress"
	} else {
		delete(t.calls, id)
	}
	if c.changed {
		u.Content = append(u.Content, t.diffs(c)...)
	}
	if len(u.Content) == 0 {
		var text string
		switch {
		case e.Error != nil:
			text = *e.Error
		case c.output != "":
			text = fence(c.output)
		default:
			text = resultText(e.Result)
		}
		if text != "" {
			u.Content = []toolCallContent{textContent(text)}
		}
	}
	return []any{u}
}

// stopped reports whether a command's result says it did not run to its
// end: cancelled (the turn was) or timed out. Our tool result is ok (the
// model sees the output and why it stopped), but for the client the call
// failed.
func stopped(result any) bool {
	m, _ := result.(map[string]any)
	cancelled, _ := m["cancelled"].(bool)
	timedOut, _ := m["timedOut"].(bool)
	return cancelled || timedOut
}

// diffs are a call's file changes as ACP diffs (absolute paths).
func (t *translator) diffs(c *callState) []toolCallContent {
	changes, err := t.a.sess.CallChanges(c.taskID, c.callID)
	if err != nil {
		t.a.log.Debug("acp: the call's changes", "err", err)
		return nil
	}
	var out []toolCallContent
	for _, ch := range changes {
		path := filepath.Join(t.s.cwd, filepath.FromSlash(ch.Path))
		if ch.Binary {
			out = append(out, textContent("binary file changed: "+ch.Path))
			continue
		}
		newText := ""
		if ch.After != nil {
			newText = *ch.After
		}
		out = append(out, toolCallContent{Type: "diff", Path: path, OldText: ch.Before, NewText: &newText})
	}
	return out
}

// permissionCall is the toolCall of a permission request: the call as
// tool_call announced it, with the preview (the change as a diff, or the
// command) as its content.
// callRef is the ACP toolCallId of a call of taskID (a subagent's are
// "<taskId>/<callId>") and the label its titles take.
func (t *translator) callRef(taskID, callID string) (id, label string) {
	if taskID != t.s.id {
		return taskID + "/" + callID, "[subagent] "
	}
	return callID, ""
}

func (t *translator) permissionCall(taskID, callID, tool string, perm protocol.Permission, input json.RawMessage, preview string) toolCall {
	t.mu.Lock()
	defer t.mu.Unlock()
	id, label := t.callRef(taskID, callID)
	tc := toolCall{ToolCallID: id, Title: label + title(tool, input), Kind: toolKind(tool, perm), Status: "pending",
		Locations: t.locations(input), RawInput: rawInput(input)}
	if preview != "" {
		tc.Content = []toolCallContent{textContent(fence(head(preview, maxResultText)))}
	}
	return tc
}

// locations are the files a call's input names (absolute).
func (t *translator) locations(input json.RawMessage) []location {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return nil
	}
	var out []location
	for _, k := range []string{"path", "from", "to"} {
		if p, ok := in[k].(string); ok && p != "" {
			if !filepath.IsAbs(p) {
				p = filepath.Join(t.s.cwd, filepath.FromSlash(p))
			}
			out = append(out, location{Path: p})
		}
	}
	return out
}

// rawInput is the call's input when it is a JSON object (ACP's rawInput).
func rawInput(input json.RawMessage) json.RawMessage {
	s := strings.TrimSpace(string(input))
	if !strings.HasPrefix(s, "{") || len(s) > maxResultText {
		return nil
	}
	return input
}

// toolKind is ACP's kind of our tool: by name for the built-ins, else by
// permission class.
func toolKind(tool string, perm protocol.Permission) string {
	switch tool {
	case "read_file", "list_files":
		return "read"
	case "search_text", "find_symbols", "retrieve_context", "get_dependencies":
		return "search"
	case "replace_text", "write_file", "apply_patch":
		return "edit"
	case "delete_path":
		return "delete"
	case "move_path":
		return "move"
	case "run_command":
		return "execute"
	case "update_plan":
		return "think"
	}
	switch perm {
	case protocol.PermissionRead:
		return "read"
	case protocol.PermissionEdit:
		return "edit"
	case protocol.PermissionCommand:
		return "execute"
	case protocol.PermissionDestructive:
		return "delete"
	}
	return "other"
}

// title is a call's one-line title: a verb and what it works on.
func title(tool string, input json.RawMessage) string {
	var in map[string]any
	json.Unmarshal(input, &in)
	str := func(k string) string { v, _ := in[k].(string); return oneLine(v, 120) }
	// on is verb and the input's member k, or verb and what when the
	// input lacks it (a model's bad arguments).
	on := func(verb, k, what string) string {
		if v := str(k); v != "" {
			return verb + " " + v
		}
		return verb + " " + what
	}
	switch tool {
	case "read_file":
		return on("Read", "path", "a file")
	case "list_files":
		if p := str("path"); p != "" {
			return "List " + p
		}
		return "List files"
	case "search_text":
		return fmt.Sprintf("Search for %q", str("query"))
	case "find_symbols":
		return fmt.Sprintf("Find symbols %q", str("query"))
	case "retrieve_context":
		return fmt.Sprintf("Retrieve context for %q", str("query"))
	case "get_dependencies":
		return on("Dependencies of", "path", "a file")
	case "replace_text":
		return on("Edit", "path", "a file")
	case "write_file":
		return on("Write", "path", "a file")
	case "apply_patch":
		return "Apply a patch"
	case "delete_path":
		return on("Delete", "path", "a path")
	case "move_path":
		if str("from") == "" || str("to") == "" {
			return "Move a path"
		}
		return "Move " + str("from") + " to " + str("to")
	case "run_command":
		return on("Run", "command", "a command")
	case "update_plan":
		return "Update the plan"
	case "ask_user":
		return "Ask the user"
	}
	for _, k := range []string{"path", "command", "query", "url", "name"} {
		if v := str(k); v != "" {
			return tool + " " + v
		}
	}
	return tool
}

func planStatus(s string) string {
	switch s {
	case "inProgress":
		return "in_progress"
	case "completed":
		return "completed"
	}
	return "pending"
}

// resultText is a tool result as text: a string as it is, a command's or
// a read's output, else its JSON; cut at maxResultText.
func resultText(r any) string {
	switch v := r.(type) {
	case nil:
		return ""
	case string:
		return head(v, maxResultText)
	case map[string]any:
		for _, k := range []string{"output", "content"} {
			if s, ok := v[k].(string); ok {
				return fence(head(s, maxResultText))
			}
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return ""
	}
	return fence(head(string(b), maxResultText))
}

func textContent(s string) toolCallContent {
	b := textBlock(s)
	return toolCallContent{Type: "content", Content: &b}
}

// fence puts text in a Markdown code block longer than any fence in it.
func fence(s string) string {
	f := "```"
	for strings.Contains(s, f) {
		f += "`"
	}
	return f + "\n" + strings.TrimRight(s, "\n") + "\n" + f
}

// head and tail cut s to at most n bytes on a rune boundary.
func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "\n[cut]"
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

func oneLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > n {
		s = head(s, n)
		s = strings.TrimSuffix(s, "\n[cut]") + "…"
	}
	return s
}

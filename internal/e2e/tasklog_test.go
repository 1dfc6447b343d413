package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/editlog"
)

// replayNote is one agent/event notification with its replay flag.
type replayNote struct {
	TaskID string          `json:"taskId"`
	Event  json.RawMessage `json:"event"`
	Replay bool            `json:"replay"`
}

func eventType(raw json.RawMessage) string {
	var e struct {
		Type string `json:"type"`
	}
	json.Unmarshal(raw, &e)
	return e.Type
}

// canon re-encodes an event so two encodings of it compare equal.
func canon(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("event is not JSON: %s", raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// kept drops the live-only events (docs/tasklog.md: deltas, toolOutput,
// diff) from a live stream: what a replay shows of it.
func kept(t *testing.T, evs []json.RawMessage) []string {
	var out []string
	for _, ev := range evs {
		switch eventType(ev) {
		case "textDelta", "thinkingDelta", "toolOutput", "diff":
			continue
		}
		out = append(out, canon(t, ev))
	}
	return out
}

// replay sends agent/replay and returns the replayed events (the marker
// last) and the result; live events that come meanwhile go to live.
func replay(t *testing.T, p *proc, taskID string, live *[]json.RawMessage) ([]json.RawMessage, map[string]any) {
	t.Helper()
	id := fmt.Sprint(p.request("agent/replay", map[string]any{"taskId": taskID}))
	var got []json.RawMessage
	for {
		m := p.next(60 * time.Second)
		switch {
		case m.Method != "" && len(m.ID) > 0:
			p.answer(m)
		case m.Method == "agent/event":
			var n replayNote
			json.Unmarshal(m.Params, &n)
			if n.Replay {
				got = append(got, n.Event)
			} else if live != nil {
				*live = append(*live, n.Event)
			}
		case m.Method != "":
		case string(m.ID) == id:
			if m.Error != nil {
				t.Fatalf("agent/replay: %v", m.Error)
			}
			var res map[string]any
			json.Unmarshal(m.Result, &res)
			return got, res
		}
	}
}

// TestReplayAfterRestart: a task of two runs is replayed by a new runtime
// on the same data folder as the same conversation: the user prompts, and
// every event the live runs streamed but the deltas, in order.
func TestReplayAfterRestart(t *testing.T) {
	repo := smallRepo(t, "unused")
	_, srv := newScriptedModel(t, "openai", []step{
		{text: "Let me read main.go.", calls: []scriptedCall{{name: "read_file", input: map[string]any{"path": "main.go"}}}},
		{text: "main.go calls x()."},
		{text: "Still x(), as I said."},
	})
	dataDir := t.TempDir()
	p := start(t)
	p.initialize(map[string]any{"sandbox": false, "dataDir": dataDir})
	p.mustCall("workspace/open", map[string]any{"root": repo})
	prov := openaiProvider(srv.URL, "sk-replay-test-key")
	var live []json.RawMessage
	var taskID string
	run := func(params map[string]any) {
		m := runDriven(t, p, params, func(ev agentEvent) {
			b, _ := json.Marshal(ev.Event)
			live = append(live, b)
			taskID = ev.TaskID
		}, func(string, *message) {})
		if m.Error != nil {
			t.Fatalf("agent/run: %v", m.Error)
		}
	}
	run(map[string]any{"prompt": "What does main.go call?", "provider": prov})
	run(map[string]any{"prompt": "And now?", "provider": prov, "taskId": taskID})
	p.mustCall("shutdown", nil)
	p.notify("exit", nil)
	p.wait(30 * time.Second)

	p2 := start(t)
	p2.initialize(map[string]any{"dataDir": dataDir})
	got, res := replay(t, p2, taskID, nil)
	if len(got) == 0 || eventType(got[len(got)-1]) != "replayed" {
		t.Fatalf("no replayed marker last: %s", got)
	}
	var marker map[string]any
	json.Unmarshal(got[len(got)-1], &marker)
	got = got[:len(got)-1]
	var prompts []string
	var rest []json.RawMessage
	for _, ev := range got {
		if eventType(ev) == "userMessage" {
			var u struct {
				Text   string `json:"text"`
				Images int    `json:"images"`
			}
			json.Unmarshal(ev, &u)
			prompts = append(prompts, u.Text)
			continue
		}
		rest = append(rest, ev)
	}
	if strings.Join(prompts, "|") != "What does main.go call?|And now?" {
		t.Fatalf("replayed prompts %q", prompts)
	}
	if eventType(got[0]) != "userMessage" {
		t.Fatalf("the replay does not open with the first prompt: %s", got[0])
	}
	want := kept(t, live)
	if !reflect.DeepEqual(kept(t, rest), want) {
		t.Fatalf("replay differs from the live runs:\nreplay %s\nlive   %s", kept(t, rest), want)
	}
	if res["events"] != float64(len(got)) || res["status"] != "completed" || res["running"] != false ||
		marker["events"] != float64(len(got)) || marker["status"] != "completed" {
		t.Fatalf("result %v, marker %v, %d events", res, marker, len(got))
	}
	if _, err := p2.call("agent/replay", map[string]any{"taskId": "task-none"}); err == nil || err.Code != -32602 {
		t.Fatalf("replay of an unknown task: %v", err)
	}
}

// TestReplayOfRunningTask replays a task while it runs (an approval waits,
// then is answered as the replay starts): the replayed events, the marker,
// then the live events; none lost, none twice, none out of order; a replay
// after the end shows exactly the same sequence.
func TestReplayOfRunningTask(t *testing.T) {
	repo := smallRepo(t, "unused")
	_, srv := newScriptedModel(t, "openai", []step{
		{text: "Writing it.", calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": "out.txt", "content": "hi\n"}}}},
		{text: "Reading it back.", calls: []scriptedCall{{name: "read_file", input: map[string]any{"path": "out.txt"}}}},
		{text: "Done."},
	})
	dataDir := t.TempDir()
	p := start(t)
	p.initialize(map[string]any{"sandbox": false, "dataDir": dataDir})
	p.mustCall("workspace/open", map[string]any{"root": repo})
	runID := fmt.Sprint(p.request("agent/run", map[string]any{"prompt": "Write out.txt", "provider": openaiProvider(srv.URL, "sk-replay-run-key")}))
	var before, after []json.RawMessage // live events before the replay request, and after the marker
	var replayed []json.RawMessage
	var taskID, replayID string
	markerSeen, done := false, false
	for !done {
		m := p.next(90 * time.Second)
		switch {
		case m.Method == "agent/requestApproval":
			// Ask for the replay, then let the task go on while it runs.
			replayID = fmt.Sprint(p.request("agent/replay", map[string]any{"taskId": taskID}))
			p.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"decision": "allow"}})
		case m.Method == "agent/event":
			var n replayNote
			json.Unmarshal(m.Params, &n)
			taskID = n.TaskID
			switch {
			case n.Replay:
				if markerSeen {
					t.Fatalf("a replayed event after the marker: %s", n.Event)
				}
				if eventType(n.Event) == "replayed" {
					markerSeen = true
					continue
				}
				replayed = append(replayed, n.Event)
			case replayID == "":
				before = append(before, n.Event)
			case !markerSeen:
				// Live events between the request and the marker can only be
				// ones sent before the replay held the stream.
				before = append(before, n.Event)
			default:
				after = append(after, n.Event)
			}
		case string(m.ID) == replayID:
			if m.Error != nil {
				t.Fatalf("agent/replay: %v", m.Error)
			}
		case string(m.ID) == runID:
			done = true
			if m.Error != nil {
				t.Fatalf("agent/run: %v", m.Error)
			}
		}
	}
	if !markerSeen {
		t.Fatal("no replayed marker")
	}
	final, _ := replay(t, p, taskID, nil)
	final = final[:len(final)-1]
	var withoutPrompt []json.RawMessage
	for _, ev := range final {
		if eventType(ev) != "userMessage" {
			withoutPrompt = append(withoutPrompt, ev)
		}
	}
	liveAll := kept(t, append(append([]json.RawMessage(nil), before...), after...))
	if !reflect.DeepEqual(kept(t, withoutPrompt), liveAll) {
		t.Fatalf("live stream (before + after the marker) differs from the saved one:\nlive  %s\nsaved %s", liveAll, kept(t, withoutPrompt))
	}
	// What was replayed is what the live stream had sent before the hold.
	var replayedNoPrompt []json.RawMessage
	for _, ev := range replayed {
		if eventType(ev) != "userMessage" {
			replayedNoPrompt = append(replayedNoPrompt, ev)
		}
	}
	if r, b := kept(t, replayedNoPrompt), kept(t, before); !reflect.DeepEqual(r, b) {
		t.Fatalf("replayed %s\nlive before the marker %s", r, b)
	}
	if len(after) == 0 || eventType(after[len(after)-1]) != "done" {
		t.Fatalf("the live events after the marker do not end with done: %s", after)
	}
}

// TestApprovalWithdrawnAfterCancel cancels agent/run while an approval
// (agent/requestApproval) and while a question (agent/askUser) waits: an
// approvalWithdrawn { callId } event names the waiting call.
func TestApprovalWithdrawnAfterCancel(t *testing.T) {
	for _, tc := range []struct {
		name, method string
		call         scriptedCall
	}{
		{"approval", "agent/requestApproval", scriptedCall{name: "write_file", input: map[string]any{"path": "out.txt", "content": "hi\n"}}},
		{"question", "agent/askUser", scriptedCall{name: "ask_user", input: map[string]any{"questions": []any{
			map[string]any{"id": "q1", "text": "Which one?", "kind": "radio", "options": []string{"a", "b"}}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := smallRepo(t, "unused")
			_, srv := newScriptedModel(t, "openai", []step{{text: "Asking.", calls: []scriptedCall{tc.call}}, {text: "unreached"}})
			p := start(t)
			p.initialize(map[string]any{"sandbox": false})
			p.mustCall("workspace/open", map[string]any{"root": repo})
			runID := p.request("agent/run", map[string]any{"prompt": "go", "provider": openaiProvider(srv.URL, "sk-withdraw-key")})
			var types []string
			var waiting, withdrawn string
			for {
				m := p.next(90 * time.Second)
				if m.Method == tc.method {
					var req struct {
						CallID string `json:"callId"`
					}
					json.Unmarshal(m.Params, &req)
					waiting = req.CallID
					p.notify("$/cancelRequest", map[string]any{"id": runID}) // never answered
					continue
				}
				if m.Method == "agent/event" {
					var ev agentEvent
					json.Unmarshal(m.Params, &ev)
					typ, _ := ev.Event["type"].(string)
					types = append(types, typ)
					if typ == "approvalWithdrawn" {
						withdrawn, _ = ev.Event["callId"].(string)
						if len(ev.Event) != 2 {
							t.Errorf("approvalWithdrawn fields: %v", ev.Event)
						}
					}
					continue
				}
				if m.Method == "" && string(m.ID) == fmt.Sprint(runID) {
					break
				}
			}
			if waiting == "" || withdrawn != waiting {
				t.Fatalf("waiting call %q, withdrawn %q; events %v", waiting, withdrawn, types)
			}
			i := indexOf(types, "approvalWithdrawn")
			if tc.name == "approval" && !(indexOf(types, "approvalRequested") < i && i < indexOf(types, "approvalResolved")) {
				t.Fatalf("order: %v", types)
			}
			if i > indexOf(types, "toolFinished") || types[len(types)-1] != "done" {
				t.Fatalf("order: %v", types)
			}
		})
	}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// TestToolOutputBeforeToolFinished: a run_command that waits for the test
// streams toolOutput events while it runs (the command cannot end before
// the test saw its first line), per stream, with a key split across reads
// redacted, and its toolFinished is the usual one with the whole output.
func TestToolOutputBeforeToolFinished(t *testing.T) {
	repo := smallRepo(t, "unused")
	const key = "sk-live-output-KEY-7766"
	cmd := `echo first; while [ ! -f go.flag ]; do sleep 0.05; done; echo second >&2; printf 'sk-live-out'; sleep 0.3; printf 'put-KEY-7766 end\n'`
	_, srv := newScriptedModel(t, "openai", []step{
		{text: "Running it.", calls: []scriptedCall{{name: "run_command", input: map[string]any{"command": cmd}}}},
		{text: "Ran it."},
	})
	p := start(t)
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": repo})
	p.onRequest = func(method string, params json.RawMessage) any {
		return map[string]any{"decision": "allow"}
	}
	var types []string
	streams := map[string]string{}
	var finished map[string]any
	m := runDriven(t, p, map[string]any{"prompt": "run it", "provider": openaiProvider(srv.URL, key)}, func(ev agentEvent) {
		typ, _ := ev.Event["type"].(string)
		types = append(types, typ)
		switch typ {
		case "toolOutput":
			text, _ := ev.Event["text"].(string)
			stream, _ := ev.Event["stream"].(string)
			if strings.Contains(text, "put-KEY") || strings.Contains(text, "7766") {
				t.Errorf("a piece of the key went out live: %q", text)
			}
			if finished != nil {
				t.Errorf("toolOutput after toolFinished: %v", ev.Event)
			}
			if len(ev.Event) != 4 || ev.Event["callId"] == "" {
				t.Errorf("toolOutput fields: %v", ev.Event)
			}
			streams[stream] += text
			if strings.Contains(streams["stdout"], "first\n") {
				os.WriteFile(filepath.Join(repo, "go.flag"), nil, 0o644) // let the command go on
			}
		case "toolFinished":
			finished = ev.Event
		}
	}, func(string, *message) {})
	if m.Error != nil {
		t.Fatalf("agent/run: %v", m.Error)
	}
	if streams["stdout"] != "first\n[redacted] end\n" || streams["stderr"] != "second\n" {
		t.Fatalf("live streams %q; events %v", streams, types)
	}
	res, _ := finished["result"].(map[string]any)
	out, _ := res["output"].(string)
	if finished["ok"] != true || !strings.Contains(out, "first\n") || !strings.Contains(out, "second\n") || !strings.Contains(out, "[redacted] end") || strings.Contains(out, key) {
		t.Fatalf("toolFinished %v", finished)
	}
	if i, j := indexOf(types, "toolOutput"), indexOf(types, "toolFinished"); i < 0 || i > j || indexOf(types, "toolStarted") > i {
		t.Fatalf("order %v", types)
	}
}

// TestDiffEventsMatchEditsPending: a task that creates one file and edits
// another gets diff events; the last, before done, is the whole diff of
// edits/pending (original → current of each file, in its order), with
// the same line counts.
func TestDiffEventsMatchEditsPending(t *testing.T) {
	repo := smallRepo(t, "unused")
	_, srv := newScriptedModel(t, "openai", []step{
		{text: "Creating notes.", calls: []scriptedCall{{name: "write_file", input: map[string]any{"path": "fresh.txt", "content": "one\ntwo\n"}}}},
		{text: "Editing main.", calls: []scriptedCall{{name: "replace_text", input: map[string]any{"path": "main.go", "oldText": "x()", "newText": "y()\n\tz()"}}}},
		{text: "Done."},
	})
	p := start(t)
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": repo})
	p.onRequest = func(string, json.RawMessage) any { return map[string]any{"decision": "allow"} }
	var types []string
	var diffs []map[string]any
	m := runDriven(t, p, map[string]any{"prompt": "edit", "provider": openaiProvider(srv.URL, "sk-diff-key")}, func(ev agentEvent) {
		typ, _ := ev.Event["type"].(string)
		types = append(types, typ)
		if typ == "diff" {
			diffs = append(diffs, ev.Event)
		}
	}, func(string, *message) {})
	if m.Error != nil {
		t.Fatalf("agent/run: %v", m.Error)
	}
	if len(diffs) == 0 || indexOf(types, "diff") < indexOf(types, "fileChanged") || types[len(types)-2] != "diff" || types[len(types)-1] != "done" {
		t.Fatalf("diff events %d, order %v", len(diffs), types)
	}
	last := diffs[len(diffs)-1]
	var pending struct {
		Files []struct {
			Path     string  `json:"path"`
			Original *string `json:"original"`
			Current  *string `json:"current"`
			Added    int     `json:"added"`
			Removed  int     `json:"removed"`
		} `json:"files"`
	}
	json.Unmarshal(p.mustCall("edits/pending", nil), &pending)
	var want strings.Builder
	var paths []any
	added, removed := 0, 0
	for _, f := range pending.Files {
		orig, cur := "", ""
		if f.Original != nil {
			orig = *f.Original
		}
		if f.Current != nil {
			cur = *f.Current
		}
		text, _, _ := editlog.Diff(f.Path, orig, cur, f.Original != nil, f.Current != nil)
		want.WriteString(text)
		paths = append(paths, f.Path)
		added += f.Added
		removed += f.Removed
	}
	diff, _ := last["diff"].(string)
	if len(pending.Files) != 2 || diff != want.String() || !reflect.DeepEqual(last["files"], paths) || last["truncated"] != false {
		t.Fatalf("last diff event %v\nedits/pending gives %s (files %v)", last, want.String(), paths)
	}
	plus, minus := 0, 0
	for _, line := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
		case strings.HasPrefix(line, "+"):
			plus++
		case strings.HasPrefix(line, "-"):
			minus++
		}
	}
	if plus != added || minus != removed || !strings.Contains(diff, "--- /dev/null\n+++ b/fresh.txt") || !strings.Contains(diff, "+\tz() }") {
		t.Fatalf("diff counts +%d -%d, edits/pending +%d -%d:\n%s", plus, minus, added, removed, diff)
	}
}

// TestUpdatePlanEvents: update_plan calls become plan events (the whole
// list each time, before the call's toolFinished); an invalid plan is a
// tool error and no event; the plan events are replayed.
func TestUpdatePlanEvents(t *testing.T) {
	repo := smallRepo(t, "unused")
	plan1 := []any{map[string]any{"step": "Read main.go", "status": "inProgress"}, map[string]any{"step": "Explain it", "status": "pending"}}
	plan2 := []any{map[string]any{"step": "Read main.go", "status": "completed"}, map[string]any{"step": "Explain it", "status": "inProgress"}}
	bad := []any{map[string]any{"step": "a", "status": "inProgress"}, map[string]any{"step": "b", "status": "inProgress"}}
	_, srv := newScriptedModel(t, "openai", []step{
		{text: "Planning.", calls: []scriptedCall{{name: "update_plan", input: map[string]any{"plan": plan1}}}},
		{text: "Bad plan.", calls: []scriptedCall{{name: "update_plan", input: map[string]any{"plan": bad}}}},
		{text: "Progress.", calls: []scriptedCall{{name: "update_plan", input: map[string]any{"explanation": "read it", "plan": plan2}}}},
		{text: "It calls x()."},
	})
	p := start(t)
	p.initialize(map[string]any{"sandbox": false})
	p.mustCall("workspace/open", map[string]any{"root": repo})
	var types []string
	var plans []map[string]any
	var finished []map[string]any
	var taskID string
	m := runDriven(t, p, map[string]any{"prompt": "explain main.go", "provider": openaiProvider(srv.URL, "sk-plan-key"), "chatMode": "ask"}, func(ev agentEvent) {
		taskID = ev.TaskID
		typ, _ := ev.Event["type"].(string)
		types = append(types, typ)
		switch typ {
		case "plan":
			plans = append(plans, ev.Event)
		case "toolFinished":
			finished = append(finished, ev.Event)
		}
	}, func(string, *message) {})
	if m.Error != nil {
		t.Fatalf("agent/run: %v", m.Error)
	}
	if len(plans) != 2 || len(finished) != 3 {
		t.Fatalf("plans %v, toolFinished %v", plans, finished)
	}
	if !reflect.DeepEqual(plans[0]["steps"], plan1) || plans[0]["explanation"] != "" ||
		!reflect.DeepEqual(plans[1]["steps"], plan2) || plans[1]["explanation"] != "read it" || len(plans[0]) != 3 {
		t.Fatalf("plan events %v", plans)
	}
	if finished[0]["ok"] != true || finished[1]["ok"] != false || !strings.Contains(fmt.Sprint(finished[1]["error"]), "at most one") || finished[2]["ok"] != true {
		t.Fatalf("toolFinished %v", finished)
	}
	if i := indexOf(types, "plan"); i < indexOf(types, "toolStarted") || i > indexOf(types, "toolFinished") {
		t.Fatalf("order %v", types)
	}
	got, _ := replay(t, p, taskID, nil)
	n := 0
	for _, ev := range got {
		if eventType(ev) == "plan" {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("replay has %d plan events", n)
	}
}

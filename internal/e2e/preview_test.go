package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEditPreviewThroughBinary: through the real binary, a replace_text
// whose oldText is not in the file fails without any agent/requestApproval
// (its toolFinished is an error), and one that applies is asked about with
// the file's real unified diff as preview (line numbers, 3 lines of
// context, the CRLF file's endings) in agent/requestApproval and in the
// approvalRequested event; the approved edit is the one written.
func TestEditPreviewThroughBinary(t *testing.T) {
	root := t.TempDir()
	var crlf strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&crlf, "line %d\r\n", i)
	}
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte(crlf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, srv := newScriptedModel(t, "openai", []step{
		{calls: []scriptedCall{{name: "replace_text", input: map[string]any{"path": "notes.txt", "oldText": "line 99\n", "newText": "x\n"}}}},
		{calls: []scriptedCall{{name: "replace_text", input: map[string]any{"path": "notes.txt", "oldText": "line 12\n", "newText": "line twelve\n"}}}},
		{text: "Done."},
	})
	p := start(t)
	var approvals []map[string]any
	p.onRequest = func(method string, params json.RawMessage) any {
		if method != "agent/requestApproval" {
			return nil
		}
		var req map[string]any
		json.Unmarshal(params, &req)
		approvals = append(approvals, req)
		return map[string]any{"decision": "allow"}
	}
	p.initialize(map[string]any{"sandbox": false, "dataDir": t.TempDir()})
	p.mustCall("workspace/open", map[string]any{"root": root})
	res := p.mustCall("agent/run", map[string]any{"prompt": "Rename line 12.", "chatMode": "agent",
		"provider":   map[string]any{"kind": "openaiCompatible", "model": "fake-model", "baseUrl": srv.URL + "/v1", "apiKey": "sk-e2e-preview-key"},
		"validation": map[string]any{"enabled": false}})
	var sum struct {
		Status string `json:"status"`
	}
	json.Unmarshal(res, &sum)
	if sum.Status != "completed" {
		t.Fatalf("summary: %s", res)
	}

	const absent, good = "call_0_0", "call_1_0"
	want := "--- a/notes.txt\n+++ b/notes.txt\n@@ -9,7 +9,7 @@\n line 9\r\n line 10\r\n line 11\r\n-line 12\r\n+line twelve\r\n line 13\r\n line 14\r\n line 15\r\n"
	if len(approvals) != 1 || approvals[0]["callId"] != good || approvals[0]["tool"] != "replace_text" {
		t.Fatalf("agent/requestApproval sent for %v; want only %s", approvals, good)
	}
	if approvals[0]["preview"] != want {
		t.Errorf("preview %q\nwant    %q", approvals[0]["preview"], want)
	}
	var finished, requested int
	for _, n := range p.notifications("agent/event") {
		var ev agentEvent
		json.Unmarshal(n.Params, &ev)
		e := ev.Event
		switch e["type"] {
		case "approvalRequested":
			requested++
			if e["callId"] != good || e["preview"] != want {
				t.Errorf("approvalRequested %v", e)
			}
		case "toolFinished":
			finished++
			switch e["callId"] {
			case absent:
				if e["ok"] != false || !strings.Contains(fmt.Sprint(e["error"]), "oldText was not found in notes.txt") {
					t.Errorf("toolFinished of the absent oldText: %v", e)
				}
			case good:
				if e["ok"] != true {
					t.Errorf("toolFinished of the edit: %v", e)
				}
			}
		}
	}
	if requested != 1 || finished != 2 {
		t.Errorf("%d approvalRequested and %d toolFinished events; want 1 and 2", requested, finished)
	}
	got, _ := fileText(t, root, "notes.txt")
	if wantFile := strings.Replace(crlf.String(), "line 12\r\n", "line twelve\r\n", 1); got != wantFile {
		t.Errorf("notes.txt = %q", got)
	}
}

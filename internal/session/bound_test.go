package session

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// A saved conversation of 40 MB (large write_file inputs, results, an
// image) comes back from agent/task under the cap, the newest turn whole.
func TestBoundMessages(t *testing.T) {
	big := strings.Repeat("x", 3<<20)
	input, _ := json.Marshal(map[string]string{"path": "a", "content": big})
	var msgs []provider.Message
	for range 6 {
		msgs = append(msgs,
			provider.Message{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartToolUse, ID: "c", Name: "write_file", Input: input}}},
			provider.Message{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartToolResult, ToolUseID: "c", Content: big},
				{Type: provider.PartImage, MediaType: "image/png", Data: big}}})
	}
	msgs = append(msgs, provider.Message{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartText, Text: "done"}}})
	raw, _ := json.Marshal(msgs)
	out := boundMessages(raw)
	if len(out) > maxTaskMessagesBytes+1<<20 {
		t.Fatalf("bounded messages are %d bytes (from %d)", len(out), len(raw))
	}
	var got []provider.Message
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(msgs) {
		t.Fatalf("not a conversation: %v", err)
	}
	if got[len(got)-1].Content[0].Text != "done" || !strings.Contains(got[1].Content[0].Content, "more bytes not shown") ||
		!json.Valid(got[0].Content[0].Input) || got[1].Content[1].Type != provider.PartText {
		t.Fatalf("cut wrongly: %.200s", out)
	}
	if small := json.RawMessage(`[{"role":"user","content":[{"type":"text","text":"hi"}]}]`); string(boundMessages(small)) != string(small) {
		t.Fatal("a small conversation changed")
	}
}

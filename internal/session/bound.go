package session

import (
	"encoding/json"
	"fmt"

	"github.com/task-x/task-x-runtime/internal/editlog"
	"github.com/task-x/task-x-runtime/internal/provider"
)

// maxTaskMessagesBytes bounds the contents of agent/task's messages so the
// reply stays under the 32 MiB message cap (protocol.md Framing); each part
// is cut at editlog.MaxContentBytes too (docs/edits.md).
const maxTaskMessagesBytes = 16 << 20

// boundMessages cuts the contents of a saved conversation for agent/task,
// newest messages first so recent turns stay whole: text and tool results
// with editlog.CutText's marker, a tool input over the limit becomes
// {"truncated":true,"bytes":N}, an image over it becomes a text part saying
// so. It returns raw unchanged when it is small enough or is not a
// conversation.
func boundMessages(raw json.RawMessage) json.RawMessage {
	if len(raw) <= maxTaskMessagesBytes/2 {
		return raw
	}
	var msgs []provider.Message
	if json.Unmarshal(raw, &msgs) != nil {
		return raw
	}
	left := maxTaskMessagesBytes
	take := func(n int) int { // the bytes a field may keep
		limit := min(editlog.MaxContentBytes, max(left, 0))
		left -= min(n, limit)
		return limit
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		for j := range msgs[i].Content {
			p := &msgs[i].Content[j]
			p.Text, _ = editlog.CutText(p.Text, take(len(p.Text)))
			p.Content, _ = editlog.CutText(p.Content, take(len(p.Content)))
			if n := len(p.Input); n > take(n) {
				p.Input = json.RawMessage(fmt.Sprintf(`{"truncated":true,"bytes":%d}`, n))
			}
			if n := len(p.Data); p.Type == provider.PartImage && n > take(n) {
				*p = provider.Part{Type: provider.PartText, Text: fmt.Sprintf("[task-x: an image of %d bytes not shown]", n)}
			}
		}
	}
	b, err := json.Marshal(msgs)
	if err != nil {
		return raw
	}
	return b
}

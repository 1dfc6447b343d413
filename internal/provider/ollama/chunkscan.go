package ollama

import (
	"encoding/json"

	"github.com/task-x/task-x-runtime/internal/jsonscan"
)

// decodeChunk fills ch from one NDJSON line. Content, thinking and done
// lines are read by scanChunk without reflection; anything it does not read
// exactly as json.Unmarshal would (tool calls, an error, escaped or
// case-folded keys, duplicate keys, counts that are not plain small
// integers, invalid JSON) goes to json.Unmarshal, so the result and the
// errors are those of json.Unmarshal (FuzzChunkScan pins this).
func decodeChunk(line []byte, ch *chatChunk) error {
	*ch = chatChunk{}
	if scanChunk(line, ch) {
		return nil
	}
	*ch = chatChunk{}
	return json.Unmarshal(line, ch)
}

// scanChunk reads line into ch, reporting false (ch then unspecified) when
// the fallback must decide.
func scanChunk(line []byte, ch *chatChunk) bool {
	s := jsonscan.New(line)
	var seen jsonscan.Seen
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "message":
			if !seen.First(0) {
				return false
			}
			if s.Null() {
				return true
			}
			ch.Message = &chatChunkMessage{}
			return scanMessage(&s, ch.Message)
		case "done":
			if !seen.First(1) {
				return false
			}
			if s.Null() {
				return true
			}
			v, ok := s.Bool()
			ch.Done = v
			return ok
		case "done_reason":
			return s.StringField(&seen, 2, &ch.DoneReason)
		case "prompt_eval_count":
			return s.CountField(&seen, 3, &ch.PromptEvalCount)
		case "eval_count":
			return s.CountField(&seen, 4, &ch.EvalCount)
		case "error":
			// Only an explicit null is read here; an error goes to the fallback.
			if !seen.First(5) || !s.Null() {
				return false
			}
			ch.Error = json.RawMessage("null")
			return true
		default:
			return !jsonscan.FoldsTo(key, "message", "done", "done_reason", "prompt_eval_count", "eval_count", "error") && s.Skip()
		}
	})
	return ok && s.End()
}

// scanMessage reads a message object without tool calls.
func scanMessage(s *jsonscan.Scanner, m *chatChunkMessage) bool {
	var seen jsonscan.Seen
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "content":
			return s.StringField(&seen, 0, &m.Content)
		case "thinking":
			return s.StringField(&seen, 1, &m.Thinking)
		case "tool_calls":
			// An explicit null is as if absent; calls go to the fallback.
			return s.Null()
		default:
			return !jsonscan.FoldsTo(key, "content", "thinking", "tool_calls") && s.Skip()
		}
	})
}

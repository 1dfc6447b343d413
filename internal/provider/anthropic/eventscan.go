package anthropic

import (
	"encoding/json"

	"github.com/task-x/task-x-runtime/internal/jsonscan"
)

// decodeEvent fills e from one event's data. content_block_delta,
// content_block_stop, message_delta and message_stop are read by scanEvent
// without reflection; anything it does not read exactly as json.Unmarshal
// would (message, content_block and error objects, escaped or case-folded
// keys, duplicate keys, numbers that are not plain small integers, invalid
// JSON) goes to json.Unmarshal, so the result and the errors are those of
// json.Unmarshal (FuzzEventScan pins this).
func decodeEvent(data []byte, e *streamEvent, scratch *eventScratch) error {
	*e = streamEvent{}
	if scanEvent(data, e, scratch) {
		return nil
	}
	*e = streamEvent{}
	return json.Unmarshal(data, e)
}

// eventScratch holds the index and delta of scanned events, so that e's
// pointers need no allocation; e must not be kept past the next decodeEvent
// with the same scratch.
type eventScratch struct {
	index int
	delta streamDelta
}

// eventTypes are the type names of events and deltas, returned without
// allocating.
var eventTypes = []string{"content_block_delta", "text_delta", "input_json_delta", "thinking_delta",
	"content_block_stop", "message_delta", "message_stop", "ping", "signature_delta"}

// scanEvent reads data into e, reporting false (e then unspecified) when the
// fallback must decide.
func scanEvent(data []byte, e *streamEvent, scratch *eventScratch) bool {
	s := jsonscan.New(data)
	var seen jsonscan.Seen
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			if !seen.First(0) {
				return false
			}
			return s.Null() || scanType(&s, &e.Type)
		case "index":
			if !seen.First(1) {
				return false
			}
			if s.Null() {
				return true
			}
			n, ok := s.SmallInt()
			scratch.index = n
			e.Index = &scratch.index
			return ok
		case "delta":
			if !seen.First(2) {
				return false
			}
			if s.Null() {
				return true
			}
			scratch.delta = streamDelta{}
			e.Delta = &scratch.delta
			return scanDelta(&s, e.Delta)
		case "usage":
			if !seen.First(3) {
				return false
			}
			if s.Null() {
				return true
			}
			e.Usage = &apiUsage{}
			return scanUsage(&s, e.Usage)
		case "message", "content_block", "error":
			// Rare events with nested objects: an explicit null is as if
			// absent, anything else goes to the fallback.
			return s.Null()
		default:
			return !jsonscan.FoldsTo(key, "type", "index", "delta", "usage", "message", "content_block", "error") && s.Skip()
		}
	})
	return ok && s.End()
}

func scanType(s *jsonscan.Scanner, dst *string) bool {
	v, ok := s.Interned(eventTypes)
	*dst = v
	return ok
}

func scanDelta(s *jsonscan.Scanner, d *streamDelta) bool {
	var seen jsonscan.Seen
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return seen.First(0) && (s.Null() || scanType(s, &d.Type))
		case "text":
			return s.StringField(&seen, 1, &d.Text)
		case "partial_json":
			return s.StringField(&seen, 2, &d.PartialJSON)
		case "thinking":
			return s.StringField(&seen, 3, &d.Thinking)
		case "stop_reason":
			return s.StringField(&seen, 4, &d.StopReason)
		default:
			return !jsonscan.FoldsTo(key, "type", "text", "partial_json", "thinking", "stop_reason") && s.Skip()
		}
	})
}

func scanUsage(s *jsonscan.Scanner, u *apiUsage) bool {
	var seen jsonscan.Seen
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "input_tokens":
			return s.CountField(&seen, 0, &u.InputTokens)
		case "output_tokens":
			return s.CountField(&seen, 1, &u.OutputTokens)
		case "cache_creation_input_tokens":
			return s.CountField(&seen, 2, &u.CacheCreationInputTokens)
		case "cache_read_input_tokens":
			return s.CountField(&seen, 3, &u.CacheReadInputTokens)
		default:
			return !jsonscan.FoldsTo(key, "input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens") && s.Skip()
		}
	})
}

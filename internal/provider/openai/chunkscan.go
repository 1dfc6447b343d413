package openai

import (
	"encoding/json"

	"github.com/task-x/task-x-runtime/internal/jsonscan"
)

// decodeChunk fills ch from one chunk's JSON. The common shapes (text,
// reasoning and finish deltas, usage) are read by scanChunk without
// reflection; anything it does not read exactly as json.Unmarshal would
// (tool calls, an error, escaped or case-folded keys, duplicate keys, numbers
// that are not plain small integers, invalid JSON) goes to json.Unmarshal, so
// the result and the errors are those of json.Unmarshal (FuzzChunkScan pins
// this). scratch is reused for the choices of scanned chunks; ch must not be
// kept past the next call with the same scratch.
func decodeChunk(data []byte, ch *chunk, scratch *[]chunkChoice) error {
	*ch = chunk{}
	if scanChunk(data, ch, scratch) {
		return nil
	}
	*ch = chunk{}
	return json.Unmarshal(data, ch)
}

// scanChunk reads data as a chat.completion.chunk into ch. It reports false,
// leaving ch in an unspecified state, when the fallback must decide.
// RawMessage fields alias data (json.Unmarshal's copies hold the same bytes).
func scanChunk(data []byte, ch *chunk, scratch *[]chunkChoice) bool {
	s := jsonscan.New(data)
	var seen jsonscan.Seen
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "choices":
			return seen.First(0) && (s.Null() || scanChoices(&s, ch, scratch))
		case "usage":
			if !seen.First(1) {
				return false
			}
			if s.Null() {
				return true
			}
			ch.Usage = &chunkUsage{}
			return scanUsage(&s, ch.Usage)
		case "error":
			// Only an explicit null is read here; an error goes to the fallback.
			if !seen.First(2) || !s.Null() {
				return false
			}
			ch.Error = json.RawMessage("null")
			return true
		default:
			return !jsonscan.FoldsTo(key, "choices", "usage", "error") && s.Skip()
		}
	})
	return ok && s.End()
}

// scanChoices reads the choices array.
func scanChoices(s *jsonscan.Scanner, ch *chunk, scratch *[]chunkChoice) bool {
	list := (*scratch)[:0]
	if list == nil {
		list = make([]chunkChoice, 0, 1) // [] is an empty slice, not nil
	}
	ok := s.Array(func() bool {
		list = append(list, chunkChoice{})
		return scanChoice(s, &list[len(list)-1])
	})
	*scratch = list
	ch.Choices = list
	return ok
}

// scanChoice reads one choice object.
func scanChoice(s *jsonscan.Scanner, c *chunkChoice) bool {
	var seen jsonscan.Seen
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "index":
			return s.IntField(&seen, 0, &c.Index)
		case "delta":
			return seen.First(1) && (s.Null() || scanDelta(s, &c.Delta))
		case "finish_reason":
			if !seen.First(2) {
				return false
			}
			if s.Null() {
				return true
			}
			v, ok := s.String()
			c.FinishReason = &v
			return ok
		default:
			return !jsonscan.FoldsTo(key, "index", "delta", "finish_reason") && s.Skip()
		}
	})
}

// scanDelta reads a delta object without tool calls.
func scanDelta(s *jsonscan.Scanner, d *chunkDelta) bool {
	var seen jsonscan.Seen
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "content":
			return s.RawField(&seen, 0, &d.Content)
		case "reasoning_content":
			return s.RawField(&seen, 1, &d.ReasoningContent)
		case "reasoning":
			return s.RawField(&seen, 2, &d.Reasoning)
		case "tool_calls", "function_call":
			// An explicit null is as if absent; calls go to the fallback.
			return s.Null()
		default:
			return !jsonscan.FoldsTo(key, "content", "reasoning_content", "reasoning", "tool_calls", "function_call") && s.Skip()
		}
	})
}

// scanUsage reads a usage object.
func scanUsage(s *jsonscan.Scanner, u *chunkUsage) bool {
	var seen jsonscan.Seen
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "prompt_tokens":
			return s.IntField(&seen, 0, &u.PromptTokens)
		case "completion_tokens":
			return s.IntField(&seen, 1, &u.CompletionTokens)
		default:
			return !jsonscan.FoldsTo(key, "prompt_tokens", "completion_tokens") && s.Skip()
		}
	})
}

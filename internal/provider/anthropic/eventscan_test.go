package anthropic

import (
	"encoding/json"
	"reflect"
	"testing"
)

// eventScanSeeds are event data in the shapes of the Messages streaming
// format (https://docs.anthropic.com/en/docs/build-with-claude/streaming),
// and near misses that scanEvent must leave to json.Unmarshal.
var eventScanSeeds = []string{
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"location\": \"San Fra"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"é \u2028 \n"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}`,
	`{"type":"content_block_stop","index":0}`,
	`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`,
	`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"input_tokens":null,"output_tokens":89,"cache_read_input_tokens":0,"server_tool_use":{"web_search_requests":1}}}`,
	`{"type":"message_stop"}`,
	`{"type":"ping"}`,
	"{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\xff\"}}",
	`{}`,
	// Left to json.Unmarshal:
	`{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":25,"output_tokens":1}}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
	`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
	`{"Type":"content_block_delta"}`,
	`{"type":"content_block_delta","index":0,"delta":{"Text":"folded"}}`,
	`{"type":"a","type":"b"}`,
	`{"type":"content_block_delta","index":-1,"delta":{"type":"text_delta","text":"a"}}`,
	`{"type":"content_block_delta","index":1e0}`,
	`{"type":"content_block_delta","index":"0"}`,
	`{"type":"message_delta","usage":{"output_tokens":12345678901}}`,
	`{"type":"x"}]`,
	`null`,
}

func TestEventScanMatchesUnmarshal(t *testing.T) {
	for _, s := range eventScanSeeds[:11] {
		var e streamEvent
		if !scanEvent([]byte(s), &e, &eventScratch{}) {
			t.Errorf("scanEvent refused the common shape %s", s)
		}
	}
	for _, s := range eventScanSeeds {
		checkEventScan(t, []byte(s))
	}
}

// FuzzEventScan: whatever scanEvent accepts, json.Unmarshal accepts with the
// same result, and decodeEvent always agrees with json.Unmarshal.
func FuzzEventScan(f *testing.F) {
	for _, s := range eventScanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkEventScan(t, data) })
}

func checkEventScan(t *testing.T, data []byte) {
	t.Helper()
	var want streamEvent
	wantErr := json.Unmarshal(data, &want)
	var got streamEvent
	scratch := &eventScratch{index: 9, delta: streamDelta{Text: "stale"}}
	if scanEvent(data, &got, scratch) {
		if wantErr != nil {
			t.Fatalf("scanEvent accepted %q, json.Unmarshal says %v", data, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("scanEvent(%q) = %+v, json.Unmarshal %+v", data, got, want)
		}
	}
	got = streamEvent{Type: "stale"}
	err := decodeEvent(data, &got, scratch)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("decodeEvent(%q) error %v, json.Unmarshal %v", data, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeEvent(%q) = %+v, json.Unmarshal %+v", data, got, want)
	}
}

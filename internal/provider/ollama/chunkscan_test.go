package ollama

import (
	"encoding/json"
	"reflect"
	"testing"
)

// chunkScanSeeds are lines in the shapes Ollama sends (docs/api.md "Chat
// Request (Streaming)"), and near misses that scanChunk must leave to
// json.Unmarshal.
var chunkScanSeeds = []string{
	chunk("hello"),
	chunk("quote \" and \\ and \u2028 and é\n"),
	doneLine("stop", 26, 298),
	`{"model":"m","message":{"role":"assistant","content":"","thinking":"hmm"},"done":false}`,
	`{"message":{"role":"assistant","content":"a","tool_calls":null},"done":false,"error":null}`,
	`{"message":null,"done":true,"done_reason":"length","prompt_eval_count":null,"eval_count":0}`,
	`{"done":true,"done_reason":"stop","context":[1,2,3],"total_duration":5.5e9}`,
	"{\"message\":{\"content\":\"\xff\"}}",
	`{}`,
	// Left to json.Unmarshal:
	`{"message":{"content":["x"]}}`,
	`{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]},"done":false}`,
	`{"error":"model 'x' not found"}`,
	`{"Message":{"content":"folded"}}`,
	`{"message":{"Content":"folded"}}`,
	`{"message":{"content":"a","content":"b"}}`,
	`{"message":{"content":"a"},"message":{"thinking":"b"}}`,
	`{"done":true,"eval_count":-1}`,
	`{"done":true,"eval_count":1.0}`,
	`{"done":"true"}`,
	`{"done":true} {"done":false}`,
	`{"message":{"content":"a"}`,
	`null`,
}

func TestChunkScanMatchesUnmarshal(t *testing.T) {
	for _, s := range chunkScanSeeds[:9] {
		var ch chatChunk
		if !scanChunk([]byte(s), &ch) {
			t.Errorf("scanChunk refused the common shape %s", s)
		}
	}
	for _, s := range chunkScanSeeds {
		checkChunkScan(t, []byte(s))
	}
}

// FuzzChunkScan: whatever scanChunk accepts, json.Unmarshal accepts with the
// same result, and decodeChunk always agrees with json.Unmarshal.
func FuzzChunkScan(f *testing.F) {
	for _, s := range chunkScanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkChunkScan(t, data) })
}

func checkChunkScan(t *testing.T, data []byte) {
	t.Helper()
	var want chatChunk
	wantErr := json.Unmarshal(data, &want)
	var got chatChunk
	if scanChunk(data, &got) {
		if wantErr != nil {
			t.Fatalf("scanChunk accepted %q, json.Unmarshal says %v", data, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("scanChunk(%q) = %+v, json.Unmarshal %+v", data, got, want)
		}
	}
	got = chatChunk{Done: true, DoneReason: "stale"}
	err := decodeChunk(data, &got)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("decodeChunk(%q) error %v, json.Unmarshal %v", data, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeChunk(%q) = %+v, json.Unmarshal %+v", data, got, want)
	}
}

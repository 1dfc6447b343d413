package openai

import (
	"encoding/json"
	"reflect"
	"testing"
)

// chunkScanSeeds are chunks in the shapes servers send, and near misses that
// scanChunk must leave to json.Unmarshal.
var chunkScanSeeds = []string{
	textChunk("hello"),
	textChunk("quote \" and \\ and \u2028 and é"),
	finishChunk("stop"),
	usageChunk,
	`{"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning":"r","content":null,"tool_calls":null,"function_call":null}}],"error":null}`,
	`{"choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"mine"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":["part"]}}],"x":[1,-2.5e+3,true,false,{"a":{}}]}`,
	`{"choices":null}`,
	`{"choices":[]}`,
	`{}`,
	` { "choices" : [ { "delta" : { "content" : "a" } , "index" : 0 } ] } `,
	// Left to json.Unmarshal:
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"function_call":{"name":"f"}}}]}`,
	`{"error":{"message":"overloaded","code":529}}`,
	`{"Choices":[{"index":0,"delta":{"content":"folded"}}]}`,
	`{"choices":[{"INDEX":0,"Delta":{"Content":"folded"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a","content":"b"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}],"choices":[{"index":0,"delta":{}}]}`,
	`{"ch\u006fices":[{"index":0,"delta":{"content":"escaped key"}}]}`,
	`{"choices":[{"index":1.0,"delta":{"content":"a"}}]}`,
	`{"choices":[{"index":-1,"delta":{"content":"a"}}]}`,
	`{"choices":[{"index":"0","delta":{"content":"a"}}]}`,
	`{"choices":[{"index":0,"finish_reason":"st\u006fp"}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}]} trailing`,
	`{"choices":[{"index":0,"delta":{"content":"a\x01"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}],}`,
	`{"usage":{"prompt_tokens":12345678901,"completion_tokens":1}}`,
	`{"x":01}`,
	`{"x":-}`,
	`{"x":1.}`,
	`{"x":"\uZZZZ"}`,
	`null`,
	`[]`,
}

// TestChunkScanMatchesUnmarshal checks that the chunks of the benchmark and
// the common server shapes take the scanner, and that every seed decodes as
// json.Unmarshal decodes it.
func TestChunkScanMatchesUnmarshal(t *testing.T) {
	for _, s := range chunkScanSeeds[:13] {
		var ch chunk
		var scratch []chunkChoice
		if !scanChunk([]byte(s), &ch, &scratch) {
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
	f.Fuzz(func(t *testing.T, data []byte) {
		checkChunkScan(t, data)
	})
}

func checkChunkScan(t *testing.T, data []byte) {
	t.Helper()
	var want chunk
	wantErr := json.Unmarshal(data, &want)
	var got chunk
	scratch := []chunkChoice{{Index: 7, Delta: chunkDelta{Content: json.RawMessage(`"stale"`)}}}
	if scanChunk(data, &got, &scratch) {
		if wantErr != nil {
			t.Fatalf("scanChunk accepted %q, json.Unmarshal says %v", data, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("scanChunk(%q) = %+v, json.Unmarshal %+v", data, got, want)
		}
	}
	got = chunk{}
	err := decodeChunk(data, &got, &scratch)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("decodeChunk(%q) error %v, json.Unmarshal %v", data, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeChunk(%q) = %+v, json.Unmarshal %+v", data, got, want)
	}
}

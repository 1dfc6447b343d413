package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// deltaStream is an OpenAI-compatible SSE body of n text deltas, the Chat
// Completions streaming format
// (https://platform.openai.com/docs/api-reference/chat-streaming).
func deltaStream(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok%d \"},\"finish_reason\":null}]}\n\n", i)
	}
	b.WriteString("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	b.WriteString("data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":10000}}\n\ndata: [DONE]\n\n")
	return b.Bytes()
}

func newDeltaServer(b *testing.B, n int) *httptest.Server {
	body := deltaStream(n)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkChatSendRelay measures chat/send relaying a 10 000-delta stream
// as chat/event notifications through the whole server (framing included),
// with the client reading every line. Compare with BenchmarkReadStreamDirect.
func BenchmarkChatSendRelay(b *testing.B) {
	srv := newDeltaServer(b, 10000)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := New(nil)
	go s.Serve(context.Background(), inR, outW)
	b.Cleanup(func() { inW.Close() })
	lines := bufio.NewScanner(outR)
	lines.Buffer(make([]byte, 1<<20), 1<<26)
	send := func(v string) {
		if _, err := io.WriteString(inW, v+"\n"); err != nil {
			b.Fatal(err)
		}
	}
	waitID := func(id string) {
		for lines.Scan() {
			line := lines.Bytes()
			if bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":`+id+`,`)) {
				if bytes.Contains(line, []byte(`"error"`)) {
					b.Fatalf("error reply: %s", line)
				}
				return
			}
		}
		b.Fatal("stdout closed")
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	waitID("0")
	req := `{"provider":{"kind":"openaiCompatible","model":"m","baseUrl":"` + srv.URL + `/v1","apiKey":"k-bench"},"request":{"messages":[{"role":"user","content":[{"type":"text","text":"go"}]}]}}`
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		id := fmt.Sprint(i)
		send(`{"jsonrpc":"2.0","id":` + id + `,"method":"chat/send","params":` + req + `}`)
		waitID(id)
	}
}

// BenchmarkReadStreamDirect is the baseline: fetch the same stream and decode
// every SSE data line, with no runtime in between.
func BenchmarkReadStreamDirect(b *testing.B) {
	srv := newDeltaServer(b, 10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		var text strings.Builder
		for sc.Scan() {
			line := sc.Bytes()
			if !bytes.HasPrefix(line, []byte("data: ")) || bytes.Equal(line, []byte("data: [DONE]")) {
				continue
			}
			var chunk struct {
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(line[6:], &chunk); err != nil {
				b.Fatal(err)
			}
			if len(chunk.Choices) > 0 {
				text.WriteString(chunk.Choices[0].Delta.Content)
			}
		}
		resp.Body.Close()
	}
}

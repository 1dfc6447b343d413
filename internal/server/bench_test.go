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

	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/provider/all"
)

// benchDeltas is the number of text deltas in each benchmark stream.
const benchDeltas = 10000

// benchFormat is one provider wire format replayed by a fake server: its
// body of benchDeltas text deltas, the provider config chat/send gets, and
// what a client reading the provider itself must do per stream (HTTP is done
// by the caller): split the body into events and decode each event's delta
// text, returning the whole text.
type benchFormat struct {
	name        string
	contentType string
	body        []byte
	provider    func(baseURL string) string
	read        func(body io.Reader) (string, error)
}

// benchFormats are the three wire formats of protocol.md ProviderConfig.kind.
var benchFormats = []benchFormat{
	{
		// Chat Completions streaming
		// (https://platform.openai.com/docs/api-reference/chat-streaming).
		name:        "openai",
		contentType: "text/event-stream",
		body:        deltaStream(benchDeltas),
		provider: func(u string) string {
			return `{"kind":"openaiCompatible","model":"m","baseUrl":"` + u + `/v1","apiKey":"k-bench"}`
		},
		read: readSSEText(func(data []byte) (string, error) {
			var chunk struct {
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(data, &chunk); err != nil || len(chunk.Choices) == 0 {
				return "", err
			}
			return chunk.Choices[0].Delta.Content, nil
		}),
	},
	{
		// Messages streaming
		// (https://docs.anthropic.com/en/docs/build-with-claude/streaming).
		name:        "anthropic",
		contentType: "text/event-stream",
		body:        anthropicStream(benchDeltas),
		provider: func(u string) string {
			return `{"kind":"anthropic","model":"claude-x","baseUrl":"` + u + `","apiKey":"k-bench"}`
		},
		read: readSSEText(func(data []byte) (string, error) {
			var ev struct {
				Type  string `json:"type"`
				Delta struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"delta"`
			}
			if err := json.Unmarshal(data, &ev); err != nil || ev.Type != "content_block_delta" || ev.Delta.Type != "text_delta" {
				return "", err
			}
			return ev.Delta.Text, nil
		}),
	},
	{
		// /api/chat streaming, one JSON object per line
		// (https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion).
		name:        "ollama",
		contentType: "application/x-ndjson",
		body:        ollamaStream(benchDeltas),
		provider: func(u string) string {
			return `{"kind":"ollama","model":"qwen3:8b","baseUrl":"` + u + `"}`
		},
		read: func(body io.Reader) (string, error) {
			sc := bufio.NewScanner(body)
			sc.Buffer(nil, 1<<20)
			var text strings.Builder
			for sc.Scan() {
				var line struct {
					Message struct {
						Content string `json:"content"`
					} `json:"message"`
				}
				if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
					return "", err
				}
				text.WriteString(line.Message.Content)
			}
			return text.String(), sc.Err()
		},
	},
}

// deltaStream is an OpenAI-compatible SSE body of n text deltas.
func deltaStream(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok%d \"},\"finish_reason\":null}]}\n\n", i)
	}
	b.WriteString("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	b.WriteString("data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":10000}}\n\ndata: [DONE]\n\n")
	return b.Bytes()
}

// anthropicStream is an Anthropic Messages SSE body of n text deltas.
func anthropicStream(n int) []byte {
	var b bytes.Buffer
	event := func(typ, data string) { fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, data) }
	event("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-x","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`)
	event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	for i := 0; i < n; i++ {
		event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"tok%d "}}`, i))
	}
	event("content_block_stop", `{"type":"content_block_stop","index":0}`)
	event("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`, n))
	event("message_stop", `{"type":"message_stop"}`)
	return b.Bytes()
}

// ollamaStream is an Ollama /api/chat NDJSON body of n content chunks.
func ollamaStream(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"model":"qwen3:8b","created_at":"2025-05-29T09:35:56.012345Z","message":{"role":"assistant","content":"tok%d "},"done":false}`+"\n", i)
	}
	fmt.Fprintf(&b, `{"model":"qwen3:8b","created_at":"2025-05-29T09:35:57.012345Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":1,"load_duration":1,"prompt_eval_count":5,"prompt_eval_duration":1,"eval_count":%d,"eval_duration":1}`+"\n", n)
	return b.Bytes()
}

// wantText is the concatenation of the n deltas of the streams above.
func wantText(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "tok%d ", i)
	}
	return b.String()
}

// readSSEText reads an event stream's "data:" lines and joins the text that
// decode finds in each (every event of these bodies is one data line).
func readSSEText(decode func(data []byte) (string, error)) func(io.Reader) (string, error) {
	return func(body io.Reader) (string, error) {
		sc := bufio.NewScanner(body)
		sc.Buffer(nil, 1<<20)
		var text strings.Builder
		for sc.Scan() {
			data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:"))
			data = bytes.TrimPrefix(data, []byte(" "))
			if !ok || bytes.Equal(data, []byte("[DONE]")) {
				continue
			}
			s, err := decode(data)
			if err != nil {
				return "", err
			}
			text.WriteString(s)
		}
		return text.String(), sc.Err()
	}
}

func newFormatServer(tb testing.TB, f benchFormat) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", f.contentType)
		w.Write(f.body)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// relayClient drives a Server over pipes as the extension does.
type relayClient struct {
	tb    testing.TB
	in    io.Writer
	lines *bufio.Scanner
}

func startRelayClient(tb testing.TB) *relayClient {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := New(nil)
	go s.Serve(context.Background(), inR, outW)
	tb.Cleanup(func() { inW.Close() })
	lines := bufio.NewScanner(outR)
	lines.Buffer(make([]byte, 1<<20), 1<<26)
	c := &relayClient{tb: tb, in: inW, lines: lines}
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	c.wait("0", nil)
	return c
}

func (c *relayClient) send(v string) {
	if _, err := io.WriteString(c.in, v+"\n"); err != nil {
		c.tb.Fatal(err)
	}
}

// wait reads lines up to the reply with id, passing every other line to
// other (when not nil), and returns the reply.
func (c *relayClient) wait(id string, other func(line []byte)) []byte {
	prefix := []byte(`{"jsonrpc":"2.0","id":` + id + `,`)
	for c.lines.Scan() {
		line := c.lines.Bytes()
		if bytes.HasPrefix(line, prefix) {
			if bytes.Contains(line, []byte(`"error"`)) {
				c.tb.Fatalf("error reply: %s", line)
			}
			return line
		}
		if other != nil {
			other(line)
		}
	}
	c.tb.Fatal("stdout closed")
	return nil
}

func chatSendRequest(id int, providerJSON string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"chat/send","params":{"provider":%s,"request":{"messages":[{"role":"user","content":[{"type":"text","text":"go"}]}]}}}`, id, providerJSON)
}

// BenchmarkChatSendRelay measures chat/send relaying a 10 000-delta stream
// as chat/event notifications through the whole server (framing included),
// with the client reading every line. It reports the chat/event
// notifications per stream (deltas merge while a write is in progress).
// Compare with BenchmarkReadStreamDirect (a client reading the provider
// itself) and BenchmarkAdapterDirect (the runtime's adapter without the
// relay).
func BenchmarkChatSendRelay(b *testing.B) {
	for _, f := range benchFormats {
		b.Run(f.name, func(b *testing.B) {
			srv := newFormatServer(b, f)
			c := startRelayClient(b)
			prov := f.provider(srv.URL)
			events := 0
			count := func([]byte) { events++ }
			b.ResetTimer()
			for i := 1; i <= b.N; i++ {
				c.send(chatSendRequest(i, prov))
				c.wait(fmt.Sprint(i), count)
			}
			b.ReportMetric(float64(events)/float64(b.N), "notifications/op")
		})
	}
}

// BenchmarkReadStreamDirect is the baseline of issue 2: fetch the same stream
// and decode every event's delta text with encoding/json, with no runtime in
// between.
func BenchmarkReadStreamDirect(b *testing.B) {
	for _, f := range benchFormats {
		b.Run(f.name, func(b *testing.B) {
			srv := newFormatServer(b, f)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
				if err != nil {
					b.Fatal(err)
				}
				text, err := f.read(resp.Body)
				resp.Body.Close()
				if err != nil || len(text) == 0 {
					b.Fatalf("read %d bytes: %v", len(text), err)
				}
			}
		})
	}
}

// BenchmarkAdapterDirect is the runtime's own provider adapter reading the
// stream with no relay: the difference to BenchmarkChatSendRelay is the cost
// of the server, the relay and the JSON-RPC framing alone.
func BenchmarkAdapterDirect(b *testing.B) {
	for _, f := range benchFormats {
		b.Run(f.name, func(b *testing.B) {
			srv := newFormatServer(b, f)
			cfg, err := provider.ParseConfig(json.RawMessage(f.provider(srv.URL)))
			if err != nil {
				b.Fatal(err)
			}
			prov, err := all.New(cfg, nil)
			if err != nil {
				b.Fatal(err)
			}
			req, err := provider.ParseRequest(json.RawMessage(`{"messages":[{"role":"user","content":[{"type":"text","text":"go"}]}]}`))
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var text strings.Builder
				_, err := prov.Stream(context.Background(), req, func(e provider.Event) {
					if e.Type == provider.EventTextDelta {
						text.WriteString(e.Text)
					}
				})
				if err != nil || text.Len() == 0 {
					b.Fatalf("stream: %v", err)
				}
			}
		})
	}
}

// TestChatSendRelaysEveryDelta checks what the relay benchmark relies on:
// the 10 000 deltas of each format reach the client as chat/event textDelta
// notifications whose texts, in order, are the whole text, and the reply's
// text is the same; so do the direct readers of the baseline.
func TestChatSendRelaysEveryDelta(t *testing.T) {
	want := wantText(benchDeltas)
	for _, f := range benchFormats {
		t.Run(f.name, func(t *testing.T) {
			srv := newFormatServer(t, f)
			direct, err := f.read(bytes.NewReader(f.body))
			if err != nil || direct != want {
				t.Fatalf("the direct reader got %d bytes (%v), want %d", len(direct), err, len(want))
			}
			c := startRelayClient(t)
			c.send(chatSendRequest(1, f.provider(srv.URL)))
			var got strings.Builder
			notes := 0
			reply := c.wait("1", func(line []byte) {
				var n struct {
					Method string `json:"method"`
					Params struct {
						RequestID int `json:"requestId"`
						Event     struct {
							Type string `json:"type"`
							Text string `json:"text"`
						} `json:"event"`
					} `json:"params"`
				}
				if err := json.Unmarshal(line, &n); err != nil {
					t.Fatalf("line %q: %v", line, err)
				}
				if n.Method != "chat/event" || n.Params.RequestID != 1 {
					t.Fatalf("unexpected line %s", line)
				}
				if n.Params.Event.Type == "textDelta" {
					got.WriteString(n.Params.Event.Text)
					notes++
				}
			})
			if got.String() != want {
				t.Fatalf("relayed text of %d bytes in %d notifications differs from the %d bytes sent", got.Len(), notes, len(want))
			}
			var res struct {
				Result struct {
					Text       string `json:"text"`
					StopReason string `json:"stopReason"`
				} `json:"result"`
			}
			if err := json.Unmarshal(reply, &res); err != nil || res.Result.Text != want || res.Result.StopReason != "endTurn" {
				t.Fatalf("reply stopReason %q, text of %d bytes, err %v", res.Result.StopReason, len(res.Result.Text), err)
			}
			t.Logf("%d deltas in %d textDelta notifications", benchDeltas, notes)
		})
	}
}

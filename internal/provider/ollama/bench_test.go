package ollama

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// streamBody is a recorded-shape /api/chat reply of n content chunks and the
// final done line (docs/api.md "Chat Request (Streaming)").
func streamBody(n int) []byte {
	var b bytes.Buffer
	for range n {
		b.WriteString(chunk("tok "))
		b.WriteByte('\n')
	}
	b.WriteString(doneLine("stop", 26, n))
	b.WriteByte('\n')
	return b.Bytes()
}

// BenchmarkStream compares Stream over 10 000 content chunks with the floor:
// reading the same body over HTTP and decoding each line into a minimal
// struct, with no events, fold or checks.
func BenchmarkStream(b *testing.B) {
	const chunks = 10000
	body := streamBody(chunks)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		_, _ = w.Write(body)
	}))
	defer srv.Close()

	b.Run("Stream", func(b *testing.B) {
		p, err := New(provider.Config{Model: "qwen3:8b", BaseURL: srv.URL, TimeoutMs: 5000}, nil)
		if err != nil {
			b.Fatal(err)
		}
		req := simpleRequest()
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var n int
			res, err := p.Stream(context.Background(), req, func(e provider.Event) {
				if e.Type == provider.EventTextDelta {
					n++
				}
			})
			if err != nil || n != chunks || len(res.Text) != 4*chunks {
				b.Fatalf("err %v, %d deltas", err, n)
			}
		}
	})

	b.Run("Direct", func(b *testing.B) {
		client := &http.Client{}
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			resp, err := client.Post(srv.URL+"/api/chat", "application/json", strings.NewReader(`{}`))
			if err != nil {
				b.Fatal(err)
			}
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
			var n int
			for sc.Scan() {
				var c struct {
					Message struct {
						Content string `json:"content"`
					} `json:"message"`
					Done bool `json:"done"`
				}
				if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
					b.Fatal(err)
				}
				if c.Message.Content != "" {
					n++
				}
			}
			resp.Body.Close()
			if sc.Err() != nil || n != chunks {
				b.Fatalf("err %v, %d chunks", sc.Err(), n)
			}
		}
	})
}

package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// benchDeltas is the number of text deltas in the benchmark stream.
const benchDeltas = 10_000

func benchBody() string {
	chunks := make([]string, 0, benchDeltas+2)
	for i := 0; i < benchDeltas; i++ {
		chunks = append(chunks, textChunk(fmt.Sprintf("tok%d ", i)))
	}
	chunks = append(chunks, finishChunk("stop"), usageChunk)
	return sse(chunks...)
}

// BenchmarkStream compares Stream with a baseline that reads the same fake
// body over HTTP and only json.Unmarshals each data line.
func BenchmarkStream(b *testing.B) {
	body := benchBody()
	f := newFake(b, replay(body))
	b.Run("Stream", func(b *testing.B) {
		cl := compat(b, f)
		req := userText("hi")
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			res, err := cl.Stream(context.Background(), req, func(e provider.Event) {
				if e.Type == provider.EventTextDelta {
					n++
				}
			})
			if err != nil || n != benchDeltas || res.StopReason != provider.StopEndTurn {
				b.Fatalf("n %d err %v", n, err)
			}
		}
	})
	b.Run("Baseline", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			resp, err := http.Post(f.srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
			if err != nil {
				b.Fatal(err)
			}
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 1<<20)
			n := 0
			for sc.Scan() {
				line, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
				if !ok || bytes.Equal(line, doneMarker) {
					continue
				}
				var c struct {
					Choices []struct {
						Delta struct {
							Content string `json:"content"`
						} `json:"delta"`
					} `json:"choices"`
				}
				if err := json.Unmarshal(line, &c); err != nil {
					b.Fatal(err)
				}
				if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
					n++
				}
			}
			resp.Body.Close()
			if n != benchDeltas {
				b.Fatalf("n = %d", n)
			}
		}
	})
}

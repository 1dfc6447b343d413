package openai

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/task-x/task-x-runtime/internal/provider"
)

// lockedBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestLogsCarryNoKeyPromptOrOutput(t *testing.T) {
	const key = "sk-secret-key-abcdefghijklmnopqrstuvwxyz"
	var buf lockedBuffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ok := newFake(t, replay(sse(textChunk("model-output-text"), finishChunk("stop"))))
	bad := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(401)
		w.Write([]byte(`{"error":{"message":"bad key ` + key + `"}}`))
	})
	for _, f := range []*fake{ok, bad} {
		p, err := New(provider.Config{Kind: provider.OpenAICompatible, Model: "m", BaseURL: f.srv.URL + "/v1", APIKey: key, TimeoutMs: 5000}, &Options{Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		p.Stream(context.Background(), userText("secret-prompt-text"), nil)
		p.ListModels(context.Background())
	}
	out := buf.String()
	if out == "" {
		t.Fatal("nothing logged at debug level")
	}
	for _, s := range []string{key, key[:12], "secret-prompt-text", "model-output-text"} {
		if strings.Contains(out, s) {
			t.Errorf("log contains %q:\n%s", s, out)
		}
	}
}

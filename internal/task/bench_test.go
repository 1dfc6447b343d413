package task

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/store"
)

// Bytes written per turn as a task grows (docs/tasklog.md). A turn is what
// a model call with one tool call adds: iteration, an assistant message
// (about 300 bytes of text), usage, toolStarted, a tool result of about
// 1.2 KB, context; 200 such turns make a task file of about 318 KB, as the
// measurement of the format before the log had. Bytes are the process's
// write(2) bytes (/proc/self/io wchar) around each turn.

var measureAt = []int{10, 100, 1000}

func wchar(tb testing.TB) int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		tb.Skip("no /proc/self/io")
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	tb.Skip("no wchar in /proc/self/io")
	return 0
}

var (
	turnText   = strings.Repeat("I read the handler and will now change how the port is chosen. ", 5)
	turnResult = strings.Repeat("  42\tfunc handle(w http.ResponseWriter, r *http.Request) { serve(w, r) }\n", 17)
)

// turnEngine emits turns model turns with one read_file call each and
// calls after(n) when turn n's events are out.
type turnEngine struct {
	turns int
	after func(n int)
}

func (e *turnEngine) Run(ctx context.Context, job *Job) (Summary, []provider.Message) {
	job.Emit(protocol.StartedEvent{TaskID: job.TaskID, ChatMode: "agent", Model: "m"})
	var msgs []provider.Message
	for n := 1; n <= e.turns; n++ {
		id := fmt.Sprintf("call_%d", n)
		input := json.RawMessage(`{"path":"src/server/handler.go"}`)
		job.Emit(protocol.IterationEvent{N: n})
		job.Emit(protocol.TextDeltaEvent{Text: turnText})
		job.Emit(protocol.AssistantMessageEvent{Text: turnText, ToolCalls: []protocol.ToolCall{{ID: id, Name: "read_file", Input: input}}})
		job.Emit(protocol.UsageEvent{InputTokens: 1000 * n, OutputTokens: 80, TotalInputTokens: 1000 * n * n, TotalOutputTokens: 80 * n})
		job.Emit(protocol.ToolStartedEvent{CallID: id, Tool: "read_file", Input: input, Permission: "read"})
		job.Emit(protocol.ToolFinishedEvent{CallID: id, Tool: "read_file", OK: true, Result: turnResult, DurationMs: 3})
		job.Emit(protocol.ContextEvent{UsedTokens: 1080 * n, WindowTokens: 200000})
		msgs = append(msgs,
			provider.Message{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartText, Text: turnText}, {Type: provider.PartToolUse, ID: id, Name: "read_file", Input: input}}},
			provider.Message{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartToolResult, ToolUseID: id, ToolName: "read_file", Content: turnResult}}})
		if e.after != nil {
			e.after(n)
		}
	}
	job.Emit(protocol.DoneEvent{Status: StatusCompleted})
	return Summary{TaskID: job.TaskID, Status: StatusCompleted}, msgs
}

// BenchmarkTaskLogBytesPerTurn runs a 1000-turn task recorded in a task
// folder and reports the bytes written by turns 10, 100 and 1000 (they
// stay flat: each turn appends its own records), and the final snapshot.
func BenchmarkTaskLogBytesPerTurn(b *testing.B) {
	proj := openProject(b)
	for b.Loop() {
		st, err := store.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		r := &Runner{Store: st}
		got := map[int]int64{}
		took := map[int]time.Duration{}
		last, lastT := wchar(b), time.Now()
		var start, at200 int64
		eng := &turnEngine{turns: 1000, after: func(n int) {
			now, nowT := wchar(b), time.Now()
			got[n], took[n] = now-last, nowT.Sub(lastT)
			last, lastT = now, nowT
			if n == 200 {
				at200 = now - start
			}
		}}
		prep, err := r.Prepare(&Request{Prompt: "make the port configurable", Project: proj, Engine: eng})
		if err != nil {
			b.Fatal(err)
		}
		before := wchar(b)
		start = before
		if _, err := r.Run(context.Background(), prep); err != nil {
			b.Fatal(err)
		}
		final := wchar(b) - last
		t, _ := st.Load(prep.TaskID())
		var line bytes.Buffer
		for _, n := range measureAt {
			b.ReportMetric(float64(got[n]), fmt.Sprintf("B/turn@%d", n))
			fmt.Fprintf(&line, " turn %d: %d B (%v);", n, got[n], took[n].Round(10*time.Microsecond))
		}
		snap, _ := json.Marshal(t)
		fmt.Printf("task log:%s 200 turns: %d B; end snapshot %d B; 1000 turns wrote %d B in all; task file %d B\n",
			line.String(), at200, final, wchar(b)-before, len(snap))
	}
}

// BenchmarkWholeFileBytesPerTurn is the format before the log for
// comparison: the whole task file rewritten twice per turn (after the
// assistant message and after the tool result, as the 500 ms-throttled
// recorder did at a model call per second), for 200 turns (1000 would
// write about 2 GB).
func BenchmarkWholeFileBytesPerTurn(b *testing.B) {
	for b.Loop() {
		st, err := store.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		rec := &store.Task{TaskID: "task-whole", Title: "make the port configurable", Status: store.StatusRunning, Owner: store.Self()}
		var msgs []provider.Message
		last := wchar(b)
		var line bytes.Buffer
		before := last
		for n := 1; n <= 200; n++ {
			id := fmt.Sprintf("call_%d", n)
			input := json.RawMessage(`{"path":"src/server/handler.go"}`)
			start := time.Now()
			msgs = append(msgs, provider.Message{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartText, Text: turnText}, {Type: provider.PartToolUse, ID: id, Name: "read_file", Input: input}}})
			for range 2 {
				rec.Messages, _ = json.Marshal(msgs)
				if err := st.Save(rec); err != nil {
					b.Fatal(err)
				}
			}
			msgs = append(msgs, provider.Message{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartToolResult, ToolUseID: id, ToolName: "read_file", Content: turnResult}}})
			now := wchar(b)
			for _, m := range []int{10, 100, 200} {
				if n == m {
					b.ReportMetric(float64(now-last), fmt.Sprintf("B/turn@%d", n))
					fmt.Fprintf(&line, " turn %d: %d B (%v);", n, now-last, time.Since(start).Round(10*time.Microsecond))
				}
			}
			last = now
		}
		fmt.Printf("whole file:%s 200 turns wrote %d B for a task file of %d B\n", line.String(), last-before, len(rec.Messages))
	}
}

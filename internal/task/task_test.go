package task

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/logx"
	"github.com/task-x/task-x-runtime/internal/project"
	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/store"
)

// fakeControl records steering and cancelTool.
type fakeControl struct {
	steered   []string
	cancelled []string
}

func (c *fakeControl) Steer(text string) bool { c.steered = append(c.steered, text); return true }
func (c *fakeControl) CancelTool(callID string) bool {
	c.cancelled = append(c.cancelled, callID)
	return true
}

// fakeEngine is an Engine that attaches a control, waits until the test
// releases it, and answers with the job's prompt.
type fakeEngine struct {
	ctl     *fakeControl
	ready   chan *Job
	release chan struct{}
}

func (e *fakeEngine) Run(ctx context.Context, job *Job) (Summary, []provider.Message) {
	job.Attach(e.ctl)
	job.Emit(protocol.StartedEvent{TaskID: job.TaskID})
	e.ready <- job
	<-e.release
	job.Emit(protocol.DoneEvent{Status: StatusCompleted})
	msgs := append(append([]provider.Message(nil), job.History...),
		provider.Message{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: job.Prompt}}},
		provider.Message{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartText, Text: "done " + job.Env.TaskID}}})
	return Summary{TaskID: job.TaskID, Status: StatusCompleted, Text: "done"}, msgs
}

func openProject(t testing.TB) *project.Project {
	t.Helper()
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	p, err := project.Open(context.Background(), root, &project.Options{NoParse: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunnerRunsSteersRecordsResumes(t *testing.T) {
	proj := openProject(t)
	secrets := &logx.Secrets{}
	secrets.Add("sk-secret-value-1")
	r := &Runner{Secrets: secrets}
	eng := &fakeEngine{ctl: &fakeControl{}, ready: make(chan *Job, 1), release: make(chan struct{})}
	var events []string
	prep, err := r.Prepare(&Request{Prompt: "fix main with sk-secret-value-1", Project: proj, Engine: eng,
		Editor: &Editor{ActiveFile: filepath.Join(proj.Root(), "main.go")},
		Emit:   func(ev protocol.AgentEvent) { events = append(events, ev.EventType()) }})
	if err != nil {
		t.Fatal(err)
	}
	id := prep.TaskID()
	done := make(chan Summary)
	go func() {
		sum, err := r.Run(context.Background(), prep)
		if err != nil {
			t.Error(err)
		}
		done <- sum
	}()
	job := <-eng.ready
	if !strings.Contains(job.Prompt, "<editor-context>") || !strings.Contains(job.Prompt, "Active file: main.go") ||
		!strings.Contains(job.System, "Workspace root: "+proj.Root()) || job.Env.TaskID != id || job.Project != proj {
		t.Fatalf("job = %+v", job)
	}
	if !r.Running(id) || !r.Steer(id, "also add tests") || !r.CancelTool(id, "call_1") || r.Steer("task-other", "x") {
		t.Fatal("steer/cancelTool do not reach the running task")
	}
	if _, err := r.Run(context.Background(), prep); !errors.Is(err, ErrBusy) {
		t.Fatalf("second run of a running task: %v", err)
	}
	if ok, _ := r.Delete(id); ok {
		t.Fatal("a running task was deleted")
	}
	close(eng.release)
	sum := <-done
	if sum.Status != StatusCompleted || r.Running(id) || r.Steer(id, "late") {
		t.Fatalf("summary %+v, running %v", sum, r.Running(id))
	}
	if strings.Join(eng.ctl.steered, ",") != "also add tests" || strings.Join(eng.ctl.cancelled, ",") != "call_1" {
		t.Fatalf("control got %+v", eng.ctl)
	}
	if strings.Join(events, ",") != "started,done" {
		t.Fatalf("events %v", events)
	}
	saved, err := r.Load(id)
	if err != nil || saved.Status != store.StatusCompleted {
		t.Fatalf("saved %+v, %v", saved, err)
	}
	if strings.Contains(string(saved.Messages), "sk-secret-value-1") || strings.Contains(saved.Title, "sk-secret-value-1") {
		t.Fatal("a key reached the saved task")
	}
	if list, _ := r.List(); saved.Root != proj.Root() || len(list) != 1 || list[0].Root != proj.Root() {
		t.Fatalf("the task's folder: saved %q, listed %+v, want %q", saved.Root, list, proj.Root())
	}

	// Resume: the history comes from the store.
	eng2 := &fakeEngine{ctl: &fakeControl{}, ready: make(chan *Job, 1), release: make(chan struct{})}
	close(eng2.release)
	prep, err = r.Prepare(&Request{TaskID: id, Prompt: "next", Project: proj, Engine: eng2})
	if err != nil {
		t.Fatal(err)
	}
	go r.Run(context.Background(), prep)
	job = <-eng2.ready
	if len(job.History) != 2 || job.TaskID != id {
		t.Fatalf("resumed history %+v", job.History)
	}
}

func TestRunnerRefusesBadRequests(t *testing.T) {
	proj := openProject(t)
	r := &Runner{}
	eng := &fakeEngine{}
	var ie *InvalidError
	if _, err := r.Prepare(&Request{TaskID: "../x", Prompt: "p", Project: proj, Engine: eng}); !errors.As(err, &ie) {
		t.Fatalf("bad id: %v", err)
	}
	if _, err := r.Prepare(&Request{Prompt: "p", Project: proj, Engine: eng, Editor: &Editor{Mentions: []string{"../outside.txt"}}}); !errors.As(err, &ie) {
		t.Fatalf("mention outside: %v", err)
	}
	st := store.NewMemory(0)
	st.Save(&store.Task{TaskID: "task-broken", Messages: json.RawMessage(`{"not":"a list"}`)})
	r.Store = st
	if _, err := r.Prepare(&Request{TaskID: "task-broken", Prompt: "p", Project: proj, Engine: eng}); !errors.As(err, &ie) {
		t.Fatalf("unreadable conversation: %v", err)
	}
}

func TestMemoryStore(t *testing.T) {
	m := store.NewMemory(2)
	for _, id := range []string{"task-a", "task-b", "task-c"} {
		if err := m.Save(&store.Task{TaskID: id, Title: id}); err != nil {
			t.Fatal(err)
		}
	}
	list, _ := m.List()
	if len(list) != 2 || list[0].TaskID != "task-c" {
		t.Fatalf("list %+v", list)
	}
	if _, err := m.Load("task-a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("oldest not dropped: %v", err)
	}
	if ok, _ := m.Delete("task-b"); !ok {
		t.Fatal("delete")
	}
	var _ Store = m
	var _ Store = (*store.Store)(nil)
}

package task

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/task-x/task-x-runtime/internal/protocol"
	"github.com/task-x/task-x-runtime/internal/provider"
	"github.com/task-x/task-x-runtime/internal/store"
)

// streamEngine emits started, n iterations and done; after the 100th it
// signals midway and waits for resume, after the 200th it signals more.
type streamEngine struct {
	n                    int
	midway, resume, more chan struct{}
}

func (e *streamEngine) Run(ctx context.Context, job *Job) (Summary, []provider.Message) {
	job.Emit(protocol.StartedEvent{TaskID: job.TaskID})
	for i := 1; i <= e.n; i++ {
		job.Emit(protocol.IterationEvent{N: i})
		switch i {
		case 100:
			close(e.midway)
			<-e.resume
		case 200:
			close(e.more)
		}
	}
	job.Emit(protocol.DoneEvent{Status: StatusCompleted})
	return Summary{TaskID: job.TaskID, Status: StatusCompleted}, nil
}

// TestReplayWhileRunning replays a task while its events stream: the sink
// sees live events, then the replayed ones and the marker, then the live
// ones held meanwhile, none lost, twice or out of order.
func TestReplayWhileRunning(t *testing.T) {
	for _, withDir := range []bool{false, true} {
		proj := openProject(t)
		r := &Runner{}
		if withDir {
			st, err := store.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			r.Store = st
		}
		type item struct {
			replay bool
			typ    string
			n      int
		}
		var mu sync.Mutex
		var seen []item
		eng := &streamEngine{n: 400, midway: make(chan struct{}), resume: make(chan struct{}), more: make(chan struct{})}
		var once sync.Once
		prep, err := r.Prepare(&Request{Prompt: "stream", Project: proj, Engine: eng, Emit: func(ev protocol.AgentEvent) {
			it, _ := ev.(protocol.IterationEvent)
			mu.Lock()
			seen = append(seen, item{typ: ev.EventType(), n: it.N})
			mu.Unlock()
		}})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			if _, err := r.Run(context.Background(), prep); err != nil {
				t.Error(err)
			}
		}()
		<-eng.midway
		info, err := r.Replay(prep.TaskID(), func(raw json.RawMessage) {
			// The task goes on while the replay sends: its events 101..200
			// come now and must be held.
			once.Do(func() { close(eng.resume); <-eng.more })
			var ev struct {
				Type string `json:"type"`
				N    int    `json:"n"`
			}
			json.Unmarshal(raw, &ev)
			mu.Lock()
			seen = append(seen, item{replay: true, typ: ev.Type, n: ev.N})
			mu.Unlock()
		})
		<-done
		if err != nil {
			t.Fatal(err)
		}
		// live iterations before the replay, then the replay, then the rest.
		var liveBefore, replayed, liveAfter []int
		phase := 0
		for _, it := range seen {
			switch {
			case it.replay && it.typ == "replayed":
				phase = 2
			case it.replay:
				if phase == 2 {
					t.Fatal("a replayed event after the marker")
				}
				phase = 1
				if it.typ == "iteration" {
					replayed = append(replayed, it.n)
				}
			case phase == 1:
				t.Fatalf("a live event (%s %d) inside the replay", it.typ, it.n)
			case it.typ == "iteration" && phase == 0:
				liveBefore = append(liveBefore, it.n)
			case it.typ == "iteration":
				liveAfter = append(liveAfter, it.n)
			}
		}
		if len(replayed) != len(liveBefore) || len(liveBefore) != 100 || !info.Running {
			t.Fatalf("replayed %d iterations, %d were live before it (running %v)", len(replayed), len(liveBefore), info.Running)
		}
		all := append(append([]int(nil), liveBefore...), liveAfter...)
		for i, n := range all {
			if n != i+1 || (i < len(replayed) && replayed[i] != n) {
				t.Fatalf("iteration %d is %d (replayed %v)", i+1, n, replayed[:min(len(replayed), i+1)])
			}
		}
		if len(all) != 400 || seen[len(seen)-1].typ != "done" {
			t.Fatalf("%d live iterations, last %+v", len(all), seen[len(seen)-1])
		}
	}
}

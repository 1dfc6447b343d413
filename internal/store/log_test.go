package store

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func msgRec(n int) Record {
	return Record{Kind: RecMessage, Value: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n))}
}

func evRec(n int) Record {
	return Record{Kind: RecEvent, Value: json.RawMessage(fmt.Sprintf(`{"type":"iteration","n":%d}`, n))}
}

// numbers are the "n" fields of a JSON array of objects.
func numbers(t *testing.T, raw json.RawMessage) []int {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	var xs []struct{ N int }
	if err := json.Unmarshal(raw, &xs); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = x.N
	}
	return out
}

func TestLogAppendLoadFinish(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Begin(&Task{TaskID: "t1", Title: "log", Status: StatusRunning, Owner: Self()})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if err := l.Append(msgRec(i), evRec(i)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Load("t1")
	if err != nil || got.Status != StatusRunning || fmt.Sprint(numbers(t, got.Messages)) != "[1 2 3]" || fmt.Sprint(numbers(t, got.Events)) != "[1 2 3]" {
		t.Fatalf("while running: %+v %v", got, err)
	}
	if list, _ := s.List(); len(list) != 1 || list[0].Status != StatusRunning {
		t.Fatalf("List while running: %+v", list)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "t1.json")); err != nil {
		t.Fatalf("a new task has a task file while it runs: %v", err)
	}
	if err := l.Finish(&Task{Title: "log", Status: StatusCompleted, Summary: json.RawMessage(`{"status":"completed"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "t1.log")); !os.IsNotExist(err) {
		t.Fatalf("the log is still there after Finish: %v", err)
	}
	got, err = s.Load("t1")
	if err != nil || got.Status != StatusCompleted || fmt.Sprint(numbers(t, got.Messages)) != "[1 2 3]" || fmt.Sprint(numbers(t, got.Events)) != "[1 2 3]" {
		t.Fatalf("after Finish: %+v %v", got, err)
	}
	// A second run continues the snapshot.
	l, err = s.Begin(&Task{TaskID: "t1", Title: "log", Status: StatusRunning, Owner: Self()})
	if err != nil {
		t.Fatal(err)
	}
	l.Append(msgRec(4))
	got, _ = s.Load("t1")
	if got.Status != StatusRunning || fmt.Sprint(numbers(t, got.Messages)) != "[1 2 3 4]" || len(got.Summary) != 0 {
		t.Fatalf("second run: %+v", got)
	}
	l.Finish(&Task{Status: StatusCompleted, Messages: json.RawMessage(`[{"n":1},{"n":2},{"n":3},{"n":4},{"n":5}]`)})
	got, _ = s.Load("t1")
	if fmt.Sprint(numbers(t, got.Messages)) != "[1 2 3 4 5]" || fmt.Sprint(numbers(t, got.Events)) != "[1 2 3]" {
		t.Fatalf("final messages replace the log's: %+v", got)
	}
}

func TestLogTornLastRecordDropped(t *testing.T) {
	s, _ := Open(t.TempDir())
	l, err := s.Begin(&Task{TaskID: "t1", Status: StatusRunning, Owner: Self()})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		l.Append(msgRec(i))
	}
	logPath := filepath.Join(s.dir, "t1.log")
	whole, _ := os.ReadFile(logPath)
	line, _ := encodeRecord(msgRec(6))
	for name, tail := range map[string][]byte{
		"torn":         line[:len(line)/2],
		"bad checksum": append([]byte("00000000"), line[8:]...),
		"no newline":   line[:len(line)-1],
	} {
		os.WriteFile(logPath, append(append([]byte(nil), whole...), tail...), 0o600)
		got, err := s.Load("t1")
		if err != nil || fmt.Sprint(numbers(t, got.Messages)) != "[1 2 3 4 5]" {
			t.Fatalf("%s: %+v %v", name, got, err)
		}
	}
	l.Close()
	// The next run folds the whole records in and drops the torn one.
	l, err = s.Begin(&Task{TaskID: "t1", Status: StatusRunning, Owner: Self()})
	if err != nil {
		t.Fatal(err)
	}
	l.Append(msgRec(6))
	l.Finish(&Task{Status: StatusCompleted})
	got, _ := s.Load("t1")
	if fmt.Sprint(numbers(t, got.Messages)) != "[1 2 3 4 5 6]" {
		t.Fatalf("after the next run: %s", got.Messages)
	}
}

func TestLogStaleAfterSnapshotIgnored(t *testing.T) {
	s, _ := Open(t.TempDir())
	l, _ := s.Begin(&Task{TaskID: "t1", Status: StatusRunning, Owner: Self()})
	l.Append(msgRec(1), msgRec(2))
	logPath := filepath.Join(s.dir, "t1.log")
	data, _ := os.ReadFile(logPath)
	l.Finish(&Task{Status: StatusCompleted})
	// A crash between the snapshot's rename and the log's removal.
	os.WriteFile(logPath, data, 0o600)
	got, _ := s.Load("t1")
	if got.Status != StatusCompleted || fmt.Sprint(numbers(t, got.Messages)) != "[1 2]" {
		t.Fatalf("stale log applied again: %+v", got)
	}
}

func TestLogOneWriterAcrossStores(t *testing.T) {
	dir := t.TempDir()
	a, _ := Open(dir)
	b, _ := Open(dir) // another runtime on the same data folder
	l, err := a.Begin(&Task{TaskID: "t1", Status: StatusRunning, Owner: Self()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Begin(&Task{TaskID: "t1", Status: StatusRunning}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Begin: %v", err)
	}
	if err := b.Save(&Task{TaskID: "t1", Status: StatusCompleted}); !errors.Is(err, ErrLocked) {
		t.Fatalf("Save of a running task: %v", err)
	}
	if ok, err := b.Delete("t1"); ok || err != nil {
		t.Fatalf("Delete of a running task: %v %v", ok, err)
	}
	if ch, err := b.FailOrphans(func(Owner) bool { return false }); err != nil || len(ch) != 0 {
		t.Fatalf("the sweep failed a task whose lock is held: %v %v", ch, err)
	}
	l.Append(msgRec(1))
	l.Finish(&Task{Status: StatusCompleted})
	got, _ := b.Load("t1")
	if got.Status != StatusCompleted || fmt.Sprint(numbers(t, got.Messages)) != "[1]" {
		t.Fatalf("%+v", got)
	}
	if ok, _ := b.Delete("t1"); !ok {
		t.Fatal("Delete after the end")
	}
	if _, err := a.Load("t1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load after Delete: %v", err)
	}
}

func TestOldTaskFileLoadsAndContinues(t *testing.T) {
	s, _ := Open(t.TempDir())
	old := `{
 "taskId": "old-1", "title": "before the log", "status": "completed", "chatMode": "agent", "model": "m",
 "createdAt": "2026-01-02T03:04:05Z", "updatedAt": "2026-01-02T03:04:06Z", "owner": {"pid": 1, "startTime": 2},
 "summary": {"status": "completed"}, "messages": [{"n": 1}, {"n": 2}]
}`
	os.WriteFile(filepath.Join(s.dir, "old-1.json"), []byte(old), 0o600)
	got, err := s.Load("old-1")
	if err != nil || got.Title != "before the log" || fmt.Sprint(numbers(t, got.Messages)) != "[1 2]" {
		t.Fatalf("%+v %v", got, err)
	}
	l, err := s.Begin(&Task{TaskID: "old-1", Title: "before the log", Status: StatusRunning, Owner: Self()})
	if err != nil {
		t.Fatal(err)
	}
	l.Append(msgRec(3))
	l.Finish(&Task{Title: "before the log", Status: StatusCompleted})
	got, _ = s.Load("old-1")
	if fmt.Sprint(numbers(t, got.Messages)) != "[1 2 3]" || got.CreatedAt.Year() != 2026 || got.CreatedAt.Month() != 1 {
		t.Fatalf("continued: %+v", got)
	}
}

// TestLogCrash kills a process that appends to task logs with SIGKILL at
// random points, round after round on the same tasks: every task then
// loads with every record the writer saw appended (and at most the one it
// was writing), in order, none twice; the sweep marks them failed.
func TestLogCrash(t *testing.T) {
	if dir := os.Getenv("TASKX_LOG_CRASH_DIR"); dir != "" {
		crashWriter(dir)
		return
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(17, uint64(os.Getpid())))
	acked := map[string]int{} // task → last record number the writer reported
	for round := range 5 {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestLogCrash$")
		cmd.Env = append(os.Environ(), "TASKX_LOG_CRASH_DIR="+dir)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		killAt := 50 + rng.IntN(600)
		// Lines printed before the kill landed are read to the end, so
		// acked is what the writer saw appended when it died.
		for n := 0; sc.Scan(); n++ {
			id, num, ok := strings.Cut(sc.Text(), " ")
			if !ok {
				continue
			}
			k, _ := strconv.Atoi(num)
			acked[id] = k
			if n == killAt {
				cmd.Process.Signal(syscall.SIGKILL)
			}
		}
		cmd.Wait()
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.FailOrphans(nil); err != nil {
			t.Fatal(err)
		}
		for id, last := range acked {
			got, err := s.Load(id)
			if err != nil {
				t.Fatalf("round %d: %s does not load: %v", round, id, err)
			}
			ns := numbers(t, got.Messages)
			if len(ns) < last || len(ns) > last+1 {
				t.Fatalf("round %d: %s has %d records, the writer saw %d appended", round, id, len(ns), last)
			}
			for i, n := range ns {
				if n != i+1 {
					t.Fatalf("round %d: %s record %d is %d", round, id, i, n)
				}
			}
			acked[id] = len(ns)
			if got.Status == StatusRunning {
				t.Fatalf("round %d: %s still running after the sweep", round, id)
			}
		}
	}
	if len(acked) == 0 {
		t.Fatal("the writer reported nothing")
	}
}

// crashWriter appends numbered message records to three tasks in turn,
// continuing what each holds, and prints "<task> <n>" after each append
// returned; it runs until it is killed.
func crashWriter(dir string) {
	s, err := Open(dir)
	if err != nil {
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	pad := strings.Repeat("x", 700)
	for {
		for _, id := range []string{"crash-a", "crash-b", "crash-c"} {
			n := 0
			if t, err := s.Load(id); err == nil && len(t.Messages) > 0 {
				var xs []json.RawMessage
				json.Unmarshal(t.Messages, &xs)
				n = len(xs)
			}
			l, err := s.Begin(&Task{TaskID: id, Title: id, Status: StatusRunning, Owner: Self()})
			if err != nil {
				os.Exit(3)
			}
			for range 40 {
				n++
				v := fmt.Sprintf(`{"n":%d,"pad":%q}`, n, pad)
				if err := l.Append(Record{Kind: RecMessage, Value: json.RawMessage(v)}, evRec(n)); err != nil {
					os.Exit(4)
				}
				fmt.Fprintf(w, "%s %d\n", id, n)
				w.Flush()
			}
			if n%120 == 0 {
				l.Finish(&Task{Title: id, Status: StatusCompleted})
			} else {
				l.Close() // left running: the next round continues it
			}
		}
	}
}

package store

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSaveLoadListDelete(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := &Task{TaskID: "task-a", Title: "first", Status: StatusCompleted, Owner: Self()}
	b := &Task{TaskID: "task-b", Title: "second", Status: StatusRunning, Owner: Self()}
	for _, x := range []*Task{a, b} {
		if err := s.Save(x); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Load("task-a")
	if err != nil || got.Title != "first" {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	list, err := s.List()
	if err != nil || len(list) != 2 || list[0].TaskID != "task-b" {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if ok, err := s.Delete("task-a"); !ok || err != nil {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	if ok, _ := s.Delete("task-a"); ok {
		t.Fatal("second delete reported true")
	}
	if _, err := s.Load("task-a"); err != ErrNotFound {
		t.Fatalf("Load after delete: %v", err)
	}
	for _, bad := range []string{"", "../x", "a/b", ".hidden", "-x", "a..b"} {
		if err := s.Save(&Task{TaskID: bad}); err == nil {
			t.Errorf("Save(%q) succeeded", bad)
		}
	}
}

func TestFailOrphans(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir)
	summary, _ := json.Marshal(map[string]any{"status": "running", "error": nil})
	dead := &Task{TaskID: "dead", Status: StatusRunning, Owner: Owner{PID: 1 << 30}, Summary: summary}
	live := &Task{TaskID: "live", Status: StatusRunning, Owner: Self()}
	done := &Task{TaskID: "done", Status: StatusCompleted, Owner: Owner{PID: 1 << 30}}
	for _, x := range []*Task{dead, live, done} {
		if err := s.Save(x); err != nil {
			t.Fatal(err)
		}
	}
	// A torn file is skipped, not fatal.
	os.WriteFile(filepath.Join(dir, "tasks", "torn.json"), []byte(`{"taskId":`), 0o600)
	changed, err := s.FailOrphans(nil)
	if err != nil || len(changed) != 1 || changed[0] != "dead" {
		t.Fatalf("FailOrphans = %v, %v", changed, err)
	}
	got, _ := s.Load("dead")
	if got.Status != StatusFailed || got.Error == "" {
		t.Fatalf("dead task = %+v", got)
	}
	var m map[string]any
	json.Unmarshal(got.Summary, &m)
	if m["status"] != "failed" || m["error"] == nil {
		t.Fatalf("summary not updated: %s", got.Summary)
	}
	// A task killed before it saved a summary gets one: status failed, error set.
	if err := s.Save(&Task{TaskID: "bare", Status: StatusRunning, Model: "m1", Owner: Owner{PID: 1 << 30}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FailOrphans(nil); err != nil {
		t.Fatal(err)
	}
	bare, _ := s.Load("bare")
	m = nil
	json.Unmarshal(bare.Summary, &m)
	if m["status"] != "failed" || m["error"] != bare.Error || bare.Error == "" || m["taskId"] != "bare" || m["model"] != "m1" {
		t.Fatalf("summary of a task killed before its first summary: %s", bare.Summary)
	}
	// Its members are protocol.AgentSummary's, in that order, with no usage
	// or metrics (nobody measured them).
	const head = `{"taskId":"bare","status":"failed","text":"","changedFiles":[],"operations":[],"validations":[],` +
		`"validationRan":false,"skippedChecks":[],"model":"m1","iterations":0,"toolCalls":0,"error":`
	var compact bytes.Buffer
	json.Compact(&compact, bare.Summary)
	if !strings.HasPrefix(compact.String(), head) {
		t.Fatalf("summary %s, want it to start %s", compact.String(), head)
	}
	if l, _ := s.Load("live"); l.Status != StatusRunning {
		t.Fatal("live task was failed")
	}
	// Same pid but a different start time is a different process.
	if OwnerAlive(Owner{PID: os.Getpid(), StartTime: Self().StartTime + 1}) {
		t.Fatal("reused pid counted as alive")
	}
}

// Open removes the temp files of task writes that a crash left (older than
// staleTemp), not a fresh one another runtime may be writing.
func TestOpenRemovesStaleTemps(t *testing.T) {
	dataDir := t.TempDir()
	dir := filepath.Join(dataDir, "tasks")
	os.MkdirAll(dir, 0o700)
	old := filepath.Join(dir, ".task-1.json.tmp-0123456789abcdef")
	fresh := filepath.Join(dir, ".task-2.json.tmp-0123456789abcdef")
	for _, p := range []string{old, fresh} {
		os.WriteFile(p, []byte("{"), 0o600)
	}
	past := time.Now().Add(-2 * staleTemp)
	os.Chtimes(old, past, past)
	if _, err := Open(dataDir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); err == nil {
		t.Error("a stale temp file was left")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("a fresh temp file was removed")
	}
}

package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/task-x/task-x-runtime/internal/store"
)

// session/list pages: newest first (ties by sessionId), at most the page
// size each, nextCursor while more follow; a session saved between two
// pages neither repeats nor shifts the later ones; the cwd filter holds on
// every page; a cursor that is not ours is -32602.
func TestListSessionsPages(t *testing.T) {
	cfg := testConfig(t, "http://127.0.0.1:1/v1")
	if _, err := store.Open(cfg.DataDir); err != nil { // the task folder
		t.Fatal(err)
	}
	dirA, dirB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	// Snapshots written as the store writes them, with the times given
	// (Store.Save stamps the time of the save).
	save := func(id, root string, at time.Time) {
		t.Helper()
		b, _ := json.Marshal(&store.Task{TaskID: id, Title: id, Status: "completed", ChatMode: "agent", CreatedAt: at, UpdatedAt: at, Root: root, Gen: 1})
		if err := os.WriteFile(filepath.Join(cfg.DataDir, "tasks", id+".json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	save("a1", dirA, base.Add(1*time.Minute))
	save("a2", dirA, base.Add(2*time.Minute))
	save("a3x", dirA, base.Add(3*time.Minute)) // a tie: a3x before a3y
	save("a3y", dirA, base.Add(3*time.Minute))
	save("a4", dirA, base.Add(4*time.Minute))
	save("b1", dirB, base.Add(150*time.Second))
	save("none", "", base.Add(5*time.Minute)) // no folder: never listed

	p := startAgent(t, cfg)
	p.agent.listPage = 2
	p.call("initialize", map[string]any{"protocolVersion": 1})
	type page struct {
		Sessions []struct {
			SessionID, Cwd string
		}
		NextCursor *string
	}
	list := func(params map[string]any) page {
		t.Helper()
		_, res := p.call("session/list", params)
		var pg page
		if err := json.Unmarshal(res, &pg); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(res), `"nextCursor":null`) || strings.Contains(string(res), `"nextCursor":""`) {
			t.Fatalf("an empty nextCursor: %s", res)
		}
		return pg
	}
	// all pages through every folder's sessions, calling between after
	// page n.
	all := func(between func(n int)) (ids []string, pages int) {
		t.Helper()
		params := map[string]any{}
		for {
			pg := list(params)
			pages++
			for _, s := range pg.Sessions {
				ids = append(ids, s.SessionID)
			}
			if len(pg.Sessions) > 2 {
				t.Fatalf("a page of %d", len(pg.Sessions))
			}
			if pg.NextCursor == nil {
				return ids, pages
			}
			if between != nil {
				between(pages)
			}
			params = map[string]any{"cursor": *pg.NextCursor}
		}
	}
	if ids, pages := all(nil); !slices.Equal(ids, []string{"a4", "a3x", "a3y", "b1", "a2", "a1"}) || pages != 3 {
		t.Fatalf("every folder: %v in %d pages", ids, pages)
	}
	// The cwd filter on each page (the cursor request repeats it).
	var ids []string
	params := map[string]any{"cwd": dirA}
	for {
		pg := list(params)
		for _, s := range pg.Sessions {
			if s.Cwd != dirA {
				t.Fatalf("%s of %s listed for %s", s.SessionID, s.Cwd, dirA)
			}
			ids = append(ids, s.SessionID)
		}
		if pg.NextCursor == nil {
			break
		}
		params = map[string]any{"cwd": dirA, "cursor": *pg.NextCursor}
	}
	if !slices.Equal(ids, []string{"a4", "a3x", "a3y", "a2", "a1"}) {
		t.Fatalf("folder a: %v", ids)
	}
	// Saved between pages: a new newest session and an updated one move to
	// the front; the later pages go on where the first stopped.
	ids, _ = all(func(n int) {
		if n == 1 {
			save("new", dirA, base.Add(time.Hour))
			save("a1", dirA, base.Add(2*time.Hour))
		}
	})
	if !slices.Equal(ids, []string{"a4", "a3x", "a3y", "b1", "a2"}) {
		t.Fatalf("with saves between pages: %v", ids)
	}
	for _, bad := range []string{"x", "", "bm90IGpzb24"} {
		if _, m := p.reply(p.send("session/list", map[string]any{"cursor": bad})); m.Error == nil || m.Error.Code != -32602 {
			t.Errorf("cursor %q: %+v", bad, m.Error)
		}
	}
}

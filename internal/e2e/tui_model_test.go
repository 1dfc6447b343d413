package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelAndProvider: /model checks the id against provider/models and
// picks from the list; /provider checks the kind; a --base-url the runtime
// refuses is not remembered, one that reached the model is (issue 38,
// item 5).
func TestModelAndProvider(t *testing.T) {
	data := t.TempDir()
	dir := t.TempDir()
	_, code := ptyRun(t, []string{"TASK_X_API_KEY=sk-model-1"}, "run", "-C", dir, "-p", "hi", "--provider", "openaiCompatible",
		"--base-url", "http://192.168.1.5:8000/v1", "--model", "m", "--data-dir", data, "--no-sandbox")
	if b, _ := os.ReadFile(filepath.Join(data, "config.json")); code != 1 || strings.Contains(string(b), "192.168.1.5") {
		t.Errorf("a refused --base-url: exit %d, config.json: %s", code, b)
	}

	repo := t.TempDir()
	os.WriteFile(filepath.Join(repo, "README.md"), []byte("# demo\n"), 0o644)
	model, srv := newScriptedModel(t, "openai", []step{{text: "Hello."}})
	model.models = []string{"fake", "fake-large"}
	model.pick = func(map[string]any) int { return 0 }
	pt := startPTY(t, []string{"TASK_X_API_KEY=sk-model-1", "TERM=xterm-256color", "NO_COLOR=1"}, "run", "-C", repo,
		"--provider", "openaiCompatible", "--base-url", srv.URL+"/v1", "--model", "fake", "--no-sandbox", "--data-dir", data)
	pt.expect("/help for commands")
	pt.send("/model nope\r")
	pt.expect(`has no model "nope"`)
	pt.send("/model large\r")
	pt.expect("did you mean fake-large")
	pt.send("/model fake-large\r")
	pt.expect("model: openaiCompatible/fake-large")
	pt.send("hi\r")
	pt.expect("completed")
	bodies := model.bodies()
	if got := bodies[len(bodies)-1]["model"]; got != "fake-large" {
		t.Errorf("the turn after /model fake-large asked %v", got)
	}
	if b, _ := os.ReadFile(filepath.Join(data, "config.json")); !strings.Contains(string(b), "fake-large") || !strings.Contains(string(b), srv.URL) {
		t.Errorf("the settings that worked are not remembered: %s", b)
	}
	pt.send("/model\r")
	pt.expect("Model of openaiCompatible")
	pt.send("\r") // the first: fake
	// The status line, not the note: a redraw of the earlier note
	// "model: openaiCompatible/fake-large" would match too, while the
	// picker is still open.
	pt.expect("openaiCompatible/fake · ctrl+o")
	pt.send("/provider bogus\r")
	pt.expect(`"bogus" is not a provider kind`)
	pt.send("/provider\r")
	pt.expect("base URL " + srv.URL)
	pt.quit()
}

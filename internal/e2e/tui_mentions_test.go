package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMentionsAndCompletion: Tab completes slash commands and @paths
// (several candidates are listed); the @paths of a prompt are sent as
// editor.mentions, so the file reaches the model (issue 38, item 10).
func TestMentionsAndCompletion(t *testing.T) {
	repo := t.TempDir()
	os.MkdirAll(filepath.Join(repo, "src"), 0o755)
	os.MkdirAll(filepath.Join(repo, "docs"), 0o755)
	os.WriteFile(filepath.Join(repo, "src", "handler.go"), []byte("package src\n\nfunc HandlerMarker() {}\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "src", "helpers.go"), []byte("package src\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "docs", "guide.md"), []byte("# GuideMarker\n"), 0o644)
	pt, model, got, _ := tuiSession(t, repo, t.TempDir(), []step{{text: "Read them."}}, func(map[string]any) int { return 0 })

	pt.send("/und\t")
	pt.expect("› /undo")
	pt.send("\x03") // Ctrl-C clears the prompt
	pt.send("explain @src/h\t")
	pt.expect("src/handler.go")
	pt.expect("src/helpers.go")
	pt.send("a\t")
	pt.expect("› explain @src/handler.go")
	pt.send("and @do\t")
	pt.expect("@docs/")
	pt.send("\t")
	pt.expect("@docs/guide.md")
	pt.send("\r")
	u := nextPrompt(t, got)
	if !strings.Contains(u, "explain @src/handler.go and @docs/guide.md") {
		t.Fatalf("the prompt sent is %s", u)
	}
	pt.expect("completed")
	body := mustJSON(model.bodies()[0])
	if !strings.Contains(body, "HandlerMarker") || !strings.Contains(body, "GuideMarker") {
		t.Errorf("the mentioned files did not reach the model: %.2000s", body)
	}
	pt.quit()
}

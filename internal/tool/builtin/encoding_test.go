package builtin

import (
	"strings"
	"testing"

	"github.com/task-x/task-x-runtime/internal/tool"
)

// replace_text keeps a file's line endings whatever newText holds (issue 13
// item 16): CRLF files stay CRLF for a one-line oldText too, LF files stay
// LF, and a file with mixed endings takes the ending of the matched line.
func TestReplaceTextLineEndings(t *testing.T) {
	env := workspace(t, map[string]string{
		"crlf.txt":  "alpha\r\nbeta\r\ngamma\r\n",
		"lf.txt":    "alpha\nbeta\n",
		"mixed.txt": "one\r\ntwo\nthree\r\n",
		"oneline":   "x",
	})
	replaceOK(t, env, "crlf.txt", "beta", "beta\nbeta2\nbeta3", false)
	if got := readDisk(t, env, "crlf.txt"); got != "alpha\r\nbeta\r\nbeta2\r\nbeta3\r\ngamma\r\n" {
		t.Fatalf("crlf, one-line oldText: %q", got)
	}
	replaceOK(t, env, "crlf.txt", "gamma", "gamma\r\ndelta", false)
	if got := readDisk(t, env, "crlf.txt"); got != "alpha\r\nbeta\r\nbeta2\r\nbeta3\r\ngamma\r\ndelta\r\n" {
		t.Fatalf("crlf, CRLF newText: %q", got)
	}
	replaceOK(t, env, "lf.txt", "beta", "beta\r\nb2", false)
	if got := readDisk(t, env, "lf.txt"); got != "alpha\nbeta\nb2\n" {
		t.Fatalf("lf: %q", got)
	}
	replaceOK(t, env, "mixed.txt", "one", "one\n1b", false)
	replaceOK(t, env, "mixed.txt", "two", "two\n2b", false)
	if got := readDisk(t, env, "mixed.txt"); got != "one\r\n1b\r\ntwo\n2b\nthree\r\n" {
		t.Fatalf("mixed: %q", got)
	}
	replaceOK(t, env, "oneline", "x", "x\ny", false)
	if got := readDisk(t, env, "oneline"); got != "x\ny" {
		t.Fatalf("no line ending yet: %q", got)
	}
	_, err := run(t, env, "replace_text", map[string]any{"path": "lf.txt", "oldText": "alpha\nbeta", "newText": "alpha\r\nbeta"})
	wantKind(t, err, tool.ErrInvalidInput, "line endings")
}

// A file in a legacy 8-bit encoding reads decoded as windows-1252 with a
// note, and the edit tools write windows-1252 back: every byte they do not
// change (0x81, undefined in windows-1252, included) stays as it was.
func TestLegacyEncodingRoundTrip(t *testing.T) {
	latin := "caf\xe9 \x93quoted\x94\nna\xefve \x81odd\r\nlast line\n"
	env := workspace(t, map[string]string{"legacy.txt": latin})
	res := runOK(t, env, "read_file", map[string]any{"path": "legacy.txt"})
	d := res.Data.(readFileData)
	if d.Encoding != "windows-1252" || !strings.Contains(res.Content, "not UTF-8") ||
		!strings.Contains(res.Content, "1\tcafé “quoted”\n") || !strings.Contains(res.Content, "2\tnaïve \u0081odd\n") {
		t.Fatalf("read_file: %+v\n%s", d, res.Content)
	}
	replaceOK(t, env, "legacy.txt", "café “quoted”", "thé “quoted” – ok", false)
	want := "th\xe9 \x93quoted\x94 \x96 ok\nna\xefve \x81odd\r\nlast line\n"
	if got := readDisk(t, env, "legacy.txt"); got != want {
		t.Fatalf("after replace_text: %q, want %q", got, want)
	}
	_, err := run(t, env, "replace_text", map[string]any{"path": "legacy.txt", "oldText": "last line", "newText": "日本"})
	wantKind(t, err, tool.ErrInvalidInput, "windows-1252", "U+65E5")
	if got := readDisk(t, env, "legacy.txt"); got != want {
		t.Fatalf("a refused edit wrote: %q", got)
	}
	runOK(t, env, "read_file", map[string]any{"path": "legacy.txt"})
	runOK(t, env, "write_file", map[string]any{"path": "legacy.txt", "content": "thé\nnaïve \u0081odd\r\n"})
	if got := readDisk(t, env, "legacy.txt"); got != "th\xe9\nna\xefve \x81odd\r\n" {
		t.Fatalf("after write_file: %q", got)
	}
	_, err = run(t, env, "write_file", map[string]any{"path": "legacy.txt", "content": "€ ok, ✓ not\n"})
	wantKind(t, err, tool.ErrInvalidInput, "windows-1252", "✓")
	runOK(t, env, "apply_patch", map[string]any{"patch": "--- a/legacy.txt\n+++ b/legacy.txt\n@@ -1,2 +1,2 @@\n-thé\n+thé – tea\n naïve \u0081odd\n"})
	if got := readDisk(t, env, "legacy.txt"); got != "th\xe9 \x96 tea\nna\xefve \x81odd\r\n" {
		t.Fatalf("after apply_patch: %q", got)
	}
	// Every byte decodes and encodes back.
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	enc := textEncoding{name: encWindows1252}
	if back, err := enc.encode(enc.decode(all)); err != nil || string(back) != string(all) {
		t.Fatalf("round trip of every byte: %v", err)
	}
}

// A UTF-8 file with a few invalid bytes is said to be so; edits around the
// bytes keep them; an oldText or a content holding U+FFFD for them is
// refused with the reason.
func TestInvalidUTF8Bytes(t *testing.T) {
	env := workspace(t, map[string]string{"u.txt": "naïve café\nraw \xff byte\nend — ok\n"})
	res := runOK(t, env, "read_file", map[string]any{"path": "u.txt"})
	if d := res.Data.(readFileData); d.Encoding != "utf-8 (invalid bytes)" || !strings.Contains(res.Content, "1 byte not valid as UTF-8") {
		t.Fatalf("read_file: %+v\n%s", d, res.Content)
	}
	_, err := run(t, env, "replace_text", map[string]any{"path": "u.txt", "oldText": "raw \ufffd byte", "newText": "x"})
	wantKind(t, err, tool.ErrNoMatch, "not valid as UTF-8")
	replaceOK(t, env, "u.txt", "end — ok", "end", false)
	if got := readDisk(t, env, "u.txt"); got != "naïve café\nraw \xff byte\nend\n" {
		t.Fatalf("after replace_text: %q", got)
	}
	_, err = run(t, env, "write_file", map[string]any{"path": "u.txt", "content": "naïve café\nraw \ufffd byte\n"})
	wantKind(t, err, tool.ErrInvalidInput, "not valid as UTF-8")
}

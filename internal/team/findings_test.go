package team

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func fd(path string, line int, sev, msg string) Finding {
	return Finding{Path: path, Line: line, Severity: sev, Message: msg}
}

func TestParseFindings(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want []Finding
	}{
		{"none", "Looks good to me.", []Finding{}},
		{"one block at the end", "Two problems.\n\n```task-x-findings\n" +
			`[{"path":"src/a.go","line":12,"severity":"error","message":"nil map write"},` +
			`{"path":"./docs/b.md","line":3.0,"severity":"Warning","message":"  stale link  ","extra":true}]` + "\n```\n",
			[]Finding{fd("src/a.go", 12, "error", "nil map write"), fd("docs/b.md", 3, "warning", "stale link")}},
		{"invalid entries dropped", "```task-x-findings\n[" +
			`{"path":"a.go","line":0,"severity":"error","message":"zero line"},` +
			`{"path":"a.go","line":1.5,"severity":"error","message":"fraction"},` +
			`{"path":"a.go","line":"7","severity":"error","message":"string line"},` +
			`{"path":"a.go","line":2,"severity":"critical","message":"bad severity"},` +
			`{"path":"","line":2,"severity":"info","message":"no path"},` +
			`{"path":"/etc/passwd","line":2,"severity":"info","message":"absolute"},` +
			`{"path":"../up.go","line":2,"severity":"info","message":"leaves"},` +
			`{"path":"C:\\x.go","line":2,"severity":"info","message":"drive"},` +
			`{"path":"a\u0000.go","line":2,"severity":"info","message":"nul"},` +
			`{"path":"a.go","line":2,"severity":"info","message":"   "},` +
			`{"path":"a.go","line":2,"severity":"info"},` +
			`"a string", 42, null, [],` +
			`{"path":"sub\\dir/../b.go","line":9,"severity":"INFO","message":"kept"}` +
			"]\n```",
			[]Finding{fd("sub/b.go", 9, "info", "kept")}},
		{"syntax error keeps what came before", "```task-x-findings\n" +
			`[{"path":"a.go","line":1,"severity":"info","message":"first"}, {"path": oops}, {"path":"b.go","line":1,"severity":"info","message":"after"}]` + "\n```",
			[]Finding{fd("a.go", 1, "info", "first")}},
		{"not an array", "```task-x-findings\n{\"path\":\"a.go\"}\n```", []Finding{}},
		{"other languages ignored", "```json\n[{\"path\":\"a.go\",\"line\":1,\"severity\":\"info\",\"message\":\"x\"}]\n```", []Finding{}},
		{"tilde fence, longer fence, unclosed, duplicates", "~~~~ Task-X-Findings extra\n" +
			`[{"path":"a.go","line":1,"severity":"info","message":"x"}]` + "\n~~~\n~~~~~\n```task-x-findings\n" +
			`[{"path":"a.go","line":1,"severity":"info","message":"x"}, {"path":"b.go","line":2,"severity":"error","message":"y"}]` + "\n",
			[]Finding{fd("a.go", 1, "info", "x"), fd("b.go", 2, "error", "y")}},
		{"two blocks", "```task-x-findings\n[{\"path\":\"a.go\",\"line\":1,\"severity\":\"info\",\"message\":\"x\"}]\n```\ntext\n" +
			"```task-x-findings\r\n[{\"path\":\"c.go\",\"line\":4,\"severity\":\"warning\",\"message\":\"z\"}]\r\n```\r\n",
			[]Finding{fd("a.go", 1, "info", "x"), fd("c.go", 4, "warning", "z")}},
		{"indented four spaces is code, not a fence", "    ```task-x-findings\n    [{\"path\":\"a.go\",\"line\":1,\"severity\":\"info\",\"message\":\"x\"}]\n    ```", []Finding{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ParseFindings(tc.text)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseFindingsBounds(t *testing.T) {
	var fs []Finding
	for i := 1; i <= MaxFindings+20; i++ {
		fs = append(fs, Finding{Path: "a.go", Line: i, Severity: "info", Message: strings.Repeat("m", MaxFindingMessage+5)})
	}
	got := ParseFindings(FindingsBlock(fs))
	if len(got) != MaxFindings {
		t.Fatalf("%d findings kept, want %d", len(got), MaxFindings)
	}
	if n := utf8.RuneCountInString(got[0].Message); n != MaxFindingMessage || !strings.HasSuffix(got[0].Message, "…") {
		t.Errorf("message of %d characters", n)
	}
}

// FuzzParseFindings: any text parses without panic; every finding kept is
// valid; rendering the findings as a block and parsing that gives them
// back unchanged. The seed corpus is testdata/fuzz/FuzzParseFindings.
func FuzzParseFindings(f *testing.F) {
	f.Add("```task-x-findings\n[{\"path\":\"a.go\",\"line\":1,\"severity\":\"info\",\"message\":\"x\"}]\n```")
	f.Fuzz(func(t *testing.T, text string) {
		got := ParseFindings(text)
		if len(got) > MaxFindings {
			t.Fatalf("%d findings", len(got))
		}
		for _, f := range got {
			if _, ok := cleanFindingPath(f.Path); !ok || f.Line < 1 || f.Message == "" || utf8.RuneCountInString(f.Message) > MaxFindingMessage {
				t.Fatalf("invalid finding kept: %+v", f)
			}
			switch f.Severity {
			case "error", "warning", "info":
			default:
				t.Fatalf("severity %q", f.Severity)
			}
		}
		again := ParseFindings("Review.\n" + FindingsBlock(got))
		if !reflect.DeepEqual(again, got) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", again, got)
		}
	})
}

package provider

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseRequestValid(t *testing.T) {
	in := `{
	  "system": "sys",
	  "messages": [
	    {"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","mediaType":"image/webp","data":"AAAA"}]},
	    {"role":"assistant","content":[{"type":"toolUse","id":"t1","name":"read_file","input":{ "path" : "a" }}]},
	    {"role":"user","content":[{"type":"toolResult","toolUseId":"t1","toolName":"read_file","content":"","isError":true}]}
	  ],
	  "tools": [{"name":"read_file","description":"d","inputSchema":{"type":"object"}}],
	  "temperature": 0,
	  "contextWindow": 8192,
	  "futureField": true
	}`
	req, err := ParseRequest(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	zero := 0.0
	want := &Request{
		System: "sys",
		Messages: []Message{
			{Role: RoleUser, Content: []Part{{Type: PartText, Text: "hi"}, {Type: PartImage, MediaType: "image/webp", Data: "AAAA"}}},
			{Role: RoleAssistant, Content: []Part{{Type: PartToolUse, ID: "t1", Name: "read_file", Input: json.RawMessage(`{"path":"a"}`)}}},
			{Role: RoleUser, Content: []Part{{Type: PartToolResult, ToolUseID: "t1", ToolName: "read_file", Content: "", IsError: true}}},
		},
		Tools:         []ToolSpec{{Name: "read_file", Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		MaxTokens:     4096,
		Temperature:   &zero,
		ContextWindow: 8192,
	}
	if !reflect.DeepEqual(req, want) {
		t.Fatalf("got %+v\nwant %+v", req, want)
	}
	req, err = ParseRequest(json.RawMessage(`{"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],"maxTokens":100,"temperature":2}`))
	if err != nil || req.MaxTokens != 100 || *req.Temperature != 2 || req.Temperature == nil {
		t.Fatalf("got %+v %v", req, err)
	}
}

func TestParseRequestInvalid(t *testing.T) {
	user := `{"role":"user","content":[{"type":"text","text":"x"}]}`
	img := func(mt, data string) string {
		return `{"messages":[{"role":"user","content":[{"type":"image","mediaType":"` + mt + `","data":"` + data + `"}]}]}`
	}
	nine := strings.Repeat(`{"type":"image","mediaType":"image/png","data":"AAAA"},`, 9)
	cases := []struct{ name, in, field string }{
		{"not object", `[]`, ""},
		{"bad json", `{"messages":`, ""},
		{"no messages", `{}`, "messages"},
		{"empty messages", `{"messages":[]}`, "messages"},
		{"messages wrong type", `{"messages":"hi"}`, "messages"},
		{"first assistant", `{"messages":[{"role":"assistant","content":[{"type":"text","text":"x"}]}]}`, "messages[0].role"},
		{"bad role", `{"messages":[` + user + `,{"role":"system","content":[{"type":"text","text":"x"}]}]}`, "messages[1].role"},
		{"missing role", `{"messages":[{"content":[{"type":"text","text":"x"}]}]}`, "messages[0].role"},
		{"message not object", `{"messages":[1]}`, "messages[0]"},
		{"empty content", `{"messages":[{"role":"user","content":[]}]}`, "messages[0].content"},
		{"part without type", `{"messages":[{"role":"user","content":[{"text":"x"}]}]}`, "messages[0].content[0].type"},
		{"unknown part", `{"messages":[{"role":"user","content":[{"type":"audio"}]}]}`, "messages[0].content[0].type"},
		{"text missing", `{"messages":[{"role":"user","content":[{"type":"text"}]}]}`, "messages[0].content[0].text"},
		{"toolUse no id", `{"messages":[` + user + `,{"role":"assistant","content":[{"type":"toolUse","name":"n","input":{}}]}]}`, "messages[1].content[0].id"},
		{"toolUse no name", `{"messages":[` + user + `,{"role":"assistant","content":[{"type":"toolUse","id":"i","input":{}}]}]}`, "messages[1].content[0].name"},
		{"toolUse input array", `{"messages":[` + user + `,{"role":"assistant","content":[{"type":"toolUse","id":"i","name":"n","input":[]}]}]}`, "messages[1].content[0].input"},
		{"toolUse no input", `{"messages":[` + user + `,{"role":"assistant","content":[{"type":"toolUse","id":"i","name":"n"}]}]}`, "messages[1].content[0].input"},
		{"toolResult no id", `{"messages":[{"role":"user","content":[{"type":"toolResult","content":"x"}]}]}`, "messages[0].content[0].toolUseId"},
		{"toolResult no content", `{"messages":[{"role":"user","content":[{"type":"toolResult","toolUseId":"x"}]}]}`, "messages[0].content[0].content"},
		{"image bad type", img("image/bmp", "AAAA"), "messages[0].content[0].mediaType"},
		{"image data url", img("image/png", "data:image/png;base64,AAAA"), "messages[0].content[0].data"},
		{"image not base64", img("image/png", "AA*A"), "messages[0].content[0].data"},
		{"image bad padding", img("image/png", "AAA=="), "messages[0].content[0].data"},
		{"image empty", img("image/png", ""), "messages[0].content[0].data"},
		{"image too large", img("image/png", strings.Repeat("A", 7_000_004)), "messages[0].content[0].data"},
		{"nine images", `{"messages":[{"role":"user","content":[` + strings.TrimSuffix(nine, ",") + `]}]}`, "messages[0].content[8]"},
		{"tool no name", `{"messages":[` + user + `],"tools":[{"inputSchema":{}}]}`, "tools[0].name"},
		{"tool dup", `{"messages":[` + user + `],"tools":[{"name":"a","inputSchema":{}},{"name":"a","inputSchema":{}}]}`, "tools[1].name"},
		{"tool schema missing", `{"messages":[` + user + `],"tools":[{"name":"a"}]}`, "tools[0].inputSchema"},
		{"tool schema string", `{"messages":[` + user + `],"tools":[{"name":"a","inputSchema":"object"}]}`, "tools[0].inputSchema"},
		{"maxTokens zero", `{"messages":[` + user + `],"maxTokens":0}`, "maxTokens"},
		{"maxTokens fraction", `{"messages":[` + user + `],"maxTokens":1.5}`, "maxTokens"},
		{"maxTokens string", `{"messages":[` + user + `],"maxTokens":"10"}`, "maxTokens"},
		{"temperature high", `{"messages":[` + user + `],"temperature":2.01}`, "temperature"},
		{"temperature negative", `{"messages":[` + user + `],"temperature":-0.1}`, "temperature"},
		{"contextWindow negative", `{"messages":[` + user + `],"contextWindow":-1}`, "contextWindow"},
		{"system not string", `{"system":3,"messages":[` + user + `]}`, "system"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRequest(json.RawMessage(tc.in))
			var pe *Error
			if !errors.As(err, &pe) || pe.Kind != KindInvalidRequest || pe.Field != tc.field || pe.Message == "" {
				t.Fatalf("got %v (field %q); want invalidRequest on %q", err, fieldOf(err), tc.field)
			}
		})
	}
}

func fieldOf(err error) string {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Field
	}
	return ""
}

func TestImageLimitsExact(t *testing.T) {
	if err := ValidateImage("image/png", strings.Repeat("A", 7_000_000)); err != nil {
		t.Fatalf("7 000 000 characters must pass: %v", err)
	}
	eight := strings.TrimSuffix(strings.Repeat(`{"type":"image","mediaType":"image/gif","data":"AAA"},`, 8), ",")
	if _, err := ParseRequest(json.RawMessage(`{"messages":[{"role":"user","content":[` + eight + `]}]}`)); err != nil {
		t.Fatalf("8 images must pass: %v", err)
	}
}

func TestRedact(t *testing.T) {
	key := "sk-ant-api03-abcdefghijklmnop"
	cases := []struct{ in, want string }{
		{"bad key " + key + " here", "bad key [redacted] here"},
		{"prefix sk-ant-api03-ab... echoed", "prefix [redacted]... echoed"},
		{"no secret", "no secret"},
	}
	for _, tc := range cases {
		if got := Redact(tc.in, "", key); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := Redact("short key abc", "abc"); got != "short key [redacted]" {
		t.Errorf("short secret: %q", got)
	}
	if got := Redact("text", ""); got != "text" {
		t.Errorf("empty secret changed text: %q", got)
	}
}

func TestNewCallIDUnique(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewCallID()
		if seen[id] || !strings.HasPrefix(id, "call_") {
			t.Fatalf("NewCallID gave %q (seen before: %v)", id, seen[id])
		}
		seen[id] = true
	}
}

// A result without reported counts has no reported usage; {0, 0} would
// read as measured.
func TestReportedUsageOnlyWhenReported(t *testing.T) {
	r := Result{Text: "hi", ToolCalls: []ToolCall{}, StopReason: StopEndTurn}
	if r.ReportedUsage() != nil {
		t.Fatal("unreported usage reported")
	}
	r.Usage, r.UsageReported = Usage{InputTokens: 0, OutputTokens: 3}, true
	if u := r.ReportedUsage(); u == nil || *u != (Usage{InputTokens: 0, OutputTokens: 3}) {
		t.Fatalf("reported usage %v", u)
	}
}

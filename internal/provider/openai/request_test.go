package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/task-x/task-x-runtime/internal/provider"
)

func fullRequest() *provider.Request {
	temp := 0.2
	return &provider.Request{
		System: "You are terse.",
		Messages: []provider.Message{
			{Role: provider.RoleUser, Content: []provider.Part{
				{Type: provider.PartText, Text: "What is in this image?"},
				{Type: provider.PartImage, MediaType: "image/png", Data: "iVBORw0KGgo="},
			}},
			{Role: provider.RoleAssistant, Content: []provider.Part{
				{Type: provider.PartText, Text: "Let me look."},
				{Type: provider.PartToolUse, ID: "call_1", Name: "read_file", Input: json.RawMessage(`{"path":"a.go"}`)},
				{Type: provider.PartToolUse, ID: "call_2", Name: "now"},
			}},
			{Role: provider.RoleUser, Content: []provider.Part{
				{Type: provider.PartToolResult, ToolUseID: "call_1", ToolName: "read_file", Content: "package a"},
				{Type: provider.PartToolResult, ToolUseID: "call_2", ToolName: "now", Content: "clock unavailable", IsError: true},
				{Type: provider.PartText, Text: "Go on."},
			}},
			{Role: provider.RoleAssistant, Content: []provider.Part{
				{Type: provider.PartToolUse, ID: "call_3", Name: "now", Input: json.RawMessage(`{}`)},
			}},
		},
		Tools: []provider.ToolSpec{
			{Name: "read_file", Description: "Read a file", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "now"},
		},
		MaxTokens:   4096,
		Temperature: &temp,
	}
}

const wantMessages = `[
 {"role":"system","content":"You are terse."},
 {"role":"user","content":[{"type":"text","text":"What is in this image?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]},
 {"role":"assistant","content":"Let me look.","tool_calls":[
   {"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.go\"}"}},
   {"id":"call_2","type":"function","function":{"name":"now","arguments":"{}"}}]},
 {"role":"tool","tool_call_id":"call_1","content":"package a"},
 {"role":"tool","tool_call_id":"call_2","content":"Error: clock unavailable"},
 {"role":"user","content":"Go on."},
 {"role":"assistant","content":null,"tool_calls":[{"id":"call_3","type":"function","function":{"name":"now","arguments":"{}"}}]}
]`

const wantTools = `[
 {"type":"function","function":{"name":"read_file","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},
 {"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}}
]`

func TestRequestBodyPerKind(t *testing.T) {
	cases := []struct {
		kind     provider.Kind
		key      string
		maxField string
		noField  string
	}{
		{provider.OpenAI, "sk-official-key-0123456789", "max_completion_tokens", "max_tokens"},
		{provider.OpenAICompatible, "", "max_tokens", "max_completion_tokens"},
		{provider.OpenAICompatible, "lm-key", "max_tokens", "max_completion_tokens"},
	}
	for _, c := range cases {
		t.Run(string(c.kind)+"/key="+c.key, func(t *testing.T) {
			f := newFake(t, replay(sse(textChunk("ok"), finishChunk("stop"))))
			cl := newClient(t, c.kind, f.srv.URL+"/v1/", c.key, 5000)
			if _, err := cl.Stream(context.Background(), fullRequest(), nil); err != nil {
				t.Fatal(err)
			}
			reqs := f.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			r := reqs[0]
			if r.Method != "POST" || r.Path != "/v1/chat/completions" {
				t.Errorf("%s %s", r.Method, r.Path)
			}
			auth := r.Header.Get("Authorization")
			if c.key == "" && auth != "" {
				t.Errorf("Authorization %q sent without a key", auth)
			}
			if c.key != "" && auth != "Bearer "+c.key {
				t.Errorf("Authorization = %q", auth)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			var body map[string]json.RawMessage
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, body["messages"], []byte(wantMessages)) {
				t.Errorf("messages = %s", body["messages"])
			}
			if !jsonEqual(t, body["tools"], []byte(wantTools)) {
				t.Errorf("tools = %s", body["tools"])
			}
			if string(body[c.maxField]) != "4096" {
				t.Errorf("%s = %s", c.maxField, body[c.maxField])
			}
			if _, ok := body[c.noField]; ok {
				t.Errorf("%s sent for kind %s", c.noField, c.kind)
			}
			if string(body["model"]) != `"test-model"` || string(body["stream"]) != "true" || string(body["temperature"]) != "0.2" {
				t.Errorf("model %s stream %s temperature %s", body["model"], body["stream"], body["temperature"])
			}
			if !jsonEqual(t, body["stream_options"], []byte(`{"include_usage":true}`)) {
				t.Errorf("stream_options = %s", body["stream_options"])
			}
		})
	}
}

func TestRequestOmitsUnsetFields(t *testing.T) {
	got, err := buildChatRequest(provider.OpenAICompatible, "m", &provider.Request{
		Messages: []provider.Message{{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartText, Text: "hi"}}}},
	}, true)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	var body map[string]any
	json.Unmarshal(b, &body)
	for _, k := range []string{"tools", "temperature", "max_tokens", "max_completion_tokens"} {
		if _, ok := body[k]; ok {
			t.Errorf("%s sent although unset: %s", k, b)
		}
	}
	if !reflect.DeepEqual(body["messages"], []any{map[string]any{"role": "user", "content": "hi"}}) {
		t.Errorf("messages = %v", body["messages"])
	}
}

func TestRequestRejectsBadParts(t *testing.T) {
	bad := []provider.Message{
		{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartToolUse, ID: "x", Name: "y"}}},
		{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartImage, MediaType: "image/png", Data: "AA=="}}},
		{Role: provider.RoleUser, Content: []provider.Part{{Type: provider.PartToolResult, Content: "no id"}}},
		{Role: provider.RoleAssistant, Content: []provider.Part{{Type: provider.PartToolUse, Name: "no id"}}},
		{Role: "system", Content: []provider.Part{{Type: provider.PartText, Text: "x"}}},
	}
	for i, m := range bad {
		_, err := buildChatRequest(provider.OpenAI, "m", &provider.Request{Messages: []provider.Message{m}}, true)
		pe := wantKind(t, err, provider.KindInvalidRequest)
		if pe.Field != "messages[0]" {
			t.Errorf("case %d: field %q", i, pe.Field)
		}
	}
	wantKind(t, func() error { _, err := buildChatRequest(provider.OpenAI, "m", nil, true); return err }(), provider.KindInvalidRequest)
}

func TestProbeChat(t *testing.T) {
	f := newFake(t, replay(sse(textChunk("p"), finishChunk("length"), usageChunk)))
	if err := compat(t, f).ProbeChat(context.Background()); err != nil {
		t.Fatal(err)
	}
	var body struct {
		MaxTokens int `json:"max_tokens"`
		Messages  []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(f.requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.MaxTokens != 1 || len(body.Messages) != 1 || body.Messages[0].Role != "user" || body.Messages[0].Content != "ping" {
		t.Fatalf("probe body = %+v", body)
	}

	g := newFake(t, replay(`{"error":{"message":"model not loaded"}}`))
	g.handler = func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
		w.Write([]byte(`{"error":{"message":"model not loaded"}}`))
	}
	wantKind(t, compat(t, g).ProbeChat(context.Background()), provider.KindNotFound)
}

func TestNewValidatesConfig(t *testing.T) {
	cases := []struct {
		cfg   provider.Config
		field string
	}{
		{provider.Config{Kind: provider.Anthropic, Model: "m"}, "kind"},
		{provider.Config{Kind: provider.OpenAI}, "model"},
		{provider.Config{Kind: provider.OpenAICompatible, Model: "m"}, "baseUrl"},
		{provider.Config{Kind: provider.OpenAICompatible, Model: "m", BaseURL: "ftp://host/v1"}, "baseUrl"},
		{provider.Config{Kind: provider.OpenAICompatible, Model: "m", BaseURL: "::bad"}, "baseUrl"},
	}
	for _, c := range cases {
		_, err := New(c.cfg, nil)
		pe := wantKind(t, err, provider.KindInvalidConfig)
		if pe.Field != c.field {
			t.Errorf("%+v: field %q, want %q", c.cfg, pe.Field, c.field)
		}
	}
	p, err := New(provider.Config{Kind: provider.OpenAI, Model: "gpt-4.1", APIKey: "k"}, &Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cl := p.(*Client); cl.baseURL != provider.DefaultOpenAIBaseURL || p.Config().Model != "gpt-4.1" {
		t.Errorf("baseURL %q config %+v", cl.baseURL, p.Config())
	}
}

package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

const secretKey = "sk-ant-api03-SECRETSECRETSECRET-xyz"

func TestParseConfigValid(t *testing.T) {
	cases := []struct {
		in   string
		want Config
	}{
		{`{"kind":"anthropic","model":"claude-opus-4-6","apiKey":"k"}`,
			Config{Kind: Anthropic, Model: "claude-opus-4-6", BaseURL: "https://api.anthropic.com", APIKey: "k", TimeoutMs: 120000}},
		{`{"kind":"openai","model":"gpt-5","apiKey":"k"}`,
			Config{Kind: OpenAI, Model: "gpt-5", BaseURL: "https://api.openai.com/v1", APIKey: "k", TimeoutMs: 120000}},
		{`{"kind":"ollama","model":"qwen3:latest"}`,
			Config{Kind: Ollama, Model: "qwen3:latest", BaseURL: "http://127.0.0.1:11434", TimeoutMs: 120000}},
		{`{"kind":"ollama","model":"m","baseUrl":"http://gpu-box:11434/","timeoutMs":null,"apiKey":null}`,
			Config{Kind: Ollama, Model: "m", BaseURL: "http://gpu-box:11434", TimeoutMs: 120000}},
		{`{"kind":"openaiCompatible","model":"m","apiKey":"k","baseUrl":"http://localhost:8000"}`,
			Config{Kind: OpenAICompatible, Model: "m", BaseURL: "http://localhost:8000/v1", APIKey: "k", TimeoutMs: 120000}},
		{`{"kind":"openaiCompatible","model":"m","apiKey":"k","baseUrl":"http://127.0.0.5:8000/"}`,
			Config{Kind: OpenAICompatible, Model: "m", BaseURL: "http://127.0.0.5:8000/v1", APIKey: "k", TimeoutMs: 120000}},
		{`{"kind":"openaiCompatible","model":"m","apiKey":"k","baseUrl":"http://[::1]:8000/api/v1/"}`,
			Config{Kind: OpenAICompatible, Model: "m", BaseURL: "http://[::1]:8000/api/v1", APIKey: "k", TimeoutMs: 120000}},
		{`{"kind":"openaiCompatible","model":"m","apiKey":"k","baseUrl":"https://openrouter.ai/api/v1"}`,
			Config{Kind: OpenAICompatible, Model: "m", BaseURL: "https://openrouter.ai/api/v1", APIKey: "k", TimeoutMs: 120000}},
		{`{"kind":"anthropic","model":"m","apiKey":"k","baseUrl":"https://proxy.example.com/anthropic/"}`,
			Config{Kind: Anthropic, Model: "m", BaseURL: "https://proxy.example.com/anthropic", APIKey: "k", TimeoutMs: 120000}},
		{`{"kind":"anthropic","model":"m","apiKey":"k","baseUrl":"http://LOCALHOST:9"}`,
			Config{Kind: Anthropic, Model: "m", BaseURL: "http://LOCALHOST:9", APIKey: "k", TimeoutMs: 120000}},
		{`{"kind":"anthropic","model":"` + strings.Repeat("é", 256) + `","apiKey":"k"}`,
			Config{Kind: Anthropic, Model: strings.Repeat("é", 256), BaseURL: "https://api.anthropic.com", APIKey: "k", TimeoutMs: 120000}},
	}
	for _, tc := range cases {
		got, err := ParseConfig(json.RawMessage(tc.in))
		if err != nil {
			t.Errorf("ParseConfig(%s): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("ParseConfig(%s) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestParseConfigTimeout(t *testing.T) {
	for in, want := range map[string]int{
		`5000`: 5000, `5000.0`: 5000, `1`: 1000, `0`: 1000, `-5`: 1000, `999999999`: 600000, `1e400`: 600000, `600000`: 600000, `1500.5`: 1501, `1500.4`: 1500,
	} {
		cfg, err := ParseConfig(json.RawMessage(`{"kind":"ollama","model":"m","timeoutMs":` + in + `}`))
		if err != nil || cfg.TimeoutMs != want {
			t.Errorf("timeoutMs %s: got %d, %v; want %d", in, cfg.TimeoutMs, err, want)
		}
	}
	cfg, _ := ParseConfig(json.RawMessage(`{"kind":"ollama","model":"m","timeoutMs":2500}`))
	if cfg.Timeout() != 2500*time.Millisecond {
		t.Errorf("Timeout() = %v", cfg.Timeout())
	}
	if (Config{}).Timeout() != 120*time.Second {
		t.Errorf("zero Config Timeout() = %v", (Config{}).Timeout())
	}
}

func TestParseConfigInvalid(t *testing.T) {
	cases := []struct{ in, field string }{
		{`[]`, ""},
		{`null`, ""},
		{`{"kind":"anthropic"`, ""},
		{`{"kind":"anthropic","model":"m","apiKey":"k","extra":1}`, "extra"},
		{`{"model":"m"}`, "kind"},
		{`{"kind":"gemini","model":"m"}`, "kind"},
		{`{"kind":1,"model":"m"}`, "kind"},
		{`{"kind":"ollama"}`, "model"},
		{`{"kind":"ollama","model":""}`, "model"},
		{`{"kind":"ollama","model":7}`, "model"},
		{`{"kind":"ollama","model":"` + strings.Repeat("a", 257) + `"}`, "model"},
		{`{"kind":"ollama","model":"a\u0007b"}`, "model"},
		{`{"kind":"ollama","model":"a\nb"}`, "model"},
		{`{"kind":"anthropic","model":"m"}`, "apiKey"},
		{`{"kind":"openai","model":"m","apiKey":"  "}`, "apiKey"},
		{`{"kind":"openaiCompatible","model":"m","apiKey":"k"}`, "baseUrl"},
		{`{"kind":"ollama","model":"m","baseUrl":"ftp://host"}`, "baseUrl"},
		{`{"kind":"ollama","model":"m","baseUrl":"127.0.0.1:11434"}`, "baseUrl"},
		{`{"kind":"ollama","model":"m","baseUrl":"http://"}`, "baseUrl"},
		{`{"kind":"ollama","model":"m","baseUrl":"http://user:pw@host"}`, "baseUrl"},
		{`{"kind":"ollama","model":"m","baseUrl":"http://host/#frag"}`, "baseUrl"},
		{`{"kind":"ollama","model":"m","baseUrl":"http://ho st"}`, "baseUrl"},
		{`{"kind":"ollama","model":"m","baseUrl":"http://%zz"}`, "baseUrl"},
		{`{"kind":"anthropic","model":"m","apiKey":"k","baseUrl":"http://api.example.com"}`, "apiKey"},
		{`{"kind":"ollama","model":"m","apiKey":"k","baseUrl":"http://10.0.0.2:11434"}`, "apiKey"},
		{`{"kind":"ollama","model":"m","apiKey":"k","baseUrl":"http://localhost.example.com"}`, "apiKey"},
		{`{"kind":"ollama","model":"m","apiKey":"k","baseUrl":"http://128.0.0.1"}`, "apiKey"},
		{`{"kind":"ollama","model":"m","timeoutMs":"5000"}`, "timeoutMs"},
		{`{"kind":"ollama","model":"m","timeoutMs":true}`, "timeoutMs"},
	}
	for _, tc := range cases {
		_, err := ParseConfig(json.RawMessage(tc.in))
		var pe *Error
		if !errors.As(err, &pe) || pe.Kind != KindInvalidConfig || pe.Field != tc.field || pe.Message == "" {
			t.Errorf("ParseConfig(%.80s) = %v; want invalidConfig on field %q", tc.in, err, tc.field)
		}
	}
}

func TestParseConfigNeverEchoesKey(t *testing.T) {
	for _, in := range []string{
		`{"kind":"anthropic","model":"m","apiKey":"` + secretKey + `","baseUrl":"http://api.example.com"}`,
		`{"kind":"anthropic","model":"m","apiKey":"` + secretKey + `","baseUrl":"http://u:` + secretKey + `@h"}`,
		`{"kind":"anthropic","model":"` + strings.Repeat("a", 300) + `","apiKey":"` + secretKey + `"}`,
		`{"kind":"anthropic","model":"m","apiKey":"` + secretKey + `\u0001"}`,
	} {
		_, err := ParseConfig(json.RawMessage(in))
		if err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("error %v for %.60s", err, in)
		}
	}
}

func TestConfigPrintingHidesKey(t *testing.T) {
	cfg := Config{Kind: Anthropic, Model: "m", APIKey: secretKey}
	var b strings.Builder
	slog.New(slog.NewTextHandler(&b, nil)).Info("x", "cfg", cfg)
	for _, s := range []string{fmt.Sprintf("%v %+v %#v %s", cfg, cfg, cfg, cfg), b.String()} {
		if strings.Contains(s, "SECRET") {
			t.Fatalf("key printed: %s", s)
		}
	}
	if b, _ := json.Marshal(cfg); strings.Contains(string(b), "SECRET") {
		t.Fatalf("key marshalled: %s", b)
	}
}

func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LocalHost": true, "127.0.0.1": true, "127.255.0.9": true, "::1": true,
		"128.0.0.1": false, "10.0.0.1": false, "localhost.evil.com": false, "::2": false, "": false, "0.0.0.0": false,
	} {
		if got := IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v", host, got)
		}
	}
}

func TestRequiresAPIKey(t *testing.T) {
	for k, want := range map[Kind]bool{Anthropic: true, OpenAI: true, OpenAICompatible: true, Ollama: false, "x": false} {
		if RequiresAPIKey(k) != want {
			t.Errorf("RequiresAPIKey(%s) != %v", k, want)
		}
	}
}

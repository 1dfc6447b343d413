package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// expectError reads the next message and checks it is an error reply with the
// given id (JSON text) and code.
func expectError(t *testing.T, p *proc, id string, code int) *rpcError {
	t.Helper()
	m := p.waitFor(id, 10*time.Second)
	if m.Error == nil || m.Error.Code != code {
		t.Fatalf("reply to %s: %s; want error %d", id, m.raw, code)
	}
	return m.Error
}

// stillServing proves the runtime answers a valid request.
func stillServing(t *testing.T, p *proc) {
	t.Helper()
	p.mustCall("provider/capabilities", nil)
}

func TestBeforeInitialize(t *testing.T) {
	p := start(t)
	// Any method other than initialize, known or not, is -32003.
	for _, method := range []string{"provider/capabilities", "no/such/method", "shutdown"} {
		id := p.request(method, nil)
		expectError(t, p, itoa(id), -32003)
	}
	// A wrong protocol version is -32002 with serverProtocolVersion; the
	// client may try again.
	id := p.request("initialize", map[string]any{"protocolVersion": 99})
	e := expectError(t, p, itoa(id), -32002)
	if !strings.Contains(string(e.Data), `"serverProtocolVersion":1`) {
		t.Errorf("data = %s", e.Data)
	}
	res := p.initialize(nil)
	var init struct {
		ProtocolVersion int `json:"protocolVersion"`
		ServerInfo      struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
		Providers []struct {
			Kind           string          `json:"kind"`
			Capabilities   json.RawMessage `json:"capabilities"`
			RequiresAPIKey bool            `json:"requiresApiKey"`
		} `json:"providers"`
		Sandbox bool `json:"sandbox"`
	}
	json.Unmarshal(res, &init)
	if init.ProtocolVersion != 1 || init.ServerInfo.Name != "task-x-runtime" || len(init.Providers) != 4 || !init.Sandbox {
		t.Fatalf("initialize result: %s", res)
	}
	// A second initialize is -32600.
	id = p.request("initialize", map[string]any{"protocolVersion": 1})
	expectError(t, p, itoa(id), -32600)
	stillServing(t, p)
}

func TestFramingAndIDs(t *testing.T) {
	p := start(t)
	p.initialize(nil)
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := func(path, extra string) string {
		b, _ := json.Marshal(path)
		return `{"jsonrpc":"2.0","id":12,"method":"workspace/open","params":{"root":` + string(b) + extra + `}}`
	}
	cases := []struct {
		name string
		line string
		id   string // the reply's id
		code int
	}{
		// protocol.md's error table: a parse error's reply id is null, even
		// when the line shows one (the ACP front end keeps it: TestParseErrorKeepsID).
		{"invalid JSON", `{"jsonrpc":"2.0","id":5,"method":`, "null", -32700},
		{"invalid JSON, id after the break", `{"jsonrpc":"2.0","method":"x","params":{,"id":5}`, "null", -32700},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"provider/capabilities\",\"params\":{\"x\":\"\xff\xfe\"}}", "null", -32700},
		{"float id", `{"jsonrpc":"2.0","id":1.5,"method":"provider/capabilities"}`, "null", -32600},
		{"bool id", `{"jsonrpc":"2.0","id":true,"method":"provider/capabilities"}`, "null", -32600},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"provider/capabilities"}`, "null", -32600},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"provider/capabilities"}`, "null", -32600},
		{"batch", `[{"jsonrpc":"2.0","id":7,"method":"provider/capabilities"}]`, "null", -32600},
		{"missing jsonrpc", `{"id":8,"method":"provider/capabilities"}`, "8", -32600},
		{"unknown method", `{"jsonrpc":"2.0","id":9,"method":"no/such"}`, "9", -32601},
		{"bad params", `{"jsonrpc":"2.0","id":10,"method":"workspace/open","params":{"root":"relative/path"}}`, "10", -32602},
		{"no workspace", `{"jsonrpc":"2.0","id":11,"method":"context/inspect"}`, "11", -32004},
		{"missing root", root(filepath.Join(dir, "missing"), ""), "12", -32602},
		{"root is a file", root(file, ""), "12", -32602},
		{"invalid exclude glob", root(dir, `,"exclude":["[bad"]`), "12", -32602},
		{"empty exclude glob", root(dir, `,"exclude":[""]`), "12", -32602},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p.sendRaw(c.line)
			expectError(t, p, c.id, c.code)
			stillServing(t, p)
		})
	}
	// 1 and "1" are different ids: both get their own reply.
	p.sendRaw(`{"jsonrpc":"2.0","id":"41","method":"provider/capabilities"}`)
	p.sendRaw(`{"jsonrpc":"2.0","id":41,"method":"provider/capabilities"}`)
	a := p.waitFor(`"41"`, 10*time.Second)
	b := p.waitFor(`41`, 10*time.Second)
	if a.Error != nil || b.Error != nil {
		t.Fatalf("string and integer ids: %s / %s", a.raw, b.raw)
	}
	// U+2028 and U+2029 inside strings are not line breaks.
	p.sendRaw("{\"jsonrpc\":\"2.0\",\"id\":\"sep\u2028\u2029\",\"method\":\"provider/capabilities\"}")
	m := p.waitFor(`"sep\u2028\u2029"`, 10*time.Second)
	if m.Error != nil {
		t.Fatalf("U+2028 id: %s", m.raw)
	}
}

func TestCancelRequest(t *testing.T) {
	// A provider that accepts the connection and never answers keeps chat/send in flight.
	hang := newHangingServer(t)
	p := start(t)
	p.initialize(nil)
	id := p.request("chat/send", map[string]any{
		"provider": map[string]any{"kind": "ollama", "model": "m", "baseUrl": hang.URL, "timeoutMs": 600000},
		"request":  map[string]any{"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}}}},
	})
	// An unknown id is ignored.
	p.notify("$/cancelRequest", map[string]any{"id": 9999})
	stillServing(t, p)
	p.notify("$/cancelRequest", map[string]any{"id": id})
	e := expectError(t, p, itoa(id), -32800)
	if !strings.Contains(string(e.Data), `"kind":"cancelled"`) {
		t.Errorf("cancel data: %s", e.Data)
	}
	stillServing(t, p)
}

func TestDuplicateInFlightID(t *testing.T) {
	hang := newHangingServer(t)
	p := start(t)
	p.initialize(nil)
	chat := map[string]any{
		"provider": map[string]any{"kind": "ollama", "model": "m", "baseUrl": hang.URL},
		"request":  map[string]any{"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}}}},
	}
	p.send(map[string]any{"jsonrpc": "2.0", "id": "dup", "method": "chat/send", "params": chat})
	p.send(map[string]any{"jsonrpc": "2.0", "id": "dup", "method": "provider/capabilities"})
	expectError(t, p, `"dup"`, -32600)
	p.notify("$/cancelRequest", map[string]any{"id": "dup"})
	expectError(t, p, `"dup"`, -32800)
}

func TestShutdownAndExit(t *testing.T) {
	hang := newHangingServer(t)
	p := start(t)
	p.initialize(nil)
	inflight := p.request("chat/send", map[string]any{
		"provider": map[string]any{"kind": "ollama", "model": "m", "baseUrl": hang.URL},
		"request":  map[string]any{"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}}}},
	})
	sid := p.request("shutdown", nil)
	// The in-flight request is cancelled; shutdown itself succeeds.
	deadline := time.Now().Add(60 * time.Second)
	gotShutdown, gotCancel := false, false
	for !(gotShutdown && gotCancel) && time.Now().Before(deadline) {
		m := p.next(60 * time.Second)
		switch string(m.ID) {
		case itoa(sid):
			if m.Error != nil {
				t.Fatalf("shutdown: %s", m.raw)
			}
			gotShutdown = true
		case itoa(inflight):
			if m.Error == nil {
				t.Fatalf("in-flight request after shutdown: %s", m.raw)
			}
			gotCancel = true
		}
	}
	if !gotShutdown || !gotCancel {
		t.Fatal("missing replies after shutdown")
	}
	id := p.request("provider/capabilities", nil)
	expectError(t, p, itoa(id), -32600)
	p.notify("exit", nil)
	if code := p.wait(10 * time.Second); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

func TestStdinCloseExits(t *testing.T) {
	p := start(t)
	p.initialize(nil)
	p.stdin.Close()
	if code := p.wait(10 * time.Second); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

// TestOversizedLineEndsSession: a line over the 32 MiB cap ends the session
// (protocol.md Framing), but not silently: the client first gets -32600 with
// the request's id when the line's head holds it, null otherwise. The rest
// of the line is never read.
func TestOversizedLineEndsSession(t *testing.T) {
	for name, tc := range map[string]struct{ line, id string }{
		"id first": {`{"jsonrpc":"2.0","id":7,"method":"x","params":"` + strings.Repeat("a", 32<<20) + `"}`, "7"},
		"id last":  {`{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("a", 32<<20) + `","id":8}`, "null"},
	} {
		t.Run(name, func(t *testing.T) {
			p := start(t)
			p.initialize(nil)
			go p.stdin.Write([]byte(tc.line + "\n"))
			m := p.next(60 * time.Second)
			if m.Error == nil || m.Error.Code != -32600 || string(m.ID) != tc.id || !strings.Contains(m.Error.Message, "32 MiB") {
				t.Fatalf("reply %.300s; want -32600 naming the 32 MiB cap, id %s", m.raw, tc.id)
			}
			p.wait(30 * time.Second)
		})
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// TestLoneSurrogateIDsEchoedExactly: a string id is compared and echoed as its
// JSON text. "\ud800" and "\udfff" both decode to U+FFFD; they are still two ids,
// and each reply carries the id the client sent, not "\ufffd".
func TestLoneSurrogateIDsEchoedExactly(t *testing.T) {
	hang := newHangingServer(t)
	p := start(t)
	p.initialize(nil)
	chat := `{"provider":{"kind":"ollama","model":"m","baseUrl":"` + hang.URL + `","timeoutMs":600000},` +
		`"request":{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}}`
	// A chat/send in flight under "\ud800"...
	p.sendRaw(`{"jsonrpc":"2.0","id":"\ud800","method":"chat/send","params":` + chat + `}`)
	// ...does not make "\udfff" or "\ufffd" a duplicate in-flight id.
	p.sendRaw(`{"jsonrpc":"2.0","id":"\udfff","method":"provider/capabilities"}`)
	if m := p.waitFor(`"\udfff"`, 10*time.Second); m.Error != nil {
		t.Fatalf(`"\udfff" while "\ud800" is in flight: %s`, m.raw)
	}
	p.sendRaw(`{"jsonrpc":"2.0","id":"\ufffd","method":"provider/capabilities"}`)
	if m := p.waitFor(`"\ufffd"`, 10*time.Second); m.Error != nil {
		t.Fatalf(`"\ufffd" while "\ud800" is in flight: %s`, m.raw)
	}
	// $/cancelRequest finds the request by the same text; the reply echoes it.
	p.sendRaw(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"\ud800"}}`)
	expectError(t, p, `"\ud800"`, -32800)
}

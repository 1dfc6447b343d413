// Package mcp owns task-x-runtime's Model Context Protocol support on both
// sides, built on github.com/modelcontextprotocol/go-sdk:
//
//   - the client Manager for the servers the user configured (mcp/configure,
//     mcp/status): per-server state, concurrent starts, a stdio transport that
//     skips non-JSON lines, handshake retry, restart after a crash, and process
//     tree cleanup;
//   - the adapters that offer each server tool to the agent as a tool.Tool
//     named mcp__<server>__<tool> (permission class mcp);
//   - the task-x MCP server (Serve) behind `task-x-runtime --mcp-server`, which
//     serves the built-in tool registry and the `approve` permission-prompt
//     tool, and the ApprovalListener the parent runtime answers it on.
//
// Source: ../shared/spec/protocol.md ("Agent, tools, and extensions":
// mcp/configure, mcp/status, policy; "Claude Code engine and the task-x
// tools"), ../shared/spec/addendum.md §4, §8 and §11, and the MCP
// specification (2025-06-18) for transports and lifecycle.
package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Transport types of a ServerConfig.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
	TypeSSE   = "sse"
)

// ServerConfig is one configured server in the shape of protocol.md
// mcp/configure (the Claude Code and VS Code mcp.json shapes): a stdio server
// has Command (with Args, Env, Cwd); a remote one has URL (with Headers).
// Type defaults to "http" when URL is set and to "stdio" otherwise
// ("streamable-http" is read as "http"). TimeoutMs bounds each tool call and
// the first handshake (defaults: DefaultCallTimeout, DefaultHandshakeTimeout).
// Unknown fields are ignored.
type ServerConfig struct {
	Type      string            `json:"type,omitempty"`
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	URL       string            `json:"url,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	TimeoutMs int               `json:"timeoutMs,omitempty"`
	Disabled  bool              `json:"disabled,omitempty"`
}

// kind returns the normalised transport type.
func (c ServerConfig) kind() string {
	switch t := strings.ToLower(strings.TrimSpace(c.Type)); t {
	case "":
		if c.URL != "" && c.Command == "" {
			return TypeHTTP
		}
		return TypeStdio
	case "streamable-http", "streamablehttp", "streamable_http":
		return TypeHTTP
	default:
		return t
	}
}

// Validate reports the first problem that keeps the server from starting.
func (c ServerConfig) Validate() error {
	switch c.kind() {
	case TypeStdio:
		if strings.TrimSpace(c.Command) == "" {
			return errors.New("a stdio server needs a command")
		}
	case TypeHTTP, TypeSSE:
		if c.URL == "" {
			return fmt.Errorf("a %s server needs a url", c.kind())
		}
		if !strings.HasPrefix(c.URL, "http://") && !strings.HasPrefix(c.URL, "https://") {
			return fmt.Errorf("url must be http or https, got %q", c.URL)
		}
	default:
		return fmt.Errorf("unsupported server type %q (want stdio, http or sse)", c.Type)
	}
	if c.TimeoutMs < 0 {
		return errors.New("timeoutMs must not be negative")
	}
	return nil
}

// display is the status entry's command: the command for a stdio server,
// the URL for a remote one (protocol.md mcp/status).
func (c ServerConfig) display() string {
	if c.kind() == TypeStdio {
		return c.Command
	}
	return redactedURL(c.URL)
}

// equal reports whether two configs start the same server.
func (c ServerConfig) equal(o ServerConfig) bool {
	a, _ := json.Marshal(c)
	b, _ := json.Marshal(o)
	return string(a) == string(b)
}

// ParseServers decodes the servers object of mcp/configure: a JSON object of
// name → ServerConfig. A null or absent value is no servers. Names must be
// 1..64 characters without control characters.
func ParseServers(raw json.RawMessage) (map[string]ServerConfig, error) {
	out := map[string]ServerConfig{}
	if len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("servers must be an object of name to server config: %v", err)
	}
	for name, v := range m {
		if err := checkName(name); err != nil {
			return nil, err
		}
		var c ServerConfig
		if err := json.Unmarshal(v, &c); err != nil {
			return nil, fmt.Errorf("servers.%s: %v", name, err)
		}
		out[name] = c
	}
	return out, nil
}

func checkName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("server name %q must be 1 to 64 characters", name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("server name %q has a control character", name)
		}
	}
	return nil
}

// WorkspaceServers reads the workspace's MCP files: `.mcp.json` (Claude
// Code: {"mcpServers": {...}}) and `.vscode/mcp.json` (VS Code:
// {"servers": {...}}) in root. `${workspaceFolder}` in command, args, cwd and
// env values becomes root, and a relative cwd is taken from root (the default
// cwd too). On a name clash `.mcp.json` wins. A missing file is no servers; a
// malformed one is an error naming the file, and the other file still counts.
func WorkspaceServers(root string) (map[string]ServerConfig, error) {
	out := map[string]ServerConfig{}
	var errs []error
	for _, f := range []struct{ path, key string }{
		{filepath.Join(root, ".vscode", "mcp.json"), "servers"},
		{filepath.Join(root, ".mcp.json"), "mcpServers"},
	} {
		data, err := os.ReadFile(f.path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(data, &doc); err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", f.path, err))
			continue
		}
		servers, err := ParseServers(doc[f.key])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", f.path, err))
			continue
		}
		for name, c := range servers {
			out[name] = expandWorkspace(c, root)
		}
	}
	return out, errors.Join(errs...)
}

func expandWorkspace(c ServerConfig, root string) ServerConfig {
	x := func(s string) string { return strings.ReplaceAll(s, "${workspaceFolder}", root) }
	c.Command = x(c.Command)
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = x(a)
	}
	c.Args = args
	if len(c.Env) > 0 {
		env := make(map[string]string, len(c.Env))
		for k, v := range c.Env {
			env[k] = x(v)
		}
		c.Env = env
	}
	c.Cwd = x(c.Cwd)
	if c.Cwd == "" {
		c.Cwd = root
	} else if !filepath.IsAbs(c.Cwd) {
		c.Cwd = filepath.Join(root, c.Cwd)
	}
	return c
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// redactedURL is a remote server's URL as shown in status and logs: its
// user information and every query value replaced (a URL often carries
// the server's token: ?token=…, https://user:token@host).
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.IndexAny(raw, "?#"); i >= 0 {
			raw = raw[:i]
		}
		if i := strings.LastIndex(raw, "@"); i >= 0 {
			raw = raw[:strings.Index(raw, "//")+2] + "redacted" + raw[i:]
		}
		return raw
	}
	if u.User != nil {
		u.User = url.User("redacted")
	}
	if u.RawQuery != "" {
		var parts []string
		for _, kv := range strings.Split(u.RawQuery, "&") {
			k, _, _ := strings.Cut(kv, "=")
			parts = append(parts, k+"=redacted")
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// scrub takes the secret parts of a remote server's URL out of msg (an
// error of its transport names the URL): the URL as configured, then
// each user-information and query value left, raw and escaped.
func (c ServerConfig) scrub(msg string) string {
	if c.URL == "" {
		return msg
	}
	msg = strings.ReplaceAll(msg, c.URL, redactedURL(c.URL))
	u, err := url.Parse(c.URL)
	if err != nil {
		return msg
	}
	var parts []string
	if u.User != nil {
		parts = append(parts, u.User.Username())
		if p, ok := u.User.Password(); ok {
			parts = append(parts, p)
		}
	}
	for _, vs := range u.Query() {
		parts = append(parts, vs...)
	}
	for _, p := range parts {
		if len(p) < 4 {
			continue
		}
		msg = strings.ReplaceAll(msg, p, "redacted")
		msg = strings.ReplaceAll(msg, url.QueryEscape(p), "redacted")
	}
	return msg
}

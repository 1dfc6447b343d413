package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/task-x/task-x-runtime/internal/tool"
)

// ToolPrefix starts the name of every MCP tool in the registry:
// mcp__<server>__<tool> (addendum §4).
const ToolPrefix = "mcp__"

// maxResultChars caps the text of one MCP tool result given to the model.
const maxResultChars = 100_000

// ToolName is the registry name of tool t of server: mcp__<server>__<t>, with
// every character outside [A-Za-z0-9_-] replaced by "_" (the providers'
// tool-name alphabet) and the whole cut at 128 characters.
func ToolName(server, t string) string {
	name := ToolPrefix + sanitize(server) + "__" + sanitize(t)
	if len(name) > 128 {
		name = name[:128]
	}
	return name
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Tools returns a tool.Tool (permission class mcp) for every tool of every
// server that is running, or that stopped and restarts on next use, sorted
// by name. On a name clash after sanitizing, the first server in name order
// wins.
func (m *Manager) Tools() []tool.Tool {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []tool.Tool
	seen := map[string]bool{}
	for _, name := range sortedNames(m.servers) {
		s := m.servers[name]
		if s.state != StateRunning && s.state != StateStopped && s.state != StateStarting {
			continue
		}
		for _, t := range s.tools {
			full := ToolName(name, t.Name)
			if seen[full] {
				m.log.Warn("mcp tool name clash; keeping the first", "tool", full)
				continue
			}
			seen[full] = true
			out = append(out, &mcpTool{m: m, server: name, tool: t.Name, spec: tool.Spec{
				Name:        full,
				Description: describe(name, t),
				InputSchema: inputSchema(t.InputSchema),
				Permission:  tool.ClassMCP,
			}})
		}
	}
	return out
}

func describe(server string, t *sdk.Tool) string {
	d := strings.TrimSpace(t.Description)
	if d == "" {
		d = t.Title
	}
	if len(d) > 4000 {
		d = d[:4000] + "…"
	}
	return fmt.Sprintf("[MCP server %s] %s", server, d)
}

// inputSchema returns the tool's JSON Schema, or an empty object schema
// when the server sent none or something that is not an object schema.
func inputSchema(v any) json.RawMessage {
	if v != nil {
		if raw, err := json.Marshal(v); err == nil {
			var m map[string]any
			if json.Unmarshal(raw, &m) == nil && m["type"] == "object" {
				return raw
			}
		}
	}
	return json.RawMessage(`{"type":"object","properties":{}}`)
}

type mcpTool struct {
	m            *Manager
	server, tool string
	spec         tool.Spec
}

func (t *mcpTool) Spec() tool.Spec { return t.spec }

func (t *mcpTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	return t.m.Call(ctx, t.server, t.tool, input)
}

// resultText renders the content blocks of a result as the text the model
// sees: text as is, other blocks as a bracketed note; structured content
// when there are no blocks. Cut at maxResultChars.
func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s %s]", c.Name, c.URI))
		case *sdk.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s]", c.Resource.URI))
			}
		default:
			if raw, err := json.Marshal(c); err == nil {
				parts = append(parts, string(raw))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if raw, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(raw))
		}
	}
	text := strings.Join(parts, "\n")
	if len(text) > maxResultChars {
		text = text[:maxResultChars] + fmt.Sprintf("\n[output cut at %d characters]", maxResultChars)
	}
	return text
}

// maxDataBytes caps the JSON of a result's Data (tools/call results,
// toolFinished events and task files): a server can answer with megabytes
// (a screenshot, a database dump) and a line over protocol.md's 32 MiB ends
// the client's session.
const maxDataBytes = 1 << 20

// resultData is the structured form of res for Data: res itself when its
// JSON fits maxDataBytes, else the text the model sees (already cut at
// maxResultChars) as one text block, marked truncated.
func resultData(res *sdk.CallToolResult, text string) any {
	if raw, err := json.Marshal(res); err == nil && len(raw) <= maxDataBytes {
		return res
	}
	return map[string]any{
		"content":   []any{map[string]any{"type": "text", "text": text}},
		"truncated": true,
	}
}

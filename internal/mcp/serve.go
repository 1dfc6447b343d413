package mcp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/task-x/task-x-runtime/internal/tool"
	"github.com/task-x/task-x-runtime/internal/toolcall"
	"github.com/task-x/task-x-runtime/internal/version"
)

// ApproveTool is the name of the permission-prompt tool the task-x MCP
// server always serves (Claude Code: --permission-prompt-tool
// mcp__task-x__approve).
const ApproveTool = "approve"

// ServeOptions configure Serve. A nil *ServeOptions serves only approve.
type ServeOptions struct {
	// Registry holds the tools to serve (the runtime's built-in registry).
	// Nil, or NoTools, serves only approve. Tools of class interactive and
	// mcp__ tools are never served.
	Registry *tool.Registry
	// NoTools serves only approve (--no-tools).
	NoTools bool
	// Env is the environment every call runs in: workspace root, index,
	// sandbox and the session's stale-edit record.
	Env *tool.Env
	// Approval is the TASK_X_APPROVAL value ("<addr> <token>"). Empty:
	// every approve call is a deny.
	Approval string
	// Forward runs every registry tool call in the parent runtime at
	// Approval (--forward; claude/run): the parent runs it with the task's
	// own environment (workspace, index, edit log, stale-edit record,
	// keys). Registry then only names the tools; Env is not used.
	Forward bool
	// OnChanges is told about the files a call changed (to update the
	// index). May be nil.
	OnChanges func(ctx context.Context, changes []tool.FileChange)
	// Middleware wraps every registry call in the tool-call pipeline
	// (toolcall.Pipeline), outside the wait for a background command and
	// the report of changes the server always does: hooks or a policy
	// when the caller has them. May be nil.
	Middleware []toolcall.Middleware
	// Logger receives diagnostics (tool names, outcomes; never inputs or
	// outputs). Default: discard.
	Logger *slog.Logger
	// Version is serverInfo.version.
	Version string
}

// Serve runs the task-x MCP server over newline-delimited JSON on in/out
// (the MCP stdio transport, lines up to MaxLineBytes) until the client
// disconnects or ctx ends; when the input ends, the replies to requests
// still open are written first (DrainTimeout at most). Each registry tool is offered with its own name,
// description and input schema; a tool failure is a result with isError and
// the failure's message. A background run_command call is waited for and
// its final output returned. The approve tool takes {tool_name, input,
// tool_use_id?} and answers one text block of JSON: {"behavior":"allow",
// "updatedInput":...} or {"behavior":"deny","message":...}.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts *ServeOptions) error {
	var o ServeOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Version == "" {
		o.Version = version.Version
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "task-x", Version: o.Version}, nil)
	if o.Registry != nil && !o.NoTools {
		p := pipeline(&o)
		for _, spec := range o.Registry.Specs() {
			// update_plan feeds our loop's plan event; Claude Code keeps its own todo list.
			if spec.Permission == tool.ClassInteractive || spec.Name == ApproveTool || spec.Name == "update_plan" ||
				len(spec.Name) >= len(ToolPrefix) && spec.Name[:len(ToolPrefix)] == ToolPrefix {
				continue
			}
			t, _ := o.Registry.Get(spec.Name)
			schema := inputSchema(spec.InputSchema)
			srv.AddTool(&sdk.Tool{
				Name:        spec.Name,
				Description: spec.Description,
				InputSchema: schema,
				Annotations: annotations(spec.Permission),
			}, handlerFor(t, &o, p))
		}
	}
	srv.AddTool(&sdk.Tool{
		Name:        ApproveTool,
		Description: "Permission prompt: asks the task-x user whether a tool call may run.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"tool_name":{"type":"string"},"input":{"type":"object"},"tool_use_id":{"type":"string"}},"required":["tool_name","input"]}`),
	}, approveHandler(&o))
	// The end of the input waits for the replies still open (DrainTimeout).
	in, out = draining(ctx, in, out, DrainTimeout)
	return srv.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}, MaxLineLength: MaxLineBytes + 1})
}

// claudeToolUseID is the _meta key of a tools/call from Claude Code naming
// the model's tool_use id (notes/claude-code.md §2).
const claudeToolUseID = "claudecode/toolUseId"

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func annotations(c tool.Class) *sdk.ToolAnnotations {
	a := &sdk.ToolAnnotations{}
	switch c {
	case tool.ClassRead:
		a.ReadOnlyHint = true
	case tool.ClassDestructive:
		t := true
		a.DestructiveHint = &t
	default:
		f := false
		a.DestructiveHint = &f
	}
	return a
}

func textResult(text string, isError bool) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: isError}
}

func handlerFor(t tool.Tool, o *ServeOptions, p *toolcall.Pipeline) sdk.ToolHandler {
	if o.Forward {
		return forwardHandler(t.Spec().Name, o)
	}
	return registryHandler(t, o, p)
}

// forwardHandler sends the call to the parent runtime (ServeOptions.Forward).
func forwardHandler(name string, o *ServeOptions) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		input := req.Params.Arguments
		if len(input) == 0 || string(input) == "null" {
			input = json.RawMessage(`{}`)
		}
		id, _ := req.Params.Meta[claudeToolUseID].(string)
		ans := callParent(ctx, o.Approval, ToolCall{Name: name, Input: input, CallID: id})
		o.Logger.Info("mcp tool call forwarded", "tool", name, "error", ans.IsError)
		return textResult(ans.Content, ans.IsError), nil
	}
}

// pipeline is the tool-call pipeline of the served registry: the caller's
// middleware, then the changes reported to OnChanges, a background
// command's included, which is waited for.
func pipeline(o *ServeOptions) *toolcall.Pipeline {
	mw := append([]toolcall.Middleware{}, o.Middleware...)
	mw = append(mw, toolcall.WithChanges(func(ctx context.Context, _ *toolcall.Call, res tool.Result) {
		if o.OnChanges != nil && len(res.Changes) > 0 {
			o.OnChanges(context.WithoutCancel(ctx), res.Changes)
		}
	}), toolcall.WaitBackground())
	return &toolcall.Pipeline{Tools: o.Registry, Env: o.Env, Middleware: mw}
}

func registryHandler(t tool.Tool, o *ServeOptions, p *toolcall.Pipeline) sdk.ToolHandler {
	name := t.Spec().Name
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		// The edit log records Claude's call id.
		id, _ := req.Params.Meta[claudeToolUseID].(string)
		out := p.Invoke(ctx, toolcall.Call{ID: id, Name: name, Input: req.Params.Arguments})
		text, isErr := out.Text()
		if te, ok := tool.AsError(out.Err); ok {
			o.Logger.Info("mcp tool call failed", "tool", name, "kind", te.Kind)
		} else if out.Err != nil {
			o.Logger.Warn("mcp tool call error", "tool", name, "err", out.Err)
		} else {
			o.Logger.Info("mcp tool call", "tool", name)
		}
		return textResult(text, isErr), nil
	}
}

type approveInput struct {
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
}

func approveHandler(o *ServeOptions) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var in approveInput
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || in.ToolName == "" {
			return textResult(promptAnswer(ApprovalDecision{Message: "malformed permission request"}, "", nil), false), nil
		}
		dec := askParent(ctx, o.Approval, ApprovalRequest{ToolName: in.ToolName, Input: in.Input, ToolUseID: in.ToolUseID})
		o.Logger.Info("approve", "tool", in.ToolName, "allow", dec.Allow)
		return textResult(promptAnswer(dec, in.ToolName, in.Input), false), nil
	}
}

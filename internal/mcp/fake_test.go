package mcp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/task-x/task-x-runtime/internal/proctree"
)

// The test binary doubles as a fake stdio MCP server when FAKE_MCP_MODE is
// set: modes "plain", "junk" (prints non-JSON lines before and between
// messages), "slow" (waits FAKE_MCP_DELAY_MS before serving), "once-hang"
// (the first start never answers; later starts do: FAKE_MCP_MARK is a file
// marking the first start), "env" (also a getenv {text} tool: the
// variable's value, "unset" when absent) and "spawn" (starts a setsid grandchild whose
// pid goes to FAKE_MCP_MARK). Tools: echo {text}, add {a, b}, die (exits
// the process mid-call), hang (never answers).
func TestMain(m *testing.M) {
	if mode := os.Getenv("FAKE_MCP_MODE"); mode != "" {
		os.Exit(fakeServer(mode))
	}
	os.Exit(m.Run())
}

type echoIn struct {
	Text string `json:"text"`
}
type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}
type emptyIn struct{}

func fakeServer(mode string) int {
	mark := os.Getenv("FAKE_MCP_MARK")
	switch mode {
	case "junk":
		fmt.Println("Starting fake server v1.0 ... (not JSON)")
		fmt.Println("{not json either")
	case "slow":
		ms, _ := strconv.Atoi(os.Getenv("FAKE_MCP_DELAY_MS"))
		time.Sleep(time.Duration(ms) * time.Millisecond)
	case "once-hang":
		if _, err := os.Stat(mark); err != nil {
			os.WriteFile(mark, []byte("1"), 0o644)
			time.Sleep(time.Hour)
		}
	case "spawn":
		c := exec.Command("sleep", "1000")
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Start(); err == nil {
			os.WriteFile(mark, []byte(strconv.Itoa(c.Process.Pid)), 0o644)
		}
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "echoes text"}, func(ctx context.Context, req *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
		if mode == "junk" {
			fmt.Println("log: echo called")
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "add", Description: "adds"}, func(ctx context.Context, req *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strconv.FormatFloat(in.A+in.B, 'f', -1, 64)}}}, nil, nil
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "die", Description: "exits"}, func(ctx context.Context, req *sdk.CallToolRequest, in emptyIn) (*sdk.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	})
	if mode == "env" {
		sdk.AddTool(srv, &sdk.Tool{Name: "getenv", Description: "the value of a variable, unset when absent"}, func(ctx context.Context, req *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			v, ok := os.LookupEnv(in.Text)
			if !ok {
				v = "unset"
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: v}}}, nil, nil
		})
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "hang", Description: "never answers"}, func(ctx context.Context, req *sdk.CallToolRequest, in emptyIn) (*sdk.CallToolResult, any, error) {
		time.Sleep(time.Hour)
		return nil, nil, nil
	})
	if err := srv.Run(context.Background(), &sdk.StdioTransport{MaxLineLength: MaxLineBytes + 1}); err != nil {
		return 1
	}
	return 0
}

// fake returns the config of a fake server in mode with extra env.
func fake(t *testing.T, mode string, env ...string) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := map[string]string{"FAKE_MCP_MODE": mode}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		e[k] = v
	}
	return ServerConfig{Command: exe, Env: e}
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	// A zombie is dead for our purpose.
	_, zombie, ok := proctree.Parent(pid)
	return ok && !zombie
}

type nopRC struct{ r *strings.Reader }

func (n nopRC) Read(p []byte) (int, error) { return n.r.Read(p) }
func (nopRC) Close() error                 { return nil }

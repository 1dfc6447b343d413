package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/task-x/task-x-runtime/internal/jsonrpc"
	"github.com/task-x/task-x-runtime/internal/protocol"
)

// resolveDataDir is --data-dir made absolute, else $XDG_DATA_HOME/task-x,
// else ~/.local/share/task-x. It is created.
func resolveDataDir() (string, error) {
	dir := g.dataDir
	if dir == "" {
		if x := os.Getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
			dir = filepath.Join(x, "task-x")
		} else {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", errors.New("no home folder to keep tasks in; pass --data-dir DIR")
			}
			dir = filepath.Join(home, ".local", "share", "task-x")
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("cannot create the data folder %s; pass --data-dir DIR with a writable folder", abs)
	}
	return abs, nil
}

// indexTotals remembers how many files each folder had at its last open, so
// the progress bar has a total.
func loadTotal(dataDir, root string) int {
	m := map[string]int{}
	if b, err := os.ReadFile(filepath.Join(dataDir, "index-totals.json")); err == nil {
		json.Unmarshal(b, &m)
	}
	return m[root]
}

func saveTotal(dataDir, root string, files int) {
	p := filepath.Join(dataDir, "index-totals.json")
	m := map[string]int{}
	if b, err := os.ReadFile(p); err == nil {
		json.Unmarshal(b, &m)
	}
	m[root] = files
	if b, err := json.Marshal(m); err == nil {
		tmp := p + ".tmp"
		if os.WriteFile(tmp, b, 0o600) == nil {
			os.Rename(tmp, p)
		}
	}
}

// userMCPServers reads ~/.task-x/mcp.json ({"mcpServers": {...}}, or the
// server map itself).
func userMCPServers() (map[string]json.RawMessage, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, nil
	}
	p := filepath.Join(home, ".task-x", "mcp.json")
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON; fix or remove it", p)
	}
	if f.MCPServers != nil {
		return f.MCPServers, nil
	}
	var m map[string]json.RawMessage
	json.Unmarshal(b, &m)
	return m, nil
}

// trusted reports whether root is listed in DATA/trusted.json (written by
// --trust), whose .mcp.json and hooks the runtime may then read.
func trusted(dataDir, root string) bool {
	var list []string
	if b, err := os.ReadFile(filepath.Join(dataDir, "trusted.json")); err == nil {
		json.Unmarshal(b, &list)
	}
	for _, r := range list {
		if r == root {
			return true
		}
	}
	return false
}

func trust(dataDir, root string) {
	if trusted(dataDir, root) {
		return
	}
	var list []string
	p := filepath.Join(dataDir, "trusted.json")
	if b, err := os.ReadFile(p); err == nil {
		json.Unmarshal(b, &list)
	}
	list = append(list, root)
	b, _ := json.Marshal(list)
	os.WriteFile(p, b, 0o600)
}

// friendly turns an error into one plain sentence naming the fix; with
// --verbose the protocol code and data follow.
func friendly(err error) string { return friendlyIn(err, flagWords) }

// friendlyIn is friendly with the fixes named by w (the session's commands
// in the session).
func friendlyIn(err error, w fixWords) string {
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		if errors.Is(err, jsonrpc.ErrClosed) {
			return "the runtime stopped unexpectedly; see its log (task-x --verbose shows where)"
		}
		return err.Error()
	}
	msg := je.Message
	low := strings.ToLower(msg)
	var data protocol.ProviderError // the data of a provider error
	if je.Data != nil {
		if b, err := json.Marshal(je.Data); err == nil {
			json.Unmarshal(b, &data)
		}
	}
	switch data.Kind {
	case "auth":
		low = "api key"
	case "permissionDenied":
		msg = "the provider does not let this API key use the model; pick another with " + w.model + " or check the key's permissions"
	case "notFound":
		msg = "the provider does not know this model or address; check " + w.model + " and " + w.baseURL
	case "rateLimited":
		msg = "the provider is rate-limiting requests; wait a minute and try again"
	case "overloaded", "server":
		msg = "the provider's server failed to answer; try again later"
	case "network":
		msg = "the provider could not be reached; check " + w.baseURL + " and that the server is running"
	case "timeout":
		msg = "the provider did not answer in time; try again, or check the server"
	case "invalidConfig":
		msg = fmt.Sprintf("the provider settings are not valid (%s); fix them with %s", firstNonEmpty(data.Field, data.Message), w.settings)
		if strings.HasSuffix(data.Field, "apiKey") {
			// Nothing was sent: the runtime refused the key before any
			// request (protocol.md ProviderConfig), so the provider did not.
			dm := strings.ToLower(data.Message)
			switch {
			case strings.Contains(dm, "https"):
				host := "its host"
				if i := strings.LastIndex(data.Message, " for "); i >= 0 {
					host = data.Message[i+len(" for "):]
				}
				msg = fmt.Sprintf("nothing was sent: a key goes only over https or to this machine (localhost, 127.0.0.1, ::1), and %s is plain http to %s; use an https URL, or reach the server through 127.0.0.1 (e.g. ssh -L)", w.baseURL, host)
			case strings.Contains(dm, "required"):
				msg = "nothing was sent: this provider needs an API key; set ANTHROPIC_API_KEY, OPENAI_API_KEY or TASK_X_API_KEY"
			case strings.Contains(dm, "control"):
				msg = "nothing was sent: the API key holds a control character (a pasted newline?); set the key's variable again"
			}
		}
	}
	switch {
	case je.Code == -32004:
		msg = "no folder is open in the runtime; pass the folder to work on"
	case data.Kind == "invalidConfig":
	case data.Kind == "auth" || data.Kind == "" && (strings.Contains(low, "api key") || strings.Contains(low, "apikey") || strings.Contains(low, "unauthorized") || strings.Contains(low, "401")):
		msg = "the provider refused the API key; set ANTHROPIC_API_KEY, OPENAI_API_KEY or TASK_X_API_KEY for this provider"
	case strings.Contains(low, "baseurl") || strings.Contains(low, "base url"):
		msg = "this provider needs a server address; " + w.setURL
	case strings.Contains(low, "no such file") || strings.Contains(low, "not a directory") || strings.Contains(low, "does not exist"):
		msg = "the folder does not exist or is not a folder; pass an existing folder"
	}
	if g.verbose {
		if je.Data != nil {
			if b, err := json.Marshal(je.Data); err == nil {
				return fmt.Sprintf("%s (code %d, %s; runtime message: %s)", msg, je.Code, b, je.Message)
			}
		}
		return fmt.Sprintf("%s (code %d; runtime message: %s)", msg, je.Code, je.Message)
	}
	return msg
}

func firstNonEmpty(a ...string) string {
	for _, s := range a {
		if s != "" {
			return s
		}
	}
	return ""
}

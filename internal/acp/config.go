package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/task-x/task-x-runtime/internal/session"
)

// Config is what an ACP client does not send: the model and the task
// settings. It is read from a JSON file ($TASK_X_ACP_CONFIG, else
// ~/.task-x/acp.json) whose members are agent/run's settings (provider,
// policy, limits, routes, fallbacks, prices, validation, roleProviders)
// plus dataDir and sandbox, then from the environment: TASK_X_PROVIDER,
// TASK_X_MODEL and TASK_X_BASE_URL set the provider's kind, model and
// baseUrl, and a provider without apiKey takes ANTHROPIC_API_KEY,
// OPENAI_API_KEY or TASK_X_API_KEY by kind (docs/acp.md).
type Config struct {
	// Run holds the settings every prompt runs with (Prompt, Images,
	// ChatMode, TaskID and Editor are the prompt's).
	Run     session.RunRequest
	DataDir string
	Sandbox *bool
	// Source names the file read ("" for none), for messages.
	Source string
}

// fileConfig is the file's shape: RunRequest's settings and two more.
type fileConfig struct {
	session.RunRequest
	DataDir string `json:"dataDir"`
	Sandbox *bool  `json:"sandbox"`
}

// LoadConfig reads the config file and the environment (getenv; nil is
// os.Getenv) under home. A missing default file is no error; a missing
// $TASK_X_ACP_CONFIG file, bad JSON or a bad member is.
func LoadConfig(home string, getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	path := getenv("TASK_X_ACP_CONFIG")
	explicit := path != ""
	if !explicit && home != "" {
		path = filepath.Join(home, ".task-x", "acp.json")
	}
	var fc fileConfig
	cfg := &Config{}
	if path != "" {
		data, err := os.ReadFile(path)
		switch {
		case err == nil:
			if err := json.Unmarshal(data, &fc); err != nil {
				return nil, fmt.Errorf("%s: %v", path, err)
			}
			cfg.Source = path
		case explicit || !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("TASK_X_ACP_CONFIG: %v", err)
		}
	}
	fc.Prompt, fc.Images, fc.ChatMode, fc.TaskID, fc.Editor = "", nil, "", "", nil
	cfg.Run, cfg.DataDir, cfg.Sandbox = fc.RunRequest, fc.DataDir, fc.Sandbox
	if cfg.DataDir != "" && !filepath.IsAbs(cfg.DataDir) {
		return nil, fmt.Errorf("%s: dataDir must be an absolute path", path)
	}
	prov := map[string]any{}
	if len(cfg.Run.Provider) > 0 && string(cfg.Run.Provider) != "null" {
		if err := json.Unmarshal(cfg.Run.Provider, &prov); err != nil {
			return nil, fmt.Errorf("%s: provider: %v", path, err)
		}
	}
	for env, key := range map[string]string{"TASK_X_PROVIDER": "kind", "TASK_X_MODEL": "model", "TASK_X_BASE_URL": "baseUrl"} {
		if v := strings.TrimSpace(getenv(env)); v != "" {
			prov[key] = v
		}
	}
	if len(prov) == 0 {
		cfg.Run.Provider = nil
		return cfg, nil
	}
	if k, _ := prov["apiKey"].(string); k == "" {
		kind, _ := prov["kind"].(string)
		if key := keyFromEnv(kind, getenv); key != "" {
			prov["apiKey"] = key
		}
	}
	cfg.Run.Provider, _ = json.Marshal(prov)
	return cfg, nil
}

// keyEnv names the environment variables a provider kind's key is read
// from, first found wins.
var keyEnv = map[string][]string{
	"anthropic":        {"ANTHROPIC_API_KEY", "TASK_X_API_KEY"},
	"openai":           {"OPENAI_API_KEY", "TASK_X_API_KEY"},
	"openaiCompatible": {"TASK_X_API_KEY", "OPENAI_API_KEY"},
	"ollama":           {"TASK_X_API_KEY"},
}

func keyFromEnv(kind string, getenv func(string) string) string {
	for _, name := range keyEnv[kind] {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
	}
	return ""
}

// missingKey says which key a provider that needs one lacks ("" when the
// provider has its key or needs none, or when there is no provider).
func (c *Config) missingKey() string {
	var p struct {
		Kind   string `json:"kind"`
		APIKey string `json:"apiKey"`
	}
	if json.Unmarshal(c.Run.Provider, &p) != nil || p.APIKey != "" {
		return ""
	}
	switch p.Kind {
	case "anthropic", "openai", "openaiCompatible":
		return strings.Join(keyEnv[p.Kind], " or ")
	}
	return ""
}

// Keys are the API keys the settings hold: every apiKey member of the
// provider, the role providers, the fallbacks and the routes. They join
// the redaction set as soon as the settings are read, before anything is
// sent (a session/load replays a saved task before any prompt runs).
func (c *Config) Keys() []string {
	raw, err := json.Marshal(c.Run)
	if err != nil {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var keys []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && strings.EqualFold(k, "apiKey") && strings.TrimSpace(s) != "" {
					keys = append(keys, strings.TrimSpace(s), s)
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return keys
}

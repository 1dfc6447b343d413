package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/task-x/task-x-runtime/internal/acp"
	"github.com/task-x/task-x-runtime/internal/logx"
)

// runACP serves the Agent Client Protocol on stdio (--acp): the model and
// settings come from the environment and the config file (docs/acp.md);
// sessions are saved in dataDir (the flag, else the config's, else
// ~/.task-x/acp) so session/load finds them after a restart.
func runACP(ctx context.Context, home, dataDir string, logger *slog.Logger, secrets *logx.Secrets) int {
	load := func() (*acp.Config, error) {
		cfg, err := acp.LoadConfig(home, nil)
		if err != nil {
			return nil, err
		}
		switch {
		case dataDir != "":
			abs, err := filepath.Abs(dataDir)
			if err != nil {
				return nil, err
			}
			cfg.DataDir = abs
		case cfg.DataDir == "" && home != "":
			cfg.DataDir = filepath.Join(home, ".task-x", "acp")
		}
		if cfg.DataDir != "" {
			if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
				return nil, err
			}
		}
		return cfg, nil
	}
	// A configuration error does not end the process: the client has not
	// read anything yet and would show a bare exit. initialize reads the
	// configuration again and answers the error (-32602, docs/acp.md).
	if cfg, err := load(); err != nil {
		logger.Warn("task-x configuration: initialize will fail until it is fixed", "err", err)
	} else {
		// The keys are redacted before anything is sent or logged.
		for _, k := range cfg.Keys() {
			secrets.Add(k)
		}
	}
	a := acp.New(&acp.Options{Version: version, Logger: logger, Secrets: secrets, Home: home, LoadConfig: load})
	if err := a.Serve(ctx, os.Stdin, os.Stdout); err != nil {
		logger.Error("ACP session ended", "err", err)
		return 1
	}
	return 0
}

// Package sandbox owns command execution for run_command and hooks: running a
// bash -c command line with a timeout and an output cap, ending its whole
// process tree (descendants that called setsid included) on timeout, cancel,
// exit or runtime shutdown, stripping the runtime's keys from its
// environment, and, when sandboxed, confining it with the kernel.
//
// Every command runs under a helper: the runtime re-executes itself
// (/proc/self/exe with a private first argument, see HelperMain) and the
// helper supervises /bin/bash -c as its child, reaps every orphan, forwards
// signals and reports the exit status on a pipe. The helper dies with the
// runtime (a parent-death signal from a dedicated spawner thread, and a
// lifeline pipe whose end of file means the runtime is gone) and then ends
// the tree. The kernel confinement applies to bash only, never to the
// helper that must be able to signal it (../../docs/sandbox.md).
//
//   - Sandboxed (addendum §6 and §11): the helper starts in new user, mount,
//     PID and network namespaces, makes / private, mounts a fresh /proc, then
//     applies Landlock (read everywhere; write only under Spec.WritableDirs, a
//     private temp folder and the per-user build caches; TCP bind and connect
//     denied) before it starts bash. As PID 1 of the namespace, its exit ends
//     every process of the command. Where the kernel refuses the namespaces,
//     Landlock alone confines the command and the helper, a child subreaper,
//     sweeps the tree. Where Landlock is missing, Start fails with
//     *UnavailableError: a command never runs unconfined silently.
//   - Unsandboxed: the helper is a child subreaper without any confinement;
//     every descendant that leaves the process group is reparented to it, and
//     it kills them all once bash ends or the command is stopped.
//
// Linux only. Source: ../shared/spec/addendum.md §6, §9 and §11.
package sandbox

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Defaults of a Spec.
const (
	// DefaultOutputCap is the number of output bytes kept when
	// Spec.OutputCap is 0: the first and the last half.
	DefaultOutputCap = 30_000
	// KillGrace is how long a stopped command has between SIGTERM and
	// SIGKILL.
	KillGrace = 2 * time.Second
)

// Spec describes one command.
type Spec struct {
	// Command is the shell command line, run with /bin/bash -c (/bin/sh
	// where bash is missing). It must not be empty or hold a NUL byte.
	Command string
	// Dir is the absolute working folder.
	Dir string
	// Env is the command's environment ("KEY=value"). Keys of the runtime
	// are removed from it (see CleanEnv with Secrets); TMPDIR, TMP and TEMP
	// are set to the command's private temp folder.
	Env []string
	// Secrets are key values the runtime holds: a variable whose value is
	// one of them is removed from Env.
	Secrets []string
	// WritableDirs are the folders a sandboxed command may write under (the
	// workspace root, the task's worktree). Missing folders are skipped.
	WritableDirs []string
	// Timeout stops the command after this long; 0 means no limit.
	Timeout time.Duration
	// OutputCap is the number of bytes of combined stdout and stderr kept
	// (head and tail); 0 means DefaultOutputCap.
	OutputCap int
	// Sandboxed confines the command with the kernel (see the package doc).
	Sandboxed bool
	// OnOutput, when set, gets the output as it comes, piece by piece,
	// with its stream ("stdout" or "stderr"; the two then have their own
	// pipes), one call at a time, from the goroutines that read it; it
	// must not keep p. The Result's Output is the same bytes.
	OnOutput func(stream string, p []byte)
}

// Result is how a command ended.
type Result struct {
	// ExitCode is bash's exit status, or -1 when it was killed by a signal
	// (a timeout or a cancel included).
	ExitCode int
	// Output is the combined stdout and stderr, valid UTF-8, cut in the
	// middle with "[... N bytes omitted ...]" past the output cap.
	Output    string
	Truncated bool
	TimedOut  bool
	Cancelled bool
	Duration  time.Duration
	// Confinement says how the command ran: "none", "namespaces+landlock"
	// or "landlock".
	Confinement string
}

// UnavailableError reports that the kernel cannot sandbox a command. The
// command did not run.
type UnavailableError struct {
	Reason string
}

func (e *UnavailableError) Error() string {
	return "the kernel sandbox is unavailable: " + e.Reason
}

// ErrClosed is returned by Start after KillAll.
var ErrClosed = errors.New("sandbox: the runtime is shutting down; no new command starts")

// Environment variables always removed from a command's environment.
var secretNames = map[string]bool{
	"ANTHROPIC_API_KEY": true, "OPENAI_API_KEY": true, "OPENROUTER_API_KEY": true,
	"TASK_X_API_KEY": true, "ANTHROPIC_AUTH_TOKEN": true,
}

// IsProviderKeyName reports whether an environment variable called name
// holds a model provider's key the runtime reads (ANTHROPIC_API_KEY,
// OPENAI_API_KEY, OPENROUTER_API_KEY, TASK_X_API_KEY,
// ANTHROPIC_AUTH_TOKEN; case-insensitive): no process the runtime starts
// for someone else (a command, an MCP server) inherits them.
func IsProviderKeyName(name string) bool { return secretNames[strings.ToUpper(name)] }

// Suffixes of variable names removed too: credentials by naming convention.
var secretSuffixes = []string{"_API_KEY", "_APIKEY", "_TOKEN", "_SECRET", "_SECRET_KEY", "_ACCESS_KEY", "_PASSWORD"}

// IsSecretName reports whether an environment variable called name is a
// credential the runtime never passes to a command: the provider keys,
// TASK_X_API_KEY, and any name ending in _API_KEY, _TOKEN, _SECRET,
// _SECRET_KEY, _ACCESS_KEY or _PASSWORD (case-insensitive).
func IsSecretName(name string) bool {
	up := strings.ToUpper(name)
	if secretNames[up] {
		return true
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(up, s) {
			return true
		}
	}
	return false
}

// CleanEnv returns env without the variables a command must not see:
// IsSecretName names, names listed in extraNames, any variable whose value
// equals one of secrets (empty secrets are ignored), and malformed entries
// (no "=").
func CleanEnv(env, secrets, extraNames []string) []string {
	extra := map[string]bool{}
	for _, n := range extraNames {
		extra[n] = true
	}
	var out []string
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || IsSecretName(k) || extra[k] {
			continue
		}
		held := false
		for _, s := range secrets {
			if s != "" && v == s {
				held = true
				break
			}
		}
		if !held {
			out = append(out, kv)
		}
	}
	return out
}

// agentNames are variables that name a socket or an agent of the user's
// session (ssh-agent, gpg-agent, the session and system bus, docker,
// the display, editors' IPC): a sandboxed command does not see them.
var agentNames = map[string]bool{
	"SSH_AUTH_SOCK": true, "SSH_AGENT_PID": true, "GPG_AGENT_INFO": true,
	"DBUS_SESSION_BUS_ADDRESS": true, "DBUS_SYSTEM_BUS_ADDRESS": true, "DBUS_STARTER_ADDRESS": true,
	"DOCKER_HOST": true, "CONTAINER_HOST": true, "XDG_RUNTIME_DIR": true,
	"DISPLAY": true, "WAYLAND_DISPLAY": true, "XAUTHORITY": true, "PULSE_SERVER": true,
	"GNOME_KEYRING_CONTROL": true, "GNOME_KEYRING_PID": true, "KRB5CCNAME": true,
	"SSH_ASKPASS": true, "GIT_ASKPASS": true, "SUDO_ASKPASS": true,
	"TMUX": true, "STY": true, "SWAYSOCK": true, "I3SOCK": true, "KITTY_LISTEN_ON": true,
	"NVIM": true, "NVIM_LISTEN_ADDRESS": true, "VSCODE_IPC_HOOK": true, "VSCODE_IPC_HOOK_CLI": true,
}

// IsAgentName reports whether a variable called name points a sandboxed
// command at an agent or a socket of the user's session: the agentNames,
// and names ending in _SOCK or _SOCKET or starting with VSCODE_GIT_.
func IsAgentName(name string) bool {
	up := strings.ToUpper(name)
	return agentNames[up] || strings.HasSuffix(up, "_SOCK") || strings.HasSuffix(up, "_SOCKET") ||
		strings.HasPrefix(up, "VSCODE_GIT_")
}

func withoutAgentEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !IsAgentName(k) {
			out = append(out, kv)
		}
	}
	return out
}

func (s *Spec) validate() error {
	if strings.TrimSpace(s.Command) == "" {
		return errors.New("sandbox: the command is empty")
	}
	if strings.IndexByte(s.Command, 0) >= 0 {
		return errors.New("sandbox: the command contains a NUL byte")
	}
	if s.Dir == "" || s.Dir[0] != '/' {
		return fmt.Errorf("sandbox: the working folder %q is not an absolute path", s.Dir)
	}
	if s.Timeout < 0 || s.OutputCap < 0 {
		return errors.New("sandbox: negative timeout or output cap")
	}
	return nil
}

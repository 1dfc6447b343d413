//go:build !linux

package sandbox

import (
	"context"
	"runtime"
)

// Process is a started command. Only Linux runs commands.
type Process struct{ done chan struct{} }

// Run fails: commands run on Linux only.
func Run(ctx context.Context, spec Spec) (Result, error) {
	_, err := Start(ctx, spec)
	return Result{}, err
}

// Start fails with *UnavailableError: commands run on Linux only.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	return nil, &UnavailableError{Reason: "commands run on Linux only (this is " + runtime.GOOS + ")"}
}

// Available reports why commands cannot run here.
func Available() error {
	return &UnavailableError{Reason: "commands run on Linux only (this is " + runtime.GOOS + ")"}
}

// Stop does nothing.
func (p *Process) Stop() {}

// Done is never closed.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait returns a zero Result.
func (p *Process) Wait() Result { return Result{} }

// Pid is 0.
func (p *Process) Pid() int { return 0 }

// KillAll does nothing: no command runs.
func KillAll() {}

// HelperMain does nothing outside Linux.
func HelperMain() {}

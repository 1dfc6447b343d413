package agent

import (
	"errors"
	"fmt"
	"time"
)

// Limits is agent/run `limits` (protocol.md agent/run, Context compression).
// Zero fields take the defaults: MaxIterations Options.MaxIterations (50),
// MaxTokensPerCall Options.MaxTokens (4096, ChatRequest.maxTokens),
// MaxWallClockMs none, ContextWindowTokens the provider lookup,
// CompactPercent 85. Other fields of the wire object (maxParallel) belong to
// team mode and are ignored here.
type Limits struct {
	MaxIterations       int   `json:"maxIterations,omitempty"`
	MaxTokensPerCall    int   `json:"maxTokensPerCall,omitempty"`
	MaxWallClockMs      int64 `json:"maxWallClockMs,omitempty"`
	ContextWindowTokens int   `json:"contextWindowTokens,omitempty"`
	CompactPercent      int   `json:"compactPercent,omitempty"`
}

// Compaction thresholds (protocol.md Context compression).
const (
	// MaxTokensPerCallCap bounds limits.maxTokensPerCall: no provider
	// generates more in one response, and a larger value would only be
	// rejected by the provider after the task started.
	MaxTokensPerCallCap = 1_000_000

	DefaultCompactPercent = 85
	MinCompactPercent     = 30
	MaxCompactPercent     = 95
	dropExcerptsPercent   = 90
)

// Validate reports the first out-of-range field by its wire name, for the
// server's -32602: negative numbers anywhere, compactPercent outside 30..95.
func (l Limits) Validate() error {
	switch {
	case l.MaxIterations < 0:
		return errors.New("limits.maxIterations must be a positive number")
	case l.MaxTokensPerCall < 0 || l.MaxTokensPerCall > MaxTokensPerCallCap:
		return fmt.Errorf("limits.maxTokensPerCall must be between 1 and %d", MaxTokensPerCallCap)
	case l.MaxWallClockMs < 0:
		return errors.New("limits.maxWallClockMs must be a positive number")
	case l.ContextWindowTokens < 0:
		return errors.New("limits.contextWindowTokens must be a positive number")
	case l.CompactPercent != 0 && (l.CompactPercent < MinCompactPercent || l.CompactPercent > MaxCompactPercent):
		return fmt.Errorf("limits.compactPercent must be between %d and %d, got %d", MinCompactPercent, MaxCompactPercent, l.CompactPercent)
	}
	return nil
}

func (l Limits) compactPercent() int {
	if l.CompactPercent == 0 {
		return DefaultCompactPercent
	}
	return l.CompactPercent
}

// errWallClock is the cancel cause of a task that reached maxWallClockMs.
var errWallClock = errors.New("agent: wall-clock limit reached")

func (l Limits) wallClock() time.Duration { return time.Duration(l.MaxWallClockMs) * time.Millisecond }

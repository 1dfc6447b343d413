package retry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Policy says how often and how long to retry a failed call.
type Policy struct {
	Attempts int
	Base     time.Duration
	Max      time.Duration
}

// Backoff returns the delay before attempt n (0-based): exponential with
// full jitter, capped at p.Max.
func (p Policy) Backoff(n int) time.Duration {
	d := p.Base << n
	if d > p.Max || d <= 0 {
		d = p.Max
	}
	return time.Duration(rand.Int64N(int64(d)))
}

// Do calls fn until it succeeds, the attempts run out or ctx ends.
func Do(ctx context.Context, p Policy, fn func() error) error {
	var err error
	for n := 0; n < p.Attempts; n++ {
		if err = fn(); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(p.Backoff(n)):
		}
	}
	return err
}

//go:build !unix

package retrieve

import "time"

// processCPU is unknown here (0).
func processCPU() time.Duration { return 0 }

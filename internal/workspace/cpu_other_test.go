//go:build !unix

package workspace

import "time"

// processCPU is unknown here (0).
func processCPU() time.Duration { return 0 }

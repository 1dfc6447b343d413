//go:build !unix

package project

import "time"

// processCPU is unknown here (0).
func processCPU() time.Duration { return 0 }

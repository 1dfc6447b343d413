//go:build !linux

package project

import "testing"

// bindReadOnly is not available here.
func bindReadOnly(*testing.T, string) bool { return false }

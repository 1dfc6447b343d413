//go:build !linux

package project

// hugeHeap advises huge pages for a reopen's heap on Linux only
// (hugeheap_linux.go).
func hugeHeap(n int64) {}

// Package fsx owns the file-system helpers shared by the tools, the edit log
// and the task store: containment of a path inside a root (lexically and
// through symlinks) and atomic file writes (temp file in the same folder,
// fsync, rename), so a crash or a failed write leaves the old file or the new
// one, never a torn one.
//
// Source: ../shared/spec/addendum.md §4 (paths inside the root) and §7
// (atomic writes).
package fsx

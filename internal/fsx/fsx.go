// Package fsx owns the file-system helpers shared by the tools, the edit log
// and the task store: containment of a path inside a root (lexically and
// through symlinks), atomic file writes (temp file, fsync, rename), so a
// crash or a failed write leaves the old file or the new one, never a torn
// one, with the temp file kept out of the root where a rename allows it
// (WriteFileAtomicVia), and the recognition and removal of the temp files a
// crash left (IsTempName, RemoveTemps, RemoveTempsOf).
//
// Source: ../shared/spec/addendum.md §4 (paths inside the root) and §7
// (atomic writes).
package fsx

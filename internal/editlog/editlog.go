// Package editlog owns the edit log of one workspace: every file change an
// edit tool makes is an operation with the old and new content of each file,
// their SHA-256 hashes and a unified diff. From it come edits/list,
// edits/pending (the net unsettled change per file), edits/keep,
// edits/revert and edits/undo, with conflict detection: a file whose content
// on disk is not what the agent last wrote is never overwritten.
//
// The log is write-ahead: an operation is saved (with the hashes of the old
// and new content, the contents stored first) before any file is written,
// and marked committed after; a revert or an undo is saved as an intent
// before it writes. With a checkpoint (dataDir/checkpoints/<workspace id>.json
// and its neighbours, journal.go) every change appends one fsynced record
// to a journal, contents are stored once by hash, as deltas against the
// previous version where that is smaller (blobs.go), and the journal is
// compacted into the snapshot now and then: a change costs in proportion to
// the change, not to the log. Open loads it (version 1 checkpoints, with
// contents inline, too). Past MaxOperations operations the contents of the
// oldest settled operations are dropped (their hashes are kept) and Undo
// answers ErrTooOld for them.
//
// Several Logs (runtimes) may share one checkpoint: ids carry a per-Log
// random prefix, and every change runs under a file lock on a sidecar
// "<workspace id>.lock" after merging the checkpoint by id (sync.go).
//
// Source: ../shared/spec/protocol.md (edits/*, dataDir and checkpoints) and
// ../shared/spec/addendum.md §4, §7 and §11.
package editlog

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// MaxOperations is how many operations keep their contents; past it the
// contents of the oldest settled ones are dropped (protocol.md, dataDir).
const MaxOperations = 500

// checkpointVersion is the format version of the snapshot this package
// writes; version 1 (contents inline) still loads.
const checkpointVersion = 2

// Errors. Match them with errors.Is.
var (
	// ErrUnknownOperation: Undo of an id the log does not hold.
	ErrUnknownOperation = errors.New("unknown operation")
	// ErrTooOld: Undo of an operation whose contents were dropped.
	ErrTooOld = errors.New("too old to undo")
	// ErrAlreadyUndone: Undo of an operation that was undone already.
	ErrAlreadyUndone = errors.New("operation was already undone")
	// ErrCorrupt wraps a checkpoint that cannot be decoded.
	ErrCorrupt = errors.New("corrupt checkpoint")
)

// ChangedError is returned by Apply when a file no longer holds the content
// the caller read (the stale-edit check of addendum §4, done under the log's
// lock). Nothing was written.
type ChangedError struct{ Path string }

func (e *ChangedError) Error() string {
	return fmt.Sprintf("%s changed on disk since it was read", e.Path)
}

// FileSpec is one file of an edit handed to Apply. Path is relative to the
// root with "/". Before is the content the caller read and based the edit on
// (ignored when !Existed: the file must not exist). After is the new content
// (ignored when Delete). Mode is the permission of a created file (0 means
// 0o644); an existing file keeps its own.
type FileSpec struct {
	Path    string
	Existed bool
	Before  []byte
	Delete  bool
	After   []byte
	Mode    fs.FileMode
}

// OpSpec describes one operation for Apply: the tool that made it, the task
// and tool call it belongs to (both optional) and its files, in order.
type OpSpec struct {
	TaskID string
	CallID string
	Tool   string
	Files  []FileSpec
}

// FileEdit is one file of a logged operation. A hash is "" for an absent file
// (created: BeforeHash ""; deleted: AfterHash ""); the contents themselves
// are in the log's blob store under their hashes until the operation is
// dropped. Settled marks a change that was kept, reverted or undone.
type FileEdit struct {
	Path       string      `json:"path"`
	BeforeHash string      `json:"beforeHash"`
	AfterHash  string      `json:"afterHash"`
	Mode       fs.FileMode `json:"mode,omitempty"`
	Added      int         `json:"added"`
	Removed    int         `json:"removed"`
	Settled    bool        `json:"settled,omitempty"`
}

// Kind is "created", "modified" or "deleted".
func (f *FileEdit) Kind() string {
	switch {
	case f.BeforeHash == "":
		return "created"
	case f.AfterHash == "":
		return "deleted"
	}
	return "modified"
}

// Operation is one logged edit. Committed is false between the write-ahead
// save and the end of the writes. Undone marks an operation edits/undo
// reverted. Dropped marks an operation whose contents were pruned.
type Operation struct {
	ID        string     `json:"id"`
	TaskID    string     `json:"taskId,omitempty"`
	CallID    string     `json:"callId,omitempty"`
	Tool      string     `json:"tool"`
	Time      time.Time  `json:"time"`
	Files     []FileEdit `json:"files"`
	Diff      string     `json:"diff"`
	Committed bool       `json:"committed"`
	Undone    bool       `json:"undone,omitempty"`
	Dropped   bool       `json:"dropped,omitempty"`
}

// Settled reports whether every file of the operation was kept, reverted or
// undone.
func (o *Operation) Settled() bool {
	for i := range o.Files {
		if !o.Files[i].Settled {
			return false
		}
	}
	return true
}

// hashOf is the hex SHA-256 of content; "" stands for an absent file and is
// never the hash of content.
func hashOf(content []byte) string {
	s := sha256.Sum256(content)
	return hex.EncodeToString(s[:])
}

// WorkspaceID is the id of a workspace in dataDir/checkpoints: the first 16
// bytes of the SHA-256 of its resolved root, in hex.
func WorkspaceID(root string) string {
	s := sha256.Sum256([]byte(root))
	return hex.EncodeToString(s[:16])
}

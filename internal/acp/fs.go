package acp

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/jsonrpc"
)

// editorFS is the session's view of the client editor's files, used when
// the client offers fs.readTextFile / fs.writeTextFile: our file tools read
// an open file's unsaved buffer with fs/read_text_file and, after the edit
// log wrote a file, give the editor its new content with
// fs/write_text_file (not a content holding a key the runtime holds: the
// editor reloads that one from the disk). Only a session's own task, and
// only files inside its folder, go to the editor; the disk stays the
// answer otherwise. Commands
// stay in our sandbox (no terminal/*).
type editorFS struct{ a *Agent }

// fsWait bounds one fs request: a client that does not answer leaves the
// tool on the disk's content (the wait ends then, though the request's
// $/cancel_request is still waiting for its reply), and, for a read, is
// not asked again for the rest of the turn. A variable for tests.
var fsWait = 10 * time.Second

// callBounded is conn.Call bounded by fsWait: it returns at the deadline
// even while the connection still waits for the cancelled request's reply.
// timedOut is true when the client did not answer in time (not when ctx
// ended).
func (e editorFS) callBounded(ctx context.Context, method string, params any) (raw json.RawMessage, timedOut bool, err error) {
	cctx, cancel := context.WithTimeout(ctx, fsWait)
	defer cancel()
	type reply struct {
		raw json.RawMessage
		err error
	}
	ch := make(chan reply, 1) // the call may end after we return
	go func() {
		raw, err := e.a.conn.Call(cctx, method, params)
		ch <- reply{raw, err}
	}()
	select {
	case r := <-ch:
		return r.raw, r.err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil, r.err
	case <-cctx.Done():
		return nil, ctx.Err() == nil, cctx.Err()
	}
}

// maxWriteParams bounds fs/write_text_file's params so the whole request
// stays under the message cap (protocol.md "Framing") with room for its
// envelope; a larger content is never cut to fit.
const maxWriteParams = jsonrpc.DefaultMaxMessageBytes - 4096

type readTextFileParams struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
}

type writeTextFileParams struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Content   string `json:"content"`
}

// target is the session of taskID when the client offers the capability
// and abs lies inside the session's folder, with the path of abs the
// editor knows: under the session's cwd, which may reach the project root
// (where the tools' paths are) through a symlink.
func (e editorFS) target(taskID, abs string, write bool) (*acpSession, string) {
	a := e.a
	a.mu.Lock()
	offered := a.client.FS.ReadTextFile
	if write {
		offered = a.client.FS.WriteTextFile
	}
	s := a.sessions[taskID] // a subagent's files are in its worktree: never the editor's
	a.mu.Unlock()
	if !offered || s == nil {
		return nil, ""
	}
	inside := func(dir string) (string, bool) {
		rel, err := filepath.Rel(dir, abs)
		return rel, err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
	}
	if _, ok := inside(s.cwd); ok {
		return s, abs
	}
	if rel, ok := inside(s.root); ok {
		return s, filepath.Join(s.cwd, rel)
	}
	return nil, ""
}

func (e editorFS) Text(ctx context.Context, taskID, abs string) (string, bool) {
	s, path := e.target(taskID, abs, false)
	if s == nil {
		return "", false
	}
	s.mu.Lock()
	silent := s.fsSilent
	s.mu.Unlock()
	if silent {
		return "", false // it did not answer earlier in this turn
	}
	raw, timedOut, err := e.callBounded(ctx, methodReadTextFile, readTextFileParams{SessionID: s.id, Path: path})
	if err != nil {
		if timedOut {
			s.mu.Lock()
			s.fsSilent = true
			s.mu.Unlock()
		}
		e.a.log.Debug("acp: fs/read_text_file failed; reading the disk", "err", err, "timedOut", timedOut)
		return "", false
	}
	var r struct {
		Content *string `json:"content"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Content == nil {
		return "", false
	}
	return *r.Content, true
}

func (e editorFS) Wrote(ctx context.Context, taskID, abs string, content []byte) {
	s, path := e.target(taskID, abs, true)
	if s == nil {
		return
	}
	if e.a.secrets.Redact(string(content)) != string(content) {
		// A key the runtime holds never goes out; the editor reloads the
		// file from the disk instead.
		return
	}
	if !utf8.Valid(content) {
		// JSON would carry it with U+FFFD for the invalid bytes: a buffer
		// the user saved would lose them. The editor reloads it instead.
		return
	}
	params := writeTextFileParams{SessionID: s.id, Path: path, Content: string(content)}
	if raw, err := json.Marshal(params); err != nil || len(raw) > maxWriteParams {
		// The connection would cut the message's longest string to fit the
		// cap: the editor would hold a truncated buffer. It reloads the
		// file from the disk instead.
		return
	}
	if _, _, err := e.callBounded(context.WithoutCancel(ctx), methodWriteTextFile, params); err != nil {
		e.a.log.Debug("acp: fs/write_text_file failed; the file on disk has the edit", "err", err)
	}
}

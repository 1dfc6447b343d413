package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/task-x/task-x-runtime/internal/fsx"
	"github.com/task-x/task-x-runtime/internal/tool"
)

// binarySniff is how much of a file is checked for a NUL byte, as the
// workspace scanner does (addendum §2).
const binarySniff = 8 << 10

// maxFileBytes bounds what read_file, write_file and replace_text hold in
// memory.
const maxFileBytes = 32 << 20

// writeAtomic is the atomic write the edit tools use; tests replace it in a
// tool's write field to inject a failure.
var writeAtomic = fsx.WriteFileAtomicIn

// decodeInput parses a tool input strictly: unknown fields and trailing data
// are invalidInput.
func decodeInput(input json.RawMessage, v any) error {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return tool.Errorf(tool.ErrInvalidInput, "invalid input: %v", err)
	}
	if dec.More() {
		return tool.Errorf(tool.ErrInvalidInput, "invalid input: trailing data after the JSON object")
	}
	return nil
}

// needRoot fails with ErrNoWorkspace when no workspace is open.
func needRoot(env *tool.Env) error {
	if env == nil || env.Root == "" {
		return tool.Errorf(tool.ErrNoWorkspace, "no workspace is open")
	}
	return nil
}

// resolvePath resolves p inside env.Root (fsx.Resolve) and maps its errors to
// tool failures.
func resolvePath(env *tool.Env, p string) (fsx.Resolved, error) {
	if err := needRoot(env); err != nil {
		return fsx.Resolved{}, err
	}
	if strings.TrimSpace(p) == "" {
		return fsx.Resolved{}, tool.Errorf(tool.ErrInvalidInput, "path is empty")
	}
	r, err := fsx.Resolve(env.Root, p)
	switch {
	case err == nil:
		return r, nil
	case errors.Is(err, fsx.ErrOutsideRoot):
		return fsx.Resolved{}, tool.Errorf(tool.ErrOutsideWorkspace,
			"%s is outside the workspace root; only paths inside %s can be used", p, env.Root)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return fsx.Resolved{}, tool.Errorf(tool.ErrNotFound, "%s: %v", p, err)
	default:
		return fsx.Resolved{}, tool.Errorf(tool.ErrInvalidInput, "%s: %v", p, err)
	}
}

// openRoot opens env.Root as an os.Root; file operations go through it so a
// symlink swapped in after resolving still cannot lead outside.
func openRoot(env *tool.Env) (*os.Root, error) {
	r, err := os.OpenRoot(env.Root)
	if err != nil {
		return nil, tool.Errorf(tool.ErrNoWorkspace, "cannot open the workspace root: %v", err)
	}
	return r, nil
}

// osName turns a resolved root-relative path into an os.Root name.
func osName(rel string) string {
	return strings.ReplaceAll(rel, "/", string(os.PathSeparator))
}

// fsError maps a file-system error on rel to a tool failure.
func fsError(rel string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tool.Errorf(tool.ErrNotFound, "%s does not exist", rel)
	case errors.Is(err, fs.ErrPermission):
		return tool.Errorf(tool.ErrIO, "%s: permission denied", rel)
	case strings.Contains(err.Error(), "path escapes from parent"):
		return tool.Errorf(tool.ErrOutsideWorkspace, "%s leads outside the workspace root", rel)
	default:
		return tool.Errorf(tool.ErrIO, "%s: %v", rel, err)
	}
}

// IsSecretPath reports whether the root-relative path rel names a file that
// looks like it holds secrets (addendum §11): .env*, *.pem, *.key, id_rsa*,
// .npmrc, .netrc, credentials*. Only the file name is checked, without regard
// to case.
func IsSecretPath(rel string) bool {
	base := strings.ToLower(path.Base(strings.ReplaceAll(rel, "\\", "/")))
	switch {
	case strings.HasPrefix(base, ".env"),
		strings.HasSuffix(base, ".pem"),
		strings.HasSuffix(base, ".key"),
		strings.HasPrefix(base, "id_rsa"),
		base == ".npmrc",
		base == ".netrc",
		strings.HasPrefix(base, "credentials"):
		return true
	}
	return false
}

// IsSecretFile is IsSecretPath for the root-relative rel or, when rel is a
// symbolic link inside root, for the file it resolves to: a link named
// notes.txt that points at .env holds the same secrets, and read_file, which
// follows the link, treats it as .env. Only a link as the last component can
// change the name (a linked folder keeps the file's own name).
func IsSecretFile(root, rel string) bool {
	if IsSecretPath(rel) {
		return true
	}
	if root == "" {
		return false
	}
	abs := filepath.Join(root, filepath.FromSlash(rel))
	fi, err := os.Lstat(abs)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return false
	}
	target, err := filepath.EvalSymlinks(abs)
	return err == nil && IsSecretPath(filepath.ToSlash(target))
}

// inGitDir reports whether any component of rel (root-relative, "/" or "\\"
// separators) is ".git", compared case-insensitively: the top-level
// repository's folder, a nested repository's or a submodule's (a ".git" file
// or folder), and everything under them. Writing tools refuse such paths so
// that no tool plants hooks or config in any repository (docs/tools.md).
func inGitDir(rel string) bool {
	for _, c := range strings.FieldsFunc(rel, func(r rune) bool { return r == '/' || r == '\\' }) {
		if strings.EqualFold(c, ".git") {
			return true
		}
	}
	return false
}

// isBinary reports whether data looks binary: a NUL byte in its first 8 KiB.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), binarySniff)], 0) >= 0
}

// readRegular reads the regular file rel through r, refusing folders, files
// over maxFileBytes and binary files.
func readRegular(r *os.Root, rel string) ([]byte, error) {
	fi, err := r.Stat(osName(rel))
	if err != nil {
		return nil, fsError(rel, err)
	}
	if fi.IsDir() {
		return nil, tool.Errorf(tool.ErrInvalidInput, "%s is a directory; use list_files to see its entries", rel)
	}
	if !fi.Mode().IsRegular() {
		return nil, tool.Errorf(tool.ErrInvalidInput, "%s is not a regular file", rel)
	}
	if fi.Size() > maxFileBytes {
		return nil, tool.Errorf(tool.ErrInvalidInput,
			"%s is %d bytes, over the %d MiB limit; use search_text or run_command (head, sed -n) to look at parts of it",
			rel, fi.Size(), maxFileBytes>>20)
	}
	data, err := r.ReadFile(osName(rel))
	if err != nil {
		return nil, fsError(rel, err)
	}
	if isBinary(data) {
		return nil, tool.Errorf(tool.ErrInvalidInput, "%s is a binary file; it cannot be shown or edited as text", rel)
	}
	return data, nil
}

// editorText is what the agent sees of the file p whose disk content is
// disk: the client editor's text (its unsaved buffer) when env has an
// editor that has one, for a UTF-8 file; else disk.
func editorText(ctx context.Context, env *tool.Env, p fsx.Resolved, disk []byte) []byte {
	if env.Editor == nil || !utf8.Valid(disk) {
		return disk
	}
	text, ok := env.Editor.Text(ctx, env.TaskID, p.Abs)
	if !ok || len(text) > maxFileBytes || !utf8.ValidString(text) || strings.IndexByte(text, 0) >= 0 {
		return disk
	}
	return []byte(text)
}

// truncateRunes cuts s to at most n bytes on a UTF-8 boundary and reports
// whether it cut.
func truncateRunes(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}

// lineOf returns the 1-based line number of byte offset off in s.
func lineOf(s string, off int) int {
	return strings.Count(s[:off], "\n") + 1
}

// plural formats n with a noun and its plural "s".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

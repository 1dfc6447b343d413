package editlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/task-x/task-x-runtime/internal/fsx"
)

// File contents live in a content-addressed blob store, once per distinct
// content, named by their hash (the FileEdit hashes): the operations only
// name them. In memory (no checkpoint) a blob is the content itself; on disk
// (dataDir/checkpoints/<workspace id>.blobs/<hash>) a blob is either the whole
// content or a delta against another blob (the content before the edit):
// the common prefix and suffix are copied from the base, the middle is
// stored. So a one-line edit of a large file stores a few hundred bytes.
// Chains of deltas are at most maxDeltaDepth long; past that a content is
// stored whole again. Every read checks the hash of what it rebuilt.

// blobStore holds contents by hash. Callers hold the Log's lock (and, on
// disk, the checkpoint's file lock for put and gc).
type blobStore interface {
	// put stores content under hash (hashOf(content)) unless it is there
	// already; base, when not "", is the hash of baseContent, a blob already
	// stored, that the content may be stored as a delta against.
	put(hash string, content []byte, base string, baseContent []byte) error
	// get returns the content of hash; an error wrapping fs.ErrNotExist
	// when it is not stored, ErrCorrupt when what is stored does not
	// rebuild to the hash.
	get(hash string) ([]byte, error)
	// gc removes every blob that neither live names nor a live blob needs
	// as a delta base.
	gc(live map[string]bool) error
}

// memBlobs is the blob store of a log without a checkpoint.
type memBlobs map[string][]byte

func (m memBlobs) put(hash string, content []byte, _ string, _ []byte) error {
	if _, ok := m[hash]; !ok {
		m[hash] = bytes.Clone(content)
	}
	return nil
}

func (m memBlobs) get(hash string) ([]byte, error) {
	c, ok := m[hash]
	if !ok {
		return nil, fmt.Errorf("content %.12s: %w", hash, fs.ErrNotExist)
	}
	return c, nil
}

func (m memBlobs) gc(live map[string]bool) error {
	for h := range m {
		if !live[h] {
			delete(m, h)
		}
	}
	return nil
}

// Blob files: a 4-byte magic, then "F" and the content, or "D", the
// uvarint depth (1 for a delta against a whole blob), the 32-byte base hash,
// the uvarint prefix and suffix lengths copied from the base, and the middle
// bytes.
const (
	blobMagic     = "TXB1"
	maxDeltaDepth = 64
	blobHeaderMax = len(blobMagic) + 1 + binary.MaxVarintLen64*3 + sha256.Size
)

// dirBlobs is the blob store of a log with a checkpoint: one file per blob
// in dir, written atomically (temp file in dir, fsync, rename).
type dirBlobs struct {
	dir   string
	depth map[string]int // known depths (0: whole), filled by put and get
}

func newDirBlobs(dir string) *dirBlobs { return &dirBlobs{dir: dir, depth: map[string]int{}} }

func (d *dirBlobs) path(hash string) string { return filepath.Join(d.dir, hash) }

// validHash reports whether h is a hex SHA-256, so it can name a file.
func validHash(h string) bool {
	if len(h) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

func (d *dirBlobs) put(hash string, content []byte, base string, baseContent []byte) error {
	if !validHash(hash) {
		return fmt.Errorf("editlog: invalid content hash %q", hash)
	}
	if _, err := os.Lstat(d.path(hash)); err == nil {
		return nil
	}
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		return err
	}
	data := d.encode(content, base, baseContent)
	if err := fsx.WriteFileAtomic(d.path(hash), data, 0o600); err != nil {
		return err
	}
	if data[len(blobMagic)] == 'F' {
		d.depth[hash] = 0
	}
	return nil
}

// encode returns the blob file of content: a delta against base when base is
// stored, its chain is not too long and the delta is at most half the
// content; the whole content otherwise.
func (d *dirBlobs) encode(content []byte, base string, baseContent []byte) []byte {
	whole := append([]byte(blobMagic+"F"), content...)
	if base == "" || !validHash(base) || len(content) < 256 {
		return whole
	}
	pre, suf := commonEnds(baseContent, content)
	mid := content[pre : len(content)-suf]
	if 2*len(mid) > len(content) {
		return whole
	}
	depth, err := d.depthOf(base)
	if err != nil || depth+1 > maxDeltaDepth {
		return whole
	}
	raw, _ := hex.DecodeString(base)
	out := make([]byte, 0, blobHeaderMax+len(mid))
	out = append(out, blobMagic+"D"...)
	out = binary.AppendUvarint(out, uint64(depth+1))
	out = append(out, raw...)
	out = binary.AppendUvarint(out, uint64(pre))
	out = binary.AppendUvarint(out, uint64(suf))
	return append(out, mid...)
}

// commonEnds returns the lengths of the common prefix and suffix of a and b,
// not overlapping in either.
func commonEnds(a, b []byte) (pre, suf int) {
	n := min(len(a), len(b))
	for pre < n && a[pre] == b[pre] {
		pre++
	}
	for suf < n-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	return pre, suf
}

// delta is one decoded blob file: whole (base "") or a delta.
type delta struct {
	depth    int
	base     string
	pre, suf int
	mid      []byte // the content of a whole blob
}

func decodeBlob(hash string, data []byte) (delta, error) {
	bad := func(what string) (delta, error) {
		return delta{}, fmt.Errorf("%w: content %.12s: %s", ErrCorrupt, hash, what)
	}
	if len(data) < len(blobMagic)+1 || string(data[:len(blobMagic)]) != blobMagic {
		return bad("not a blob")
	}
	rest := data[len(blobMagic)+1:]
	switch data[len(blobMagic)] {
	case 'F':
		return delta{mid: rest}, nil
	case 'D':
	default:
		return bad("unknown kind")
	}
	depth, n := binary.Uvarint(rest)
	if n <= 0 || depth < 1 || depth > maxDeltaDepth || len(rest) < n+sha256.Size {
		return bad("bad delta header")
	}
	rest = rest[n:]
	base := hex.EncodeToString(rest[:sha256.Size])
	rest = rest[sha256.Size:]
	pre, n1 := binary.Uvarint(rest)
	if n1 <= 0 {
		return bad("bad delta header")
	}
	suf, n2 := binary.Uvarint(rest[n1:])
	if n2 <= 0 || pre > maxFileSize || suf > maxFileSize {
		return bad("bad delta header")
	}
	return delta{depth: int(depth), base: base, pre: int(pre), suf: int(suf), mid: rest[n1+n2:]}, nil
}

// maxFileSize bounds the lengths a delta header may claim (1 GiB).
const maxFileSize = 1 << 30

// depthOf returns the chain depth of a stored blob, reading only its header
// when it is not known yet.
func (d *dirBlobs) depthOf(hash string) (int, error) {
	if n, ok := d.depth[hash]; ok {
		return n, nil
	}
	f, err := os.Open(d.path(hash))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	head := make([]byte, blobHeaderMax)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return 0, err
	}
	dl, err := decodeBlob(hash, head[:n])
	if err != nil {
		return 0, err
	}
	d.depth[hash] = dl.depth
	return dl.depth, nil
}

func (d *dirBlobs) get(hash string) ([]byte, error) {
	if !validHash(hash) {
		return nil, fmt.Errorf("%w: content hash %q", ErrCorrupt, hash)
	}
	// Read the chain down to a whole blob.
	var chain []delta
	for h := hash; ; {
		data, err := os.ReadFile(d.path(h))
		if err != nil {
			return nil, fmt.Errorf("content %.12s: %w", h, err)
		}
		dl, err := decodeBlob(h, data)
		if err != nil {
			return nil, err
		}
		d.depth[h] = dl.depth
		if len(chain) > 0 && dl.depth != chain[len(chain)-1].depth-1 {
			return nil, fmt.Errorf("%w: content %.12s: broken delta chain", ErrCorrupt, h)
		}
		chain = append(chain, dl)
		if dl.base == "" {
			break
		}
		h = dl.base
	}
	// Rebuild: the sizes bottom up, then the bytes top down as pieces of
	// the whole blob and the middles (no intermediate version is built).
	size := make([]int, len(chain))
	size[len(chain)-1] = len(chain[len(chain)-1].mid)
	for i := len(chain) - 2; i >= 0; i-- {
		c := chain[i]
		if c.pre+c.suf > size[i+1] {
			return nil, fmt.Errorf("%w: content %.12s: delta longer than its base", ErrCorrupt, hash)
		}
		size[i] = c.pre + len(c.mid) + c.suf
	}
	out := make([]byte, 0, size[0])
	var emit func(level, off, n int)
	emit = func(level, off, n int) {
		c := chain[level]
		if c.base == "" {
			out = append(out, c.mid[off:off+n]...)
			return
		}
		end := off + n
		// [0, pre) from the base, [pre, pre+len(mid)) the middle, the rest
		// from the base's end.
		if off < c.pre {
			e := min(end, c.pre)
			emit(level+1, off, e-off)
			off = e
		}
		if off < end && off < c.pre+len(c.mid) {
			e := min(end, c.pre+len(c.mid))
			out = append(out, c.mid[off-c.pre:e-c.pre]...)
			off = e
		}
		if off < end {
			shift := size[level+1] - c.suf - (c.pre + len(c.mid))
			emit(level+1, off+shift, end-off)
		}
	}
	if size[0] > 0 {
		emit(0, 0, size[0])
	}
	if hashOf(out) != hash {
		return nil, fmt.Errorf("%w: content %.12s does not match its hash", ErrCorrupt, hash)
	}
	return out, nil
}

// gc removes the blobs not reachable from live (through delta bases) and
// leftover temp files. Errors other than a blob that cannot be read are
// returned; an unreadable blob is kept.
func (d *dirBlobs) gc(live map[string]bool) error {
	entries, err := os.ReadDir(d.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	var walk func(h string)
	walk = func(h string) {
		for h != "" && !keep[h] {
			keep[h] = true
			f, err := os.Open(d.path(h))
			if err != nil {
				return
			}
			head := make([]byte, blobHeaderMax)
			n, _ := io.ReadFull(f, head)
			f.Close()
			dl, err := decodeBlob(h, head[:n])
			if err != nil {
				return
			}
			h = dl.base
		}
	}
	for h := range live {
		if validHash(h) {
			walk(h)
		}
	}
	var firstErr error
	for _, e := range entries {
		name := e.Name()
		if keep[name] || (!validHash(name) && !isTempName(name)) {
			continue
		}
		if err := os.Remove(filepath.Join(d.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) && firstErr == nil {
			firstErr = err
		}
		delete(d.depth, name)
	}
	return firstErr
}

// isTempName reports whether a file name has the form of an fsx atomic
// write's temp file: ".<name>.tmp-<16 hex digits>".
func isTempName(name string) bool {
	return fsx.IsTempName(name)
}

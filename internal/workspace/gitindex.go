package workspace

import (
	"github.com/task-x/task-x-runtime/internal/fsx"

	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
)

// maxIndexDigest bounds the index file gitIndexDigest reads (a larger one
// is stamped by its stat, as before).
const maxIndexDigest = 64 << 20

// gitIndexDigest returns a digest of what git status reads from the index
// file at path (.git/index): every entry's path, mode, object name and
// flags, without the stat data git caches beside them (times, device,
// inode, owner, size). git rewrites the index to refresh that cache
// whenever it sees a file whose stat data changed (a touched file, a
// checkout back and forth), which changes nothing git status reports;
// a stamp by the file's own stat then sent every reopen and refresh after
// a plain `git status` in a terminal back to running git. ok is false for
// what this does not read (another signature or version, SHA-256 object
// names, a split index, a truncated file): the caller stamps the file by
// its stat instead.
func gitIndexDigest(path string, sha256Names bool) (digest string, ok bool) {
	if sha256Names {
		return "", false
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxIndexDigest {
		return "", false
	}
	data, err := fsx.ReadRegular(path, maxIndexDigest)
	if err != nil || len(data) < 12+20 || string(data[:4]) != "DIRC" {
		return "", false
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return "", false
	}
	n := binary.BigEndian.Uint32(data[8:12])
	body := data[:len(data)-20] // the trailing checksum
	// The fields go through a small buffer, hashed 32 KiB at a time: a
	// Write per field cost ~2 ms for GOROOT/src's 11 000 entries, on
	// every refresh.
	h := sha256.New()
	var scratch [32 << 10]byte
	w := append(scratch[:0], data[4:12]...)
	var prev []byte // v4: the previous entry's path
	at := 12
	const statLen, nameLen = 40, 20
	for range n {
		if at+statLen+nameLen+2 > len(body) {
			return "", false
		}
		e := body[at:]
		mode := e[24:28]
		flags := binary.BigEndian.Uint16(e[statLen+nameLen:])
		if len(w) > len(scratch)-4096 {
			h.Write(w)
			w = w[:0]
		}
		w = append(w, mode...)
		w = append(w, e[statLen:statLen+nameLen+2]...) // object name and flags
		at += statLen + nameLen + 2
		if flags&0x4000 != 0 { // extended flags (skip-worktree, intent-to-add)
			if version < 3 || at+2 > len(body) {
				return "", false
			}
			w = append(w, body[at:at+2]...)
			at += 2
		}
		var name []byte
		if version == 4 {
			strip, k, ok := gitVarint(body[at:])
			if !ok || strip > uint64(len(prev)) {
				return "", false
			}
			at += k
			end := bytes.IndexByte(body[at:], 0)
			if end < 0 {
				return "", false
			}
			name = append(prev[:len(prev)-int(strip):len(prev)-int(strip)], body[at:at+end]...)
			at += end + 1
			prev = name
		} else {
			end := bytes.IndexByte(body[at:], 0)
			if end < 0 {
				return "", false
			}
			name = body[at : at+end]
			// 1 to 8 NULs pad the entry to a multiple of 8 bytes.
			entry := statLen + nameLen + 2 + end
			if flags&0x4000 != 0 {
				entry += 2
			}
			at += end + (8 - entry%8)
		}
		w = append(w, name...)
		w = append(w, 0)
	}
	// Extensions. One whose signature starts with an upper-case letter is
	// optional (a cache: the tree, untracked files, fsmonitor, offsets);
	// any other is one git must understand or fail ("index file corrupt"),
	// and only the sparse index's directories ("sdir", entries read above)
	// is read here: a split index ("link") keeps entries in another file,
	// and an unknown one makes git fail, which a stamp of the file's stat
	// lets the next scan find out (QA).
	for at+8 <= len(body) {
		sig := string(body[at : at+4])
		size := int(binary.BigEndian.Uint32(body[at+4 : at+8]))
		if (sig[0] < 'A' || sig[0] > 'Z') && sig != "sdir" || size < 0 || at+8+size > len(body) {
			return "", false
		}
		at += 8 + size
	}
	if at != len(body) {
		return "", false
	}
	h.Write(w)
	return hex.EncodeToString(h.Sum(nil)[:16]), true
}

// indexDigests remembers the last digest of each index file by its stat
// (size, modification time, inode): a refresh whose index file did not
// change reads nothing (a digest costs ~2.5 ms for GOROOT/src's 1.2 MB
// index); git replaces the file when it writes it, so a new one has a new
// inode.
var indexDigests struct {
	sync.Mutex
	m map[string]cachedDigest
}

type cachedDigest struct {
	size, mtime int64
	ino         uint64
	digest      string
	ok          bool
}

// cachedIndexDigest is gitIndexDigest of the index of the git folder dir
// through indexDigests (the repository's config, for its object format,
// is read only when the index changed).
func cachedIndexDigest(dir string) (string, bool) {
	path := filepath.Join(dir, "index")
	fi, err := os.Stat(path)
	if err != nil {
		return "", false
	}
	id, idOK := idOf(fi)
	key := cachedDigest{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ino: id.ino}
	indexDigests.Lock()
	c, hit := indexDigests.m[path]
	indexDigests.Unlock()
	if hit && idOK && c.size == key.size && c.mtime == key.mtime && c.ino == key.ino {
		return c.digest, c.ok
	}
	key.digest, key.ok = gitIndexDigest(path, gitUsesSHA256(dir))
	if idOK {
		indexDigests.Lock()
		if indexDigests.m == nil || len(indexDigests.m) > 64 {
			indexDigests.m = map[string]cachedDigest{}
		}
		indexDigests.m[path] = key
		indexDigests.Unlock()
	}
	return key.digest, key.ok
}

// gitVarint reads git's offset varint (index format 4): each byte adds 7
// bits, and every continuation adds one before shifting.
func gitVarint(b []byte) (v uint64, n int, ok bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	c := b[0]
	v = uint64(c & 0x7f)
	n = 1
	for c&0x80 != 0 {
		if n >= len(b) || n > 9 {
			return 0, 0, false
		}
		c = b[n]
		n++
		v = ((v + 1) << 7) | uint64(c&0x7f)
	}
	return v, n, true
}

// gitUsesSHA256 reports whether the repository whose git folder is dir
// names objects by SHA-256 (extensions.objectformat in its config).
func gitUsesSHA256(dir string) bool {
	data, err := fsx.ReadRegular(filepath.Join(dir, "config"), 1<<20)
	return err != nil || bytes.Contains(bytes.ToLower(data), []byte("sha256"))
}

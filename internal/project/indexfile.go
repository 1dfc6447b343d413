package project

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/task-x/task-x-runtime/internal/binx"
	"github.com/task-x/task-x-runtime/internal/editlog"
	"github.com/task-x/task-x-runtime/internal/graph"
	"github.com/task-x/task-x-runtime/internal/retrieve"
	"github.com/task-x/task-x-runtime/internal/syntax"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// The saved index file (dataDir/index/<workspace id>/index.bin):
//
//	magic "task-x index\n", format version (uint32 LE), payload length
//	(uint64 LE), CRC-32C of the payload (uint32 LE), payload.
//
// The payload is the length of its main part (uint64 LE), the main part
// and the retrieval part. The main part is binx-encoded: the engine key,
// the root, the save time, one string table (every path, name, kind and
// ref), the indexed files' stamps (each with the length of its parse
// result), the binary and too-large files' stamps, the parse results one
// after the other, optionally the graph's edges (graph.Saved) and whether
// the retrieval part (retrieve.AppendSaved's bytes, the rest of the
// payload) is there. The file is mapped (mapIndex), and each part's
// pages are released once decoded (binx.Reader.Release); the stamps are
// decoded first, so the scan that revalidates them starts
// at once, while the parse results (in chunks, one per core), the graph
// and the retrieval part decode on other goroutines (loadSaved,
// decodeParts).
// Nothing in it is trusted before the checksum, the format version, the
// engine key and the root match; file entries are then trusted only after
// the workspace's stamp check (workspace.Options.Saved).
const (
	indexMagic = "task-x index\n"
	// 2: inode change time in the stamps; 3: the graph's edges; 4: the
	// main part's length, the retrieval part read on its own; 5: whether
	// the file is a symbolic link; 6: the stamps first, then the parse
	// results (each one's length with its stamp), then the graph.
	indexFormat   uint32 = 8
	headerLen            = len(indexMagic) + 4 + 8 + 4
	mainLenLen           = 8 // the payload's first field
	indexFileName        = "index.bin"
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func crc32Checksum(b []byte) uint32 { return crc32.Checksum(b, crcTable) }

// errForeign is the load error of a saved index made for another root,
// engine or format.
var errForeign = errors.New("made by another engine, format or root")

// IndexPath is where a project with a dataDir saves its index:
// dataDir/index/<workspace id>/index.bin (addendum §7).
func IndexPath(dataDir, root string) string {
	return filepath.Join(dataDir, "index", editlog.WorkspaceID(root), indexFileName)
}

// engineKey names everything a saved entry depends on besides the file:
// the file format, the extraction rules, whether files are parsed, and
// the build of the runtime (a rebuilt binary may extract differently
// without a version bump; it costs one cold open).
func engineKey(parse bool) string {
	build := ""
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			build = fmt.Sprintf("%d@%d", fi.Size(), fi.ModTime().UnixNano())
		}
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				build += " " + s.Value
			}
		}
	}
	return fmt.Sprintf("format %d; syntax %s; graph %s; parse %v; build %s", indexFormat, syntax.Version, graph.Version, parse, build)
}

// mappedIndex is the index file's bytes as mapIndex made them
// available (mapped on Linux, read elsewhere).
type mappedIndex struct {
	data []byte
	// drop releases the memory of the whole pages of p (a part of data)
	// that may still be read (the checksum pass: the decoders read them
	// again), done those of a part that is never read again (decoded);
	// both return how many leading bytes of p they released (up to the
	// end of its last whole page), and are nil when data is not mapped.
	drop, done func(p []byte) int
	unmap      func()
	released   atomic.Int64 // bytes done released (tests)
}

// savedIndex is a decoded index file.
type savedIndex struct {
	engine, root string
	savedAt      time.Time
	files        map[string]*workspace.File
	skipped      map[string]workspace.SkippedFile
	retrieval    []byte // retrieve.AppendSaved's bytes, nil when not saved
	// writeRetrieval, when set (a save), writes the retrieval part
	// (retrieve.Index.WriteSaved) instead of retrieval.
	writeRetrieval func(io.Writer) (int64, error)
	// rdone is closed when the retrieval bytes are decoded (rsaved or
	// rerr), nil before startRetrieval.
	rdone  chan struct{}
	rsaved *retrieve.Saved
	rerr   error
	// graph is the graph of exactly these files, nil when not saved; it is
	// used only when every file passed its stamp check.
	graph *graph.Saved
	// strings and bodyBytes are the sizes of the string table and of the
	// parse results (decoded, or of the last save), others how many of
	// the strings are not names (of the last save; 0 after a load): the
	// next encode sizes its table, map and buffer from them instead of
	// growing by doubling.
	strings, others, bodyBytes int
	// pwg counts the goroutines decoding the parse results and the graph
	// (decodeParts); perrs holds their failures (waitResults).
	pwg   *sync.WaitGroup
	perrs []error
	// release, when set, releases the pages of a part a decoder is done
	// with (mappedIndex.done; binx.Reader.SetRelease).
	release func([]byte) int
	// names interns the string table's refs (decodeResults).
	names *savedNames
	// git is the git state the files were saved under (nil: none; git
	// runs at the reopen, as on a cold open).
	git *workspace.SavedGit
}

// appendSavedGit appends g (nil: none): its stamp, git's answer and the
// other skipped paths, sorted.
func appendSavedGit(b []byte, g *workspace.SavedGit) []byte {
	b = binx.AppendBool(b, g != nil)
	if g == nil {
		return b
	}
	b = binx.AppendString(b, g.Stamp)
	b = binx.AppendString(b, g.Info.Branch)
	b = binx.AppendString(b, g.Info.Head)
	b = binx.AppendUint(b, uint64(max(g.Info.Dirty, 0)))
	b = binx.AppendUint(b, uint64(len(g.Others)))
	for _, p := range sortedKeys(g.Others) {
		b = binx.AppendString(b, p)
		b = binx.AppendUint(b, uint64(g.Others[p]))
	}
	return b
}

// readSavedGit reads what appendSavedGit wrote; a malformed entry fails r.
func readSavedGit(r *binx.Reader) *workspace.SavedGit {
	if !r.Bool() {
		return nil
	}
	g := &workspace.SavedGit{Stamp: r.String()}
	g.Info.Branch, g.Info.Head = r.String(), r.String()
	g.Info.Dirty = int(r.Max(1 << 31))
	n := r.Count(2)
	g.Others = make(map[string]uint8, n)
	for range n {
		p, reason := r.String(), r.Max(255)
		if r.Err() != nil {
			return nil
		}
		g.Others[p] = uint8(reason)
	}
	if r.Err() != nil || g.Stamp == "" || len(g.Others) != n {
		return nil
	}
	return g
}

// encodeIndex returns the file's bytes (with ix.retrieval as the
// retrieval part).
func encodeIndex(ix *savedIndex, paths []string) []byte {
	var payload bytes.Buffer
	encodeMain(ix, paths).writeTo(&payload)
	payload.Write(ix.retrieval)
	return append(indexHeader(uint64(payload.Len()), crc32Checksum(payload.Bytes())), payload.Bytes()...)
}

// indexHeader is the file's header for a payload of n bytes with the
// checksum crc.
func indexHeader(n uint64, crc uint32) []byte {
	header := make([]byte, 0, headerLen)
	header = append(header, indexMagic...)
	header = binary.LittleEndian.AppendUint32(header, indexFormat)
	header = binary.LittleEndian.AppendUint64(header, n)
	return binary.LittleEndian.AppendUint32(header, crc)
}

// mainPart is an encoded main part whose parse results are not held:
// encodeMain encodes each result once to learn its length and its
// strings (the string table and the stamps, which hold the lengths, come
// before the results in the file), and writeTo encodes them again as it
// writes them, a chunk at a time. A save of GOROOT/src thus holds the
// string table, the stamps and the graph's edges (~10 MB) instead of
// also ~12 MB of parse results.
type mainPart struct {
	ix                   *savedIndex
	paths                []string
	strs                 *saveStrings
	prefix, stamps, tail []byte
	bodyLen, tableLen    int
}

// size is the main part's length in the file.
func (m *mainPart) size() int {
	return len(m.prefix) + m.tableLen + len(m.stamps) + m.bodyLen + len(m.tail)
}

// bodyChunk is how many bytes of parse results writeTo encodes before
// writing them.
const bodyChunk = 256 << 10

// appendResult appends info's encoded parse result to b, its strings as
// their indexes in strs.
func appendResult(b []byte, info *syntax.FileInfo, strs *saveStrings) []byte {
	ref := func(b []byte, s string) []byte { return binx.AppendUint(b, strs.add(s)) }
	name := func(b []byte, n syntax.Name) []byte { return binx.AppendUint(b, strs.name(n)) }
	count := func(n int, isNil bool) {
		if isNil {
			b = binx.AppendUint(b, 0)
		} else {
			b = binx.AppendUint(b, uint64(n)+1)
		}
	}
	b = ref(b, info.Language)
	b = ref(b, info.Package)
	b = binx.AppendBool(b, info.TimedOut)
	b = binx.AppendBool(b, info.HasErrors)
	count(len(info.Symbols), info.Symbols == nil)
	for _, s := range info.Symbols {
		b = name(b, s.Name)
		b = ref(b, s.Kind.String())
		b = binx.AppendInt(b, int64(s.StartLine))
		b = binx.AppendInt(b, int64(s.EndLine-s.StartLine))
		b = binx.AppendInt(b, int64(s.StartByte))
		b = binx.AppendInt(b, int64(s.EndByte-s.StartByte))
		b = name(b, s.Container)
		b = binx.AppendBool(b, s.Exported)
	}
	count(len(info.Imports), info.Imports == nil)
	for _, im := range info.Imports {
		b = ref(b, im.Path)
		b = ref(b, im.Kind)
		b = binx.AppendInt(b, int64(im.Line))
		count(len(im.Names), im.Names == nil)
		for _, n := range im.Names {
			b = ref(b, n)
		}
	}
	count(len(info.Refs), info.Refs == nil)
	for _, r := range info.Refs {
		b = name(b, r)
	}
	return b
}

// encodeMain encodes the payload's main part (the main part's length and
// the string table, the stamps, the parse results, the graph), which
// writeTo writes; the retrieval part follows it (ix.retrieval, or what
// ix.writeRetrieval writes). ix.files must not change until it is written.
func encodeMain(ix *savedIndex, paths []string) *mainPart {
	n, others := ix.strings, ix.others
	if n == 0 {
		// The first save of the process has no past counts: the table is
		// sized from the name table (nearly every interned name is saved:
		// 72 916 of the mixed tree's 83 109 strings, the others 1.4 per
		// file) instead of growing from nothing, which allocated ~5x the
		// final list (~6 MB) in the seconds after a cold open.
		n, others = syntax.NameCount()+2*len(paths), 2*len(paths)
	}
	strs := newSaveStrings(n, others)
	// stamps: the files' stamps (what the scan needs), the skipped files
	// and the length of the parse results; tail: the graph and the
	// retrieval flag. The parse results are encoded into scratch only to
	// learn their lengths and add their strings, in the order the file
	// has them (the table is the same as if they were kept).
	stamps := make([]byte, 0, 80*len(paths)+64)
	var scratch, tail []byte
	ref := func(b []byte, s string) []byte { return binx.AppendUint(b, strs.add(s)) }
	bodyLen := 0
	stamps = binx.AppendUint(stamps, uint64(len(paths)))
	for _, p := range paths {
		f := ix.files[p]
		stamps = ref(stamps, f.Path)
		stamps = ref(stamps, f.Language)
		stamps = binx.AppendInt(stamps, f.Size)
		stamps = binx.AppendInt(stamps, f.ModTime.UnixNano())
		stamps = binx.AppendUint(stamps, f.Inode)
		stamps = binx.AppendInt(stamps, f.CTime)
		stamps = binx.AppendBool(stamps, f.Hashed)
		if f.Hashed {
			stamps = binary.LittleEndian.AppendUint64(stamps, f.Hash)
		}
		stamps = binx.AppendBool(stamps, f.Sum != 0)
		if f.Sum != 0 {
			stamps = binary.LittleEndian.AppendUint64(stamps, f.Sum)
		}
		stamps = binx.AppendBool(stamps, f.Exec)
		stamps = binx.AppendBool(stamps, f.Link)
		stamps = binx.AppendInt(stamps, int64(f.Symbols))
		stamps = ref(stamps, f.ParseErr)
		info, _ := f.Parsed.(*syntax.FileInfo)
		if info == nil {
			stamps = binx.AppendUint(stamps, 0) // no parse result
			continue
		}
		// The parse result's length (+1) goes to the stamps.
		scratch = appendResult(scratch[:0], info, strs)
		stamps = binx.AppendUint(stamps, uint64(len(scratch))+1)
		bodyLen += len(scratch)
	}
	skipped := sortedKeys(ix.skipped)
	stamps = binx.AppendUint(stamps, uint64(len(skipped)))
	for _, p := range skipped {
		e := ix.skipped[p]
		stamps = ref(stamps, p)
		stamps = binx.AppendBool(stamps, e.Binary)
		stamps = binx.AppendInt(stamps, e.Size)
		stamps = binx.AppendInt(stamps, e.ModTime.UnixNano())
		stamps = binx.AppendUint(stamps, e.Inode)
		stamps = binx.AppendInt(stamps, e.CTime)
	}
	stamps = binx.AppendUint(stamps, uint64(bodyLen))
	if g := ix.graph; g != nil {
		tail = make([]byte, 0, 8*g.Len()+64)
	}
	tail = binx.AppendBool(tail, ix.graph != nil)
	if g := ix.graph; g != nil {
		tail = binx.AppendUint(tail, uint64(g.Nodes))
		tail = binx.AppendUint(tail, uint64(g.Unresolved))
		tail = binx.AppendUint(tail, uint64(g.Len()))
		var last int32
		for i := range g.Len() {
			e := g.Edge(i)
			tail = binx.AppendUint(tail, uint64(e.From-last)) // edges are sorted by from
			last = e.From
			tail = binx.AppendUint(tail, uint64(e.To))
			tail = binx.AppendBool(tail, e.Kind == graph.KindImport)
			tail = binx.AppendUint(tail, uint64(len(e.Symbols)))
			for _, sym := range e.Symbols {
				tail = binx.AppendUint(tail, strs.name(sym))
			}
		}
	}
	tail = binx.AppendBool(tail, len(ix.retrieval) > 0 || ix.writeRetrieval != nil)

	ix.strings, ix.others, ix.bodyBytes = len(strs.list), strs.others(), bodyLen
	// The prefix is the main part's length, the engine, root and save
	// time; the string table follows it (written by writeTo, not held).
	prefix := make([]byte, mainLenLen, mainLenLen+len(ix.engine)+len(ix.root)+32)
	prefix = binx.AppendString(prefix, ix.engine)
	prefix = binx.AppendString(prefix, ix.root)
	prefix = binx.AppendInt(prefix, ix.savedAt.UnixNano())
	prefix = appendSavedGit(prefix, ix.git)
	table := binx.StringsLen(strs.list)
	binary.LittleEndian.PutUint64(prefix, uint64(len(prefix)-mainLenLen+table+len(stamps)+bodyLen+len(tail)))
	return &mainPart{ix: ix, paths: paths, strs: strs, prefix: prefix, stamps: stamps, tail: tail, bodyLen: bodyLen, tableLen: table}
}

// writeTo writes the main part to w: the prefix and stamps, the parse
// results encoded again a chunk at a time (every string is in the table
// already), then the tail. Each piece is dropped once written.
func (m *mainPart) writeTo(w io.Writer) error {
	if _, err := w.Write(m.prefix); err != nil {
		return err
	}
	m.prefix = nil
	chunk := make([]byte, 0, bodyChunk+bodyChunk/4)
	if err := binx.WriteStrings(w, m.strs.list, chunk); err != nil {
		return err
	}
	if _, err := w.Write(m.stamps); err != nil {
		return err
	}
	m.stamps = nil
	if err := m.writeBody(w, chunk); err != nil {
		return err
	}
	_, err := w.Write(m.tail)
	m.tail = nil
	return err
}

// writeBody writes the parse results (writeTo) through chunk, a scratch
// buffer.
func (m *mainPart) writeBody(w io.Writer, chunk []byte) error {
	chunk = chunk[:0]
	n := 0
	for _, p := range m.paths {
		info, _ := m.ix.files[p].Parsed.(*syntax.FileInfo)
		if info == nil {
			continue
		}
		chunk = appendResult(chunk, info, m.strs)
		if len(chunk) >= bodyChunk {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
			n += len(chunk)
			chunk = chunk[:0]
		}
	}
	if n+len(chunk) != m.bodyLen {
		// A parse result changed between the passes (ix.files must not):
		// the stamps' lengths would not match.
		return errors.New("index save: parse results changed while being written")
	}
	_, err := w.Write(chunk)
	return err
}

// decodeIndex checks and decodes a saved index file for root and engine.
// Any error means the file is not to be used at all.
func decodeIndex(data []byte, engine, root string) (*savedIndex, error) {
	head := data[:min(len(data), headerLen+mainLenLen)]
	n, mainLen, err := checkHeader(head, uint64(len(data)))
	if err != nil {
		return nil, err
	}
	rest := data[headerLen+mainLenLen:]
	if uint64(len(rest)) != n-mainLenLen {
		return nil, errors.New("truncated or padded")
	}
	ix, err := decodeParts(head, rest[:mainLen], rest[mainLen:], engine, root, nil, nil)
	if err == nil {
		err = ix.waitResults()
	}
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// checkHeader checks the file's header and the main part's length (head:
// the first headerLen+mainLenLen bytes or fewer) against the file's size,
// and returns the payload's length and the main part's.
func checkHeader(head []byte, size uint64) (n, mainLen uint64, err error) {
	if len(head) < headerLen || string(head[:len(indexMagic)]) != indexMagic {
		return 0, 0, errors.New("not an index file")
	}
	h := head[len(indexMagic):]
	if v := binary.LittleEndian.Uint32(h); v != indexFormat {
		return 0, 0, fmt.Errorf("%w: format %d", errForeign, v)
	}
	n = binary.LittleEndian.Uint64(h[4:])
	if n != size-uint64(headerLen) {
		return 0, 0, fmt.Errorf("truncated or padded: %d payload bytes, header says %d", size-uint64(headerLen), n)
	}
	if len(head) < headerLen+mainLenLen || n < mainLenLen {
		return 0, 0, errors.New("truncated: no main part")
	}
	mainLen = binary.LittleEndian.Uint64(head[headerLen:])
	if mainLen > n-mainLenLen {
		return 0, 0, fmt.Errorf("corrupt: main part of %d bytes in a payload of %d", mainLen, n)
	}
	return n, mainLen, nil
}

// decodeParts checks the payload's checksum and decodes the main part;
// head is the header and the main part's length, retr the retrieval
// part; m, when not nil, is the mapped file they are parts of: the
// checksum pass drops the pages behind it, and every decoder releases
// the pages it has decoded as it goes, so the file's pages are not in
// the process's RSS all at once. early, when set, is called with the index once its engine and
// root are known to match (loadSaved starts the retrieval part's decode
// there). The files' stamps and the skipped files are decoded when it
// returns; the parse results (File.Parsed) and the graph are decoded on
// other goroutines meanwhile: waitResults waits for them and says whether
// they decoded. A failure there means the index is not to be used at all
// (its records must not be: the scan may have taken them already).
func decodeParts(head, main, retr []byte, engine, root string, m *mappedIndex, early func(*savedIndex)) (*savedIndex, error) {
	var drop, done func([]byte) int
	if m != nil {
		drop, done = m.drop, m.done
	}
	crc := crc32.Update(0, crcTable, head[headerLen:])
	for _, part := range [][]byte{main, retr} {
		r := binx.NewReader(part) // only to release behind the pass
		r.SetRelease(drop)
		for rest := part; len(rest) > 0; {
			n := min(len(rest), binx.ReleaseStep)
			crc = crc32.Update(crc, crcTable, rest[:n])
			rest = rest[n:]
			r.Raw(n)
			r.Release(len(rest) == 0)
		}
	}
	if crc != binary.LittleEndian.Uint32(head[len(indexMagic)+12:]) {
		return nil, errors.New("checksum mismatch")
	}
	r := binx.NewReader(main)
	if done != nil {
		r.SetRelease(done)
	}
	ix := &savedIndex{engine: r.String(), root: r.String(), release: done}
	if r.Err() == nil && ix.engine != engine {
		return nil, fmt.Errorf("%w: engine %q", errForeign, ix.engine)
	}
	if r.Err() == nil && ix.root != root {
		return nil, fmt.Errorf("%w: root %q", errForeign, ix.root)
	}
	if len(retr) > 0 {
		ix.retrieval = retr // the tail's flag must agree (decodeTail)
	}
	if r.Err() == nil && early != nil && len(retr) > 0 {
		early(ix)
	}
	ix.savedAt = time.Unix(0, r.Int())
	ix.git = readSavedGit(r)
	strs := r.ReadStrings()
	ix.strings = strs.Len()
	ref := func() string { return r.Ref(strs) }
	// The stamps: one array of records (the map points into it) and each
	// one's parse result length (+1; 0 for none).
	nFiles := r.Count(8)
	recs := make([]workspace.File, nFiles)
	lens := make([]uint32, nFiles)
	ix.files = make(map[string]*workspace.File, nFiles)
	var total uint64
	for i := range recs {
		if r.Err() != nil {
			break
		}
		f := &recs[i]
		f.Path, f.Language = ref(), ref()
		f.Size, f.ModTime, f.Inode, f.CTime = r.Int(), time.Unix(0, r.Int()), r.Uint(), r.Int()
		if f.Hashed = r.Bool(); f.Hashed {
			f.Hash = r.Uint64LE()
		}
		if r.Bool() {
			f.Sum = r.Uint64LE()
		}
		f.Exec = r.Bool()
		f.Link = r.Bool()
		f.Symbols = r.Int32()
		f.ParseErr = ref()
		n := r.Max(math.MaxUint32)
		lens[i] = uint32(n)
		if n > 0 {
			total += n - 1
		}
		if r.Err() == nil {
			if _, dup := ix.files[f.Path]; dup || f.Path == "" || f.Size < 0 {
				r.Fail(errors.New("bad file entry"))
			}
		}
		ix.files[f.Path] = f
	}
	nSkipped := r.Count(5)
	ix.skipped = make(map[string]workspace.SkippedFile, nSkipped)
	for range nSkipped {
		p := ref()
		ix.skipped[p] = workspace.SkippedFile{Binary: r.Bool(), Size: r.Int(), ModTime: time.Unix(0, r.Int()), Inode: r.Uint(), CTime: r.Int()}
	}
	if n := r.Uint(); r.Err() == nil && (n != total || n > uint64(r.Len())) {
		r.Fail(errors.New("parse results' length"))
	}
	r.Release(true) // the string table and the stamps are decoded
	res := r.Raw(int(total))
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("corrupt: %w", err)
	}
	ix.bodyBytes = len(res)
	// The rest (the graph) is read by a reader of its own, which
	// releases only what it reads (not the parse results before it).
	tail := binx.NewReader(main[len(main)-r.Len():])
	ix.names = newSavedNames(strs)
	// The parse results in chunks of about equal bytes, one per core, and
	// the tail (graph) on goroutines of their own.
	k := min(runtime.GOMAXPROCS(0), max(1, len(res)>>16))
	ix.perrs = make([]error, k+1)
	ix.pwg = &sync.WaitGroup{}
	ix.pwg.Add(k + 1)
	i0, off := 0, 0
	for c := range k {
		i1, end := i0, off
		for i1 < nFiles && (c == k-1 || uint64(end-off) < total/uint64(k)) {
			if lens[i1] > 0 {
				end += int(lens[i1] - 1)
			}
			i1++
		}
		go ix.decodeResults(&ix.perrs[c], recs[i0:i1], lens[i0:i1], res[off:end], strs)
		i0, off = i1, end
	}
	go ix.decodeTail(&ix.perrs[k], tail, strs, len(retr) > 0)
	return ix, nil
}

// decodeResults decodes the parse results of recs (lens: their lengths
// +1, 0 for none) from res into their Parsed fields, and sets *errp to
// the first failure.
func (ix *savedIndex) decodeResults(errp *error, recs []workspace.File, lens []uint32, res []byte, strs *binx.Strings) {
	defer ix.pwg.Done()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true)) // res may be mapped (readSaved)
	defer func() {
		if p := recover(); p != nil { // never trusted: a decoder bug rebuilds too
			*errp = fmt.Errorf("decoder panic: %v", p)
		}
	}()
	r := binx.NewReader(res)
	if ix.release != nil {
		r.SetRelease(ix.release)
		defer r.Release(true)
	}
	ref := func() string { return r.Ref(strs) }
	names := ix.names
	// count reads n+1 (0 for a nil list), n bounded by the bytes left.
	count := func(minBytes int) (int, bool) {
		c := r.Uint()
		if c == 0 || r.Err() != nil {
			return 0, true
		}
		if c-1 > uint64(r.Len()/minBytes) {
			r.Fail(nil)
			return 0, true
		}
		return int(c - 1), false
	}
	// The records' FileInfos and symbols are windows of one array each
	// (sized by the stamps' counts: a record whose count was wrong gets
	// its own), and their refs windows of blocks: a few allocations a
	// chunk instead of three or four a file, on the fresh heap of a
	// reopen. A window's capacity ends with it.
	nInfos, nSyms := 0, 0
	for i := range recs {
		if lens[i] > 0 {
			nInfos++
			nSyms += max(recs[i].Symbols, 0)
		}
	}
	infos := make([]syntax.FileInfo, nInfos)
	syms := make([]syntax.Symbol, min(nSyms, r.Len()/8))
	var refs []syntax.Name
	const refBlock = 16 << 10
	for i := range recs {
		if lens[i] == 0 {
			continue
		}
		left := r.Len()
		info := &infos[0]
		infos = infos[1:]
		*info = syntax.FileInfo{Language: ref(), Package: ref(), TimedOut: r.Bool(), HasErrors: r.Bool()}
		if c, isNil := count(8); !isNil {
			switch {
			case c == 0:
				info.Symbols = []syntax.Symbol{}
			case c <= len(syms):
				info.Symbols, syms = syms[:c:c], syms[c:]
			default:
				info.Symbols = make([]syntax.Symbol, c)
			}
			for i := range info.Symbols {
				s := &info.Symbols[i]
				s.Name = names.read(r)
				kind, ok := syntax.ParseSymbolKind(ref())
				if !ok {
					r.Fail(errors.New("unknown symbol kind"))
				}
				s.Kind = kind
				s.StartLine, s.EndLine = span(r)
				s.StartByte, s.EndByte = span(r)
				s.Container = names.read(r)
				s.Exported = r.Bool()
			}
		}
		if c, isNil := count(4); !isNil {
			info.Imports = make([]syntax.Import, c)
			for i := range info.Imports {
				im := &info.Imports[i]
				im.Path, im.Kind, im.Line = ref(), ref(), r.Int32()
				if c, isNil := count(1); !isNil {
					im.Names = make([]string, c)
					for k := range im.Names {
						im.Names[k] = ref()
					}
				}
			}
		}
		if c, isNil := count(1); !isNil {
			switch {
			case c == 0:
				info.Refs = []syntax.Name{}
			case c <= len(refs):
				info.Refs, refs = refs[:c:c], refs[c:]
			case c >= refBlock/4:
				info.Refs = make([]syntax.Name, c)
			default:
				refs = make([]syntax.Name, min(refBlock, r.Len()))
				info.Refs, refs = refs[:c:c], refs[c:]
			}
			for i := range info.Refs {
				info.Refs[i] = names.read(r)
			}
		}
		if r.Err() == nil && left-r.Len() != int(lens[i]-1) {
			r.Fail(fmt.Errorf("parse result's length %d, want %d", left-r.Len(), lens[i]-1))
		}
		if err := r.Err(); err != nil {
			*errp = fmt.Errorf("corrupt: %s: %w", recs[i].Path, err)
			return
		}
		recs[i].Parsed = info
		r.Release(false)
	}
	if r.Len() != 0 {
		*errp = errors.New("corrupt: parse results' length")
	}
}

// decodeTail decodes the rest of the main part from r (the graph, the
// retrieval flag, which must say whether there is a retrieval part) into
// ix.graph and sets *errp to the first failure.
func (ix *savedIndex) decodeTail(errp *error, r *binx.Reader, strs *binx.Strings, hasRetr bool) {
	defer ix.pwg.Done()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			*errp = fmt.Errorf("decoder panic: %v", p)
		}
	}()
	if ix.release != nil {
		r.SetRelease(ix.release)
		defer r.Release(true)
	}
	if r.Bool() {
		nodes, unresolved := int(r.Max(math.MaxInt32)), int(r.Max(math.MaxInt32))
		nEdges := r.Count(4)
		// AddEdge checks each edge (Restore reports its first failure)
		// and copies the symbols: one buffer serves every edge.
		g := graph.NewSaved(nodes, unresolved, nEdges)
		var from uint64
		var syms []syntax.Name
		for range nEdges {
			if r.Err() != nil {
				break
			}
			from += r.Uint()
			to := int32(r.Max(math.MaxInt32))
			if from > math.MaxInt32 {
				r.Fail(errors.New("bad edge"))
				break
			}
			kind := graph.KindReference
			if r.Bool() {
				kind = graph.KindImport
			}
			syms = syms[:0]
			for range r.Count(1) {
				syms = append(syms, ix.names.read(r))
			}
			g.AddEdge(int32(from), to, kind, syms)
			r.Release(false)
		}
		ix.graph = g
	}
	if r.Bool() != hasRetr && r.Err() == nil {
		r.Fail(errors.New("retrieval part"))
	}
	if r.Err() == nil && r.Len() != 0 {
		r.Fail(errors.New("trailing bytes"))
	}
	if err := r.Err(); err != nil {
		ix.graph = nil
		*errp = fmt.Errorf("corrupt: %w", err)
	}
}

// waitDecoded returns once the parse results' and the graph's decoders
// are done (workspace.Saved.Decoded; waitResults says how they ended).
func (ix *savedIndex) waitDecoded() {
	if ix.pwg != nil {
		ix.pwg.Wait()
	}
}

// waitResults waits for the parse results and the graph (decodeParts)
// and returns the first failure: then nothing of ix may be used.
func (ix *savedIndex) waitResults() error {
	if ix.pwg == nil {
		return nil // made by a save, not decoded
	}
	ix.pwg.Wait()
	ix.names = nil
	return errors.Join(ix.perrs...)
}

// span reads a start and a length (int32 each) and returns start and
// start+length, failing r when the end leaves int32.
func span(r *binx.Reader) (int32, int32) {
	start := r.Int32()
	end := start + r.Int32()
	if end < math.MinInt32 || end > math.MaxInt32 {
		r.Fail(nil)
		return 0, 0
	}
	return int32(start), int32(end)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// startRetrieval starts decoding the retrieval part on another goroutine
// (retrieve.DecodeSaved needs no snapshot: it runs while the files are
// decoded and the workspace is scanned). No-op without a retrieval part or
// when started.
func (ix *savedIndex) startRetrieval() {
	if ix.retrieval == nil || ix.rdone != nil {
		return
	}
	ix.rdone = make(chan struct{})
	data, release := ix.retrieval, ix.release
	go func() {
		defer close(ix.rdone)
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true)) // data may be mapped (readSaved)
		defer func() {
			if r := recover(); r != nil { // never trusted: a decoder bug rebuilds too
				ix.rsaved, ix.rerr = nil, fmt.Errorf("decoder panic: %v", r)
			}
		}()
		ix.rsaved, ix.rerr = retrieve.DecodeSavedReleasing(data, release)
	}()
}

// retrievalSaved is the decoded retrieval part (waiting for the decode
// startRetrieval started, or decoding now); nil, nil without one.
func (ix *savedIndex) retrievalSaved() (*retrieve.Saved, error) {
	if ix.retrieval == nil {
		return nil, nil
	}
	ix.startRetrieval()
	<-ix.rdone
	return ix.rsaved, ix.rerr
}

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
	"runtime/debug"
	"slices"
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
// ref), the indexed files with their stamps and parse results, the binary
// and too-large files' stamps, optionally the graph's edges (graph.Saved)
// and whether the retrieval part (retrieve.AppendSaved's bytes, the rest
// of the payload) is there. The two parts are read into buffers of their
// own and decoded at the same time (loadSaved), the retrieval part on the
// other core while the files are decoded and revalidated.
// Nothing in it is trusted before the checksum, the format version, the
// engine key and the root match; file entries are then trusted only after
// the workspace's stamp check (workspace.Options.Saved).
const (
	indexMagic = "task-x index\n"
	// 2: inode change time in the stamps; 3: the graph's edges; 4: the
	// main part's length, the retrieval part read on its own.
	indexFormat   uint32 = 4
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
	// file records (decoded, or of the last save): the next encode sizes
	// its map and buffer from them instead of growing by doubling.
	strings, bodyBytes int
}

// encodeIndex returns the file's bytes (with ix.retrieval as the
// retrieval part).
func encodeIndex(ix *savedIndex, paths []string) []byte {
	prefix, body := encodeMain(ix, paths)
	crc := crc32.Update(crc32.Update(crc32.Update(0, crcTable, prefix), crcTable, body), crcTable, ix.retrieval)
	return bytes.Join([][]byte{indexHeader(uint64(len(prefix)+len(body)+len(ix.retrieval)), crc), prefix, body, ix.retrieval}, nil)
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

// encodeMain returns the payload's main part, in two pieces to be written
// in order (the main part's length and the string table, then the file
// records); the retrieval part follows it (ix.retrieval, or what
// ix.writeRetrieval writes).
func encodeMain(ix *savedIndex, paths []string) (prefix, body []byte) {
	var strs binx.StringIndex
	strs.Grow(ix.strings + ix.strings/16)
	body = make([]byte, 0, max(1<<20, ix.bodyBytes+ix.bodyBytes/16))
	ref := func(s string) { body = binx.AppendUint(body, strs.Add(s)) }
	count := func(n int, isNil bool) {
		if isNil {
			body = binx.AppendUint(body, 0)
		} else {
			body = binx.AppendUint(body, uint64(n)+1)
		}
	}
	body = binx.AppendUint(body, uint64(len(paths)))
	for _, p := range paths {
		f := ix.files[p]
		ref(f.Path)
		ref(f.Language)
		body = binx.AppendInt(body, f.Size)
		body = binx.AppendInt(body, f.ModTime.UnixNano())
		body = binx.AppendUint(body, f.Inode)
		body = binx.AppendInt(body, f.CTime)
		body = binx.AppendBool(body, f.Hashed)
		if f.Hashed {
			body = binary.LittleEndian.AppendUint64(body, f.Hash)
		}
		body = binx.AppendInt(body, int64(f.Symbols))
		ref(f.ParseErr)
		info, _ := f.Parsed.(*syntax.FileInfo)
		body = binx.AppendBool(body, info != nil)
		if info == nil {
			continue
		}
		ref(info.Language)
		ref(info.Package)
		body = binx.AppendBool(body, info.TimedOut)
		body = binx.AppendBool(body, info.HasErrors)
		count(len(info.Symbols), info.Symbols == nil)
		for _, s := range info.Symbols {
			ref(s.Name)
			ref(s.Kind.String())
			body = binx.AppendInt(body, int64(s.StartLine))
			body = binx.AppendInt(body, int64(s.EndLine-s.StartLine))
			body = binx.AppendInt(body, int64(s.StartByte))
			body = binx.AppendInt(body, int64(s.EndByte-s.StartByte))
			ref(s.Container)
			body = binx.AppendBool(body, s.Exported)
		}
		count(len(info.Imports), info.Imports == nil)
		for _, im := range info.Imports {
			ref(im.Path)
			ref(im.Kind)
			body = binx.AppendInt(body, int64(im.Line))
			count(len(im.Names), im.Names == nil)
			for _, n := range im.Names {
				ref(n)
			}
		}
		count(len(info.Refs), info.Refs == nil)
		for _, r := range info.Refs {
			ref(r)
		}
	}
	skipped := sortedKeys(ix.skipped)
	body = binx.AppendUint(body, uint64(len(skipped)))
	for _, p := range skipped {
		e := ix.skipped[p]
		ref(p)
		body = binx.AppendBool(body, e.Binary)
		body = binx.AppendInt(body, e.Size)
		body = binx.AppendInt(body, e.ModTime.UnixNano())
		body = binx.AppendUint(body, e.Inode)
		body = binx.AppendInt(body, e.CTime)
	}
	body = binx.AppendBool(body, ix.graph != nil)
	if g := ix.graph; g != nil {
		body = binx.AppendUint(body, uint64(g.Nodes))
		body = binx.AppendUint(body, uint64(g.Unresolved))
		body = binx.AppendUint(body, uint64(len(g.Edges)))
		var last int32
		for _, e := range g.Edges {
			body = binx.AppendUint(body, uint64(e.From-last)) // edges are sorted by from
			last = e.From
			body = binx.AppendUint(body, uint64(e.To))
			body = binx.AppendBool(body, e.Kind == graph.KindImport)
			body = binx.AppendUint(body, uint64(len(e.Symbols)))
			for _, sym := range e.Symbols {
				ref(sym)
			}
		}
	}
	body = binx.AppendBool(body, len(ix.retrieval) > 0 || ix.writeRetrieval != nil)

	// The payload is the main part's length, prefix and body (the main
	// part) and the retrieval bytes, written one after the other rather
	// than copied into one buffer (a save of GOROOT/src would hold three
	// copies of 25 MB); the retrieval part is streamed (WriteSaved).
	ix.strings, ix.bodyBytes = len(strs.List()), len(body)
	prefix = make([]byte, mainLenLen, mainLenLen+len(ix.engine)+len(ix.root)+32)
	prefix = binx.AppendString(prefix, ix.engine)
	prefix = binx.AppendString(prefix, ix.root)
	prefix = binx.AppendInt(prefix, ix.savedAt.UnixNano())
	prefix = binx.AppendStrings(prefix, strs.List())
	binary.LittleEndian.PutUint64(prefix, uint64(len(prefix)-mainLenLen+len(body)))
	return prefix, body
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
	return decodeParts(head, rest[:mainLen], rest[mainLen:], engine, root, nil)
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
// part. early, when set, is called with the index once its engine and
// root are known to match (loadSaved starts the retrieval part's decode
// there).
func decodeParts(head, main, retr []byte, engine, root string, early func(*savedIndex)) (*savedIndex, error) {
	crc := crc32.Update(0, crcTable, head[headerLen:])
	crc = crc32.Update(crc, crcTable, main)
	if crc32.Update(crc, crcTable, retr) != binary.LittleEndian.Uint32(head[len(indexMagic)+12:]) {
		return nil, errors.New("checksum mismatch")
	}
	payload := main
	r := binx.NewReader(payload)
	ix := &savedIndex{engine: r.String(), root: r.String()}
	if r.Err() == nil && ix.engine != engine {
		return nil, fmt.Errorf("%w: engine %q", errForeign, ix.engine)
	}
	if r.Err() == nil && ix.root != root {
		return nil, fmt.Errorf("%w: root %q", errForeign, ix.root)
	}
	if r.Err() == nil && early != nil && len(retr) > 0 {
		ix.retrieval = retr
		early(ix)
	}
	ix.savedAt = time.Unix(0, r.Int())
	strs := r.ReadStrings()
	ix.strings = strs.Len()
	bodyStart := r.Len()
	ref := func() string { return r.Ref(strs) }
	// count reads n+1 (0 for a nil list), bounded by the bytes left.
	count := func(minBytes int) (int, bool) {
		c := r.Count(1)
		if c == 0 {
			return 0, true
		}
		if c-1 > r.Len()/minBytes {
			r.Fail(nil)
			return 0, true
		}
		return c - 1, false
	}
	nFiles := r.Count(8)
	ix.files = make(map[string]*workspace.File, nFiles)
	for range nFiles {
		if r.Err() != nil {
			break
		}
		f := &workspace.File{Path: ref(), Language: ref(), Size: r.Int(), ModTime: time.Unix(0, r.Int()), Inode: r.Uint(), CTime: r.Int()}
		if f.Hashed = r.Bool(); f.Hashed {
			f.Hash = r.Uint64LE()
		}
		f.Symbols = r.Int32()
		f.ParseErr = ref()
		if r.Bool() {
			info := &syntax.FileInfo{Language: ref(), Package: ref(), TimedOut: r.Bool(), HasErrors: r.Bool()}
			if c, isNil := count(8); !isNil {
				info.Symbols = make([]syntax.Symbol, c)
				for i := range info.Symbols {
					s := &info.Symbols[i]
					s.Name = ref()
					kind, ok := syntax.ParseSymbolKind(ref())
					if !ok {
						r.Fail(errors.New("unknown symbol kind"))
					}
					s.Kind = kind
					s.StartLine, s.EndLine = span(r)
					s.StartByte, s.EndByte = span(r)
					s.Container = ref()
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
				info.Refs = make([]string, c)
				for i := range info.Refs {
					info.Refs[i] = ref()
				}
			}
			f.Parsed = info
		}
		if r.Err() == nil {
			if _, dup := ix.files[f.Path]; dup || f.Path == "" || f.Size < 0 {
				r.Fail(errors.New("bad file entry"))
			}
		}
		ix.files[f.Path] = f
	}
	ix.bodyBytes = bodyStart - r.Len()
	nSkipped := r.Count(5)
	ix.skipped = make(map[string]workspace.SkippedFile, nSkipped)
	for range nSkipped {
		p := ref()
		ix.skipped[p] = workspace.SkippedFile{Binary: r.Bool(), Size: r.Int(), ModTime: time.Unix(0, r.Int()), Inode: r.Uint(), CTime: r.Int()}
	}
	if r.Bool() {
		g := &graph.Saved{Nodes: int(r.Max(math.MaxInt32)), Unresolved: int(r.Max(math.MaxInt32))}
		nEdges := r.Count(4)
		g.Edges = make([]graph.SavedEdge, 0, nEdges)
		var from uint64
		for range nEdges {
			if r.Err() != nil {
				break
			}
			from += r.Uint()
			e := graph.SavedEdge{To: int32(r.Max(math.MaxInt32)), Kind: graph.KindReference}
			if from > math.MaxInt32 {
				r.Fail(errors.New("bad edge"))
				break
			}
			e.From = int32(from)
			if r.Bool() {
				e.Kind = graph.KindImport
			}
			if c := r.Count(1); c > 0 {
				e.Symbols = make([]string, c)
				for k := range e.Symbols {
					e.Symbols[k] = ref()
				}
			}
			g.Edges = append(g.Edges, e)
		}
		ix.graph = g
	}
	if hasRetrieval := r.Bool(); r.Err() == nil && hasRetrieval != (len(retr) > 0) {
		r.Fail(errors.New("retrieval part"))
	} else if hasRetrieval {
		ix.retrieval = retr
	} else {
		ix.retrieval = nil
	}
	if r.Err() == nil && r.Len() != 0 {
		r.Fail(errors.New("trailing bytes"))
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("corrupt: %w", err)
	}
	return ix, nil
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
	data := ix.retrieval
	go func() {
		defer close(ix.rdone)
		defer func() {
			if r := recover(); r != nil { // never trusted: a decoder bug rebuilds too
				ix.rsaved, ix.rerr = nil, fmt.Errorf("decoder panic: %v", r)
			}
		}()
		ix.rsaved, ix.rerr = retrieve.DecodeSaved(data)
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

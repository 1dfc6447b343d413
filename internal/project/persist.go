package project

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/task-x/task-x-runtime/internal/graph"
	"github.com/task-x/task-x-runtime/internal/retrieve"
	"github.com/task-x/task-x-runtime/internal/syntax"
	"github.com/task-x/task-x-runtime/internal/workspace"
)

// SaveDelay is how long after open the index is saved; UpdateSaveDelay
// how long after a later change (changes within it share one save: an
// agent editing files one after another writes the file at most once per
// UpdateSaveDelay, not once per edit).
const (
	SaveDelay       = 2 * time.Second
	UpdateSaveDelay = 10 * time.Second
)

// maxIndexFile bounds the saved index file read at open.
const maxIndexFile = 2 << 30

// testHookWrite, when set by tests, replaces the write of the temp file's
// bytes (a failing write: disk full).
var testHookWrite func(f *os.File, data []byte) error

// saver saves a project's index in the background: after open and after
// updates (SaveDelay, UpdateSaveDelay), and at Close.
type saver struct {
	path, engine string

	mu      sync.Mutex // guards the fields below
	timer   *time.Timer
	pending bool
	closed  bool

	writeMu sync.Mutex // serializes saves; guards last*
	// lastSnap and lastRetrieval describe what the file holds now (the
	// files of lastSnap, with or without a retrieval index), so a save
	// with nothing new writes nothing.
	lastSnap      *workspace.Snapshot
	lastRetrieval bool
	lastGraph     bool // lastSnap's graph is in the file
	// sizes of the last save or load (string table entries, those of them
	// not names, record and retrieval bytes), which the next save
	// allocates at once.
	strings, others, bodyBytes, retrievalBytes int
}

// loadSaved reads and checks the saved index of root, nil (after a log
// line saying why) when there is none to use. The file is mapped
// (readSaved); once the engine and root match, the retrieval part is
// decoded on another goroutine (savedIndex.startRetrieval), the files'
// stamps here, and their parse results and the graph on other goroutines
// while the scan revalidates the stamps (savedIndex.waitResults).
func loadSaved(path, engine, root string, protect bool, log *slog.Logger) (ix *savedIndex) {
	// Only a regular file is read: opening a FIFO planted there would
	// block until a writer came (O_NONBLOCK covers one swapped in after
	// the Lstat), and a device or a folder is no index either.
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
	}
	var f *os.File
	if err == nil {
		f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	}
	if err == nil {
		defer f.Close()
		if fi, err = f.Stat(); err == nil && !fi.Mode().IsRegular() {
			err = fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
		}
	}
	if err == nil {
		ix, err = readSaved(f, engine, root, protect)
	}
	if err != nil {
		log.Warn("saved index ignored; indexing from scratch", "path", path, "reason", err.Error())
		return nil
	}
	return ix
}

// readSaved reads and decodes the index file f (see loadSaved). The file
// is mapped (mapIndex), its pages released as the checksum pass and the
// decoders go through them, and unmapped once every decoder that reads it
// is done (the parse results, the graph, the retrieval part): they copy
// what they keep. protect (tests, Options.protectReleased) makes a
// released part unreadable instead.
func readSaved(f *os.File, engine, root string, protect bool) (*savedIndex, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxIndexFile {
		return nil, fmt.Errorf("%d bytes", fi.Size())
	}
	if fi.Size() < int64(headerLen+mainLenLen) {
		return nil, errors.New("not an index file")
	}
	m, err := mapIndex(f, fi.Size(), protect)
	if err != nil {
		return nil, err
	}
	unmap := m.unmap
	var started *savedIndex // the index whose retrieval decode started
	ix, err := decodeMapped(m, engine, root, &started)
	switch {
	case ix != nil:
		go func() {
			ix.pwg.Wait()
			if ix.rdone != nil {
				<-ix.rdone
			}
			unmap()
		}()
	case started != nil && started.rdone != nil:
		go func() {
			<-started.rdone
			unmap()
		}()
	default:
		unmap()
	}
	return ix, err
}

// decodeMapped checks and decodes the index file's bytes data (mapped:
// a fault reading them, should the file shrink, is an error like a
// decoder panic). *started is set to the index once the retrieval part's
// decode is started (on error too).
func decodeMapped(m *mappedIndex, engine, root string, started **savedIndex) (ix *savedIndex, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil { // never trusted: a decoder bug rebuilds too
			ix, err = nil, fmt.Errorf("decoder panic: %v", r)
		}
	}()
	data := m.data
	head := data[:headerLen+mainLenLen]
	// The file is replaced by rename, never written in place: its size
	// does not change while it is read.
	_, mainLen, err := checkHeader(head, uint64(len(data)))
	if err != nil {
		return nil, err
	}
	rest := data[headerLen+mainLenLen:]
	return decodeParts(head, rest[:mainLen], rest[mainLen:], engine, root, m, func(ix *savedIndex) {
		*started = ix
		ix.startRetrieval()
	})
}

// restore finishes an open from a saved index: the retrieval index is
// loaded from the saved one, with the files that changed while the
// runtime was down (not the saved entry) tokenized again, and the saver
// learns that the file is current when nothing changed.
func (p *Project) restore(saved *savedIndex, parsed int64, start time.Time) {
	snap := p.ws.Snapshot()
	// reused: files that are their saved record; kept: files with a new
	// stamp and the saved content, which took the saved parse result
	// (workspace: File.Sum). For the graph and the retrieval index both
	// are unchanged; the saved file needs writing again for the kept ones.
	reused, kept := 0, 0
	for _, rel := range snap.Files() {
		f, _ := snap.File(rel)
		switch old := saved.files[rel]; {
		case f == nil || old == nil:
		case old == f:
			reused++
		case keptContent(f, old):
			kept++
		}
	}
	same := reused == snap.Len() && reused == len(saved.files)
	sameContent := reused+kept == snap.Len() && snap.Len() == len(saved.files)
	restored, graphFilled := false, false
	var graphRestored <-chan bool // the restore's outcome, when one runs
	if sameContent && saved.graph != nil {
		// Every file is its saved record, so the saved edges are the ones
		// a build would make (go.mod files are indexed files too). They
		// are restored on the other core while the retrieval index loads
		// (a Graph call meanwhile waits); a graph that fails the checks is
		// built there instead, after its outcome is logged and sent.
		ok := make(chan bool, 1)
		graphRestored = ok
		sg := saved.graph
		p.graph.Fill(func() *graph.Graph {
			g, err := graph.Restore(snap, sg)
			if err != nil {
				p.log.Info("saved graph not used; building it", "reason", err.Error())
				ok <- false
				return graph.Build(snap)
			}
			ok <- true
			return g
		})
		graphFilled = true
	}
	if !sameContent && saved.graph != nil && snap.Len() == len(saved.files) {
		// The same paths with some files changed: the saved graph is
		// updated for them (graph.Update), on the other core while the
		// retrieval index loads; a change it does not update (paths,
		// languages, go.mod) builds it there instead.
		prev := map[string]*workspace.File{}
		samePaths := true
		for _, rel := range snap.Files() {
			f, _ := snap.File(rel)
			old, ok := saved.files[rel]
			if !ok {
				samePaths = false
				break
			}
			if old != f && !keptContent(f, old) {
				prev[rel] = old
			}
		}
		if samePaths {
			old := saved.graph
			p.graph.Fill(func() *graph.Graph {
				start := time.Now()
				g, err := graph.Update(snap, old, prev)
				if err != nil {
					p.log.Info("saved graph not updated; building it", "reason", err.Error())
					return graph.Build(snap)
				}
				p.log.Info("saved graph updated", "changed", len(prev), "elapsedMs", time.Since(start).Milliseconds())
				return g
			})
			graphFilled = true
		}
	}
	saved.graph = nil
	if saved.retrieval != nil {
		// The graph is built from the loaded records on the other core
		// meanwhile (graph.Cache shares the build with the front end's
		// first Graph call).
		if !graphFilled {
			go p.Graph()
		}
		unchanged := func(rel string) bool {
			f, _ := snap.File(rel)
			old := saved.files[rel]
			return f != nil && old != nil && (old == f || keptContent(f, old))
		}
		if same {
			unchanged = nil // every file is its saved record: no look-up per file
		}
		// Decoded meanwhile (startRetrieval in loadSaved).
		rs, err := saved.retrievalSaved()
		var ix *retrieve.Index
		if err == nil {
			// Touched files keep the saved name terms and name table.
			rs.Previous = func(rel string) *workspace.File { return saved.files[rel] }
			ix, err = rs.Load(snap, p.loadOptions(snap), unchanged)
		}
		saved.retrieval, saved.rsaved = nil, nil
		if err != nil {
			p.log.Info("saved retrieval index not used; rebuilding it", "reason", err.Error())
		} else {
			p.retrievalCache().Put(ix)
			restored = true
		}
	}
	graphOK := false
	if graphRestored != nil {
		graphOK = <-graphRestored
	}
	// The saved git state too: one that no longer holds (a commit, a
	// checkout) is saved again, so the next reopen need not run git.
	g := snap.SavedGit()
	sameGit := g != nil && saved.git != nil && g.Stamp == saved.git.Stamp && g.Info == saved.git.Info
	if same && restored && graphOK && sameGit && len(snap.SkippedFiles()) == len(saved.skipped) {
		p.saver.writeMu.Lock()
		p.saver.lastSnap, p.saver.lastRetrieval, p.saver.lastGraph = snap, true, true
		p.saver.writeMu.Unlock()
	}
	p.log.Info("saved index loaded", "files", snap.Len(), "reused", reused, "kept", kept, "parsed", parsed,
		"retrieval", restored, "graph", graphOK, "elapsedMs", time.Since(start).Milliseconds())
}

// keptContent reports whether f, a new entry of a file saved as old, has
// old's content and took its parse result (workspace's sameContent).
func keptContent(f, old *workspace.File) bool {
	fi, _ := f.Parsed.(*syntax.FileInfo)
	oi, _ := old.Parsed.(*syntax.FileInfo)
	return f.SameContent(old) && fi == oi && (fi != nil) == (f.Parsed != nil) && f.Symbols == old.Symbols && f.ParseErr == old.ParseErr
}

// saveSoon schedules a save of the index after an update (no-op without
// a dataDir).
func (p *Project) saveSoon() { p.saveAfter(UpdateSaveDelay) }

// saveAfter schedules a save in d unless one is pending.
func (p *Project) saveAfter(d time.Duration) {
	s := p.saver
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.pending {
		return
	}
	s.pending = true
	if s.timer == nil {
		s.timer = time.AfterFunc(d, p.scheduledSave)
	} else {
		s.timer.Reset(d)
	}
}

func (p *Project) scheduledSave() {
	p.saver.mu.Lock()
	if p.saver.closed {
		p.saver.mu.Unlock()
		return
	}
	p.saver.pending = false
	p.saver.mu.Unlock()
	// The heap limit moves to the steady share before the first save of
	// the built index, saved or not (memlimit.go): the GC that starts the
	// steady share drops the builds' garbage, so the save's transient (its
	// string table, stamps and buffers, ~5 MB on the mixed tree) sits on
	// the live heap and not on what the builds left (the session's peak
	// 64.4-65.5 against 65.5-68.1 MB with the relax after the save, at
	// steadyBase 8 MiB).
	if p.retrievalCache().Current() != nil {
		p.mem.relax()
	}
	if err := p.SaveIndex(); err != nil {
		p.log.Warn("saving the index", "err", err)
	}
}

// Close saves the index when it changed since the last save and stops
// the background saves. The project stays usable; later changes are not
// saved.
func (p *Project) Close() error {
	p.mem.close()
	s := p.saver
	if s == nil {
		return nil
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
	}
	s.mu.Unlock()
	return p.SaveIndex()
}

// SaveIndex writes the index of the current snapshot (with the retrieval
// index when it is built for the same files) to the data folder now,
// unless the file already holds it. The write is atomic (temp file,
// fsync, rename): a failed or concurrent save leaves the previous file or
// another complete one. Without a dataDir it does nothing.
func (p *Project) SaveIndex() error {
	s := p.saver
	if s == nil {
		return nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	snap := p.ws.Snapshot()
	var rix *retrieve.Index
	if cur := p.retrievalCache().Current(); cur != nil && cur.Snapshot().SameFiles(snap) {
		rix = cur
	}
	g := p.graph.Cached(snap)
	if s.lastSnap != nil && s.lastSnap.SameFiles(snap) && (s.lastRetrieval || rix == nil) && (s.lastGraph || g == nil) {
		return nil
	}
	start := time.Now()
	ix := &savedIndex{
		engine: s.engine, root: p.Root(), savedAt: start,
		files: make(map[string]*workspace.File, snap.Len()), skipped: snap.SkippedFiles(),
		strings: s.strings, others: s.others, bodyBytes: s.bodyBytes,
	}
	paths := snap.Files()
	for _, rel := range paths {
		f, _ := snap.File(rel)
		ix.files[rel] = f
	}
	if g != nil {
		ix.graph = g.Saved()
	}
	ix.git = snap.SavedGit()
	if rix != nil {
		ix.writeRetrieval = rix.WriteSaved
	}
	main := encodeMain(ix, paths)
	s.strings, s.others, s.bodyBytes = ix.strings, ix.others, ix.bodyBytes
	mainBytes := main.size()
	// The main part is written (its pieces dropped as they go) before the
	// retrieval part is streamed.
	size, err := writeAtomic(s.path, main.writeTo, ix.writeRetrieval)
	ix.files, ix.graph = nil, nil
	if err != nil {
		return err
	}
	s.retrievalBytes = int(size) - mainBytes - headerLen
	s.lastSnap, s.lastRetrieval, s.lastGraph = snap, rix != nil, g != nil
	p.log.Debug("index saved", "files", len(paths), "bytes", size, "retrievalBytes", s.retrievalBytes, "strings", s.strings,
		"elapsedMs", time.Since(start).Milliseconds())
	return nil
}

// writeAtomic writes an index file to path: its header, then what main
// and tail (when not nil) write, in order, as the payload (its
// length and checksum are computed as it is written and the header put
// in front at the end). It writes through a temp file in the same
// folder: write, fsync, rename, fsync of the folder. On any failure the
// temp file is removed and path is untouched. It returns the file's size.
func writeAtomic(path string, main func(io.Writer) error, tail func(io.Writer) (int64, error)) (size int64, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, err
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return 0, err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	pw := &payloadWriter{}
	if testHookWrite != nil {
		var buf bytes.Buffer
		pw.w = &buf
		err = pw.write(main, tail)
		if err == nil {
			data := append(indexHeader(pw.n, pw.crc), buf.Bytes()...)
			size = int64(len(data))
			err = testHookWrite(f, data)
		}
	} else {
		// The pieces written are chunks of ~256 KiB (mainPart, the
		// retrieval part's savedChunk) or tables written whole: a larger
		// buffer only adds to the save's transient, which sits on the
		// open's live heap in the seconds after it.
		w := bufio.NewWriterSize(f, 256<<10)
		pw.w = w
		if _, err = w.Write(make([]byte, headerLen)); err == nil {
			err = pw.write(main, tail)
		}
		if err == nil {
			err = w.Flush()
		}
		if err == nil {
			_, err = f.WriteAt(indexHeader(pw.n, pw.crc), 0)
			size = int64(headerLen) + int64(pw.n)
		}
	}
	if err != nil {
		return 0, err
	}
	if err = f.Sync(); err != nil {
		return 0, err
	}
	if err = f.Close(); err != nil {
		return 0, err
	}
	if err = os.Rename(tmp, path); err != nil {
		// Something not a file in the index's place (a folder, which
		// rename cannot replace) would fail every save for ever: the
		// index folder is ours, so it goes and the rename is retried.
		fi, serr := os.Lstat(path)
		if serr != nil || fi.Mode().IsRegular() || os.RemoveAll(path) != nil {
			return 0, err
		}
		if err = os.Rename(tmp, path); err != nil {
			return 0, err
		}
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return size, nil
}

// payloadWriter writes an index file's payload to w, counting its bytes
// and computing its checksum.
type payloadWriter struct {
	w   io.Writer
	n   uint64
	crc uint32
}

func (pw *payloadWriter) Write(p []byte) (int, error) {
	k, err := pw.w.Write(p)
	pw.n += uint64(k)
	pw.crc = crc32.Update(pw.crc, crcTable, p[:k])
	return k, err
}

// write writes what main and then what tail writes.
func (pw *payloadWriter) write(main func(io.Writer) error, tail func(io.Writer) (int64, error)) error {
	if err := main(pw); err != nil {
		return err
	}
	if tail != nil {
		if _, err := tail(pw); err != nil {
			return err
		}
	}
	return nil
}

// removeStaleTemps removes temp files a crashed save left in the index
// folder (older than a minute: a live runtime's save takes less).
func removeStaleTemps(path string) {
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := filepath.Base(path) + ".tmp-"
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Minute {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// Command heapclasses reads a Go heap dump (runtime/debug.WriteHeapDump,
// format "go1.7 heap dump"; TestMemoryProbe writes one with
// TASK_X_MEM_PROBE_DUMP=FILE after a GC) and prints, per object size
// class, the live objects, their bytes, the 8 KiB pages holding them and
// the bytes of those pages no live object uses: where the heap's free
// slots in used spans (runtime/metrics /memory/classes/heap/unused) are,
// classes of up to 8 KiB only (a larger object's span is its own). With
// -samples it prints the first bytes and pointer offsets of a few objects
// of each class, which tell what they are (a path string, a []string, a
// struct). It reads the dump up to its first record after the objects.
//
//	heapclasses [-top 25] [-samples] DUMP
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
)

// Record tags of the dump format (runtime/heapdump.go).
const (
	tagObject = 1
	tagType   = 3
	tagParams = 6
	tagItab   = 8
)

const pageBytes = 8192

type class struct {
	objects, bytes int
	pages          map[uint64]bool
	samples        []sample
}

type sample struct {
	data []byte
	ptrs []uint64
}

type reader struct{ r *bufio.Reader }

func (d *reader) uint() uint64 {
	v, err := binary.ReadUvarint(d.r)
	if err != nil {
		panic(err)
	}
	return v
}

func (d *reader) bytes() []byte {
	b := make([]byte, d.uint())
	if _, err := io.ReadFull(d.r, b); err != nil {
		panic(err)
	}
	return b
}

func (d *reader) bool() {
	if _, err := d.r.ReadByte(); err != nil {
		panic(err)
	}
}

// fields reads a field list: (kind, offset) pairs up to kind 0.
func (d *reader) fields() []uint64 {
	var offs []uint64
	for d.uint() != 0 {
		offs = append(offs, d.uint())
	}
	return offs
}

func main() {
	top := flag.Int("top", 25, "classes to print, most unused bytes first")
	samples := flag.Bool("samples", false, "print a few objects of each class")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: heapclasses [-top N] [-samples] DUMP")
		os.Exit(2)
	}
	classes, err := read(flag.Arg(0), *samples)
	if err != nil {
		fmt.Fprintln(os.Stderr, "heapclasses:", err)
		os.Exit(1)
	}
	report(classes, *top, *samples)
}

func read(path string, keepSamples bool) (classes map[uint64]*class, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d := &reader{r: bufio.NewReaderSize(f, 1<<20)}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: truncated or not a heap dump: %v", path, p)
		}
	}()
	hdr := make([]byte, len("go1.7 heap dump\n"))
	if _, err := io.ReadFull(d.r, hdr); err != nil || string(hdr) != "go1.7 heap dump\n" {
		return nil, errors.New(path + ": not a go1.7 heap dump")
	}
	classes = map[uint64]*class{}
	for {
		switch d.uint() {
		case tagParams: // big-endian, pointer size, heap start and end, GOARCH, version, CPUs
			d.bool()
			d.uint()
			d.uint()
			d.uint()
			d.bytes()
			d.bytes()
			d.uint()
		case tagType: // address, size, name, indirect
			d.uint()
			d.uint()
			d.bytes()
			d.bool()
		case tagItab: // address, type
			d.uint()
			d.uint()
		case tagObject: // address, contents, pointer fields
			addr := d.uint()
			data := d.bytes()
			ptrs := d.fields()
			c := classes[uint64(len(data))]
			if c == nil {
				c = &class{pages: map[uint64]bool{}}
				classes[uint64(len(data))] = c
			}
			c.objects++
			c.bytes += len(data)
			c.pages[addr/pageBytes] = true
			if keepSamples && len(c.samples) < 3 && c.objects%97 == 1 {
				c.samples = append(c.samples, sample{data: data[:min(64, len(data))], ptrs: ptrs[:min(8, len(ptrs))]})
			}
		default: // the goroutines and the rest follow the objects
			return classes, nil
		}
	}
}

func report(classes map[uint64]*class, top int, samples bool) {
	type row struct {
		size   uint64
		c      *class
		unused int
	}
	var rows []row
	live, unused := 0, 0
	for size, c := range classes {
		u := 0
		if size <= pageBytes {
			u = len(c.pages)*pageBytes - c.bytes
		}
		live += c.bytes
		unused += u
		rows = append(rows, row{size, c, u})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].unused > rows[j].unused })
	fmt.Printf("live objects %d bytes; unused bytes in the pages of classes up to %d bytes: %d\n", live, pageBytes, unused)
	for _, r := range rows[:min(top, len(rows))] {
		fmt.Printf("size %6d: %7d objects, %9d bytes in %5d pages (%3.0f%% used), %8d unused\n",
			r.size, r.c.objects, r.c.bytes, len(r.c.pages), 100*float64(r.c.bytes)/float64(max(1, len(r.c.pages))*pageBytes), r.unused)
		if samples {
			for _, s := range r.c.samples {
				fmt.Printf("      pointers at %v: %q\n", s.ptrs, s.data)
			}
		}
	}
}

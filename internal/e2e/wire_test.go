package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
)

// The wire goldens hold the runtime byte-compatible with what it sent when
// they were recorded: testdata/wire.golden.json gives, for every kind of
// message the runtime sends in this suite (a result or error per method, a
// notification's params, a runtime→client request's params) and for every
// agent/event and chat/event type, the names of the members of each object
// in their wire order and the JSON kinds each member took. Every message the
// suite reads is checked against it: a renamed, reordered or retyped member,
// or a message kind never seen before, fails the test that read it. Values
// themselves (paths, times, ids) are the tests' business.
//
// Rewrite the goldens after an intended wire change with
//
//	go test ./internal/e2e -args -wire-update
//
// which merges this run's shapes into the file (a member order this run
// contradicts takes this run's order); delete the file first to rebuild it
// from scratch, and run the whole suite so that every message kind is seen.
var wireUpdate = flag.Bool("wire-update", false, "merge the shapes of this run's messages into testdata/wire.golden.json")

const wireGoldenPath = "testdata/wire.golden.json"

// maxWireCheck is the longest line checked: the few replies near the 32 MiB
// cap (edits/pending of huge files) would take the checker minutes of CPU
// under -race on a busy machine, and their shapes are those of the small
// replies of the same methods.
const maxWireCheck = 4 << 20

// shape is what the goldens record of one JSON value position.
type shape struct {
	// Kinds is the sorted set of JSON kinds seen here: array, boolean, null,
	// number, object, string.
	Kinds []string `json:"kinds"`
	// Keys is the union of the members of the objects seen here, merged in
	// wire order.
	Keys []string `json:"keys,omitempty"`
	// Orders are the distinct member sequences seen here. A message's
	// members must keep the order of one of them, for the members they
	// share.
	Orders [][]string `json:"orders,omitempty"`
	// Fields is the shape of each member.
	Fields map[string]*shape `json:"fields,omitempty"`
	// Items is the shape of an array's elements.
	Items *shape `json:"items,omitempty"`
	// Variants holds objects with a string "type" member by that type
	// (events, content parts), each with its own members.
	Variants map[string]*shape `json:"variants,omitempty"`
	// Opaque marks a value whose members are data, not protocol (a tool's
	// input or result, a provider's capabilities): only its kind is kept.
	Opaque bool `json:"opaque,omitempty"`

	// fresh holds the Orders this run saw (joined by ","): an order this
	// run contradicts is dropped only when no message of this run had it.
	fresh map[string]bool
}

// opaquePaths are member paths (from a message kind's root, "." separated,
// "[]" for array elements, "{type}" for a variant) whose inside is not
// protocol vocabulary: tool inputs and results, MCP and hook configuration
// echoed back, and maps keyed by data.
func opaque(path string) bool {
	for _, suffix := range []string{
		".input", ".result", ".capabilities", ".commands", ".answers", ".env", ".headers",
		".hooks", ".workspaceHooks", ".arguments", ".data", ".details", ".inputSchema",
	} {
		if strings.HasSuffix(path, suffix) {
			return true
		}
	}
	return false
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	default:
		return "object"
	}
}

// orderedObject is a JSON object decoded with its member order.
type orderedObject struct {
	keys []string
	vals map[string]any
}

// decodeOrdered decodes JSON keeping object member order.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &orderedObject{vals: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.keys = append(o.keys, k)
				o.vals[k] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return a, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return tok, nil
	}
}

func addKind(s *shape, k string) {
	if !slices.Contains(s.Kinds, k) {
		s.Kinds = append(s.Kinds, k)
		sort.Strings(s.Kinds)
	}
}

// mergeOrder adds the keys of seq to order, each new key right after the
// key before it in seq; it reports whether seq already agreed with order.
func mergeOrder(order, seq []string) ([]string, bool) {
	agree := inOrder(order, seq)
	if !agree {
		// This run's order wins: rebuild from seq, then the keys it lacks.
		out := slices.Clone(seq)
		for _, k := range order {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
		return out, false
	}
	for i, k := range seq {
		if slices.Contains(order, k) {
			continue
		}
		at := 0
		if i > 0 {
			at = slices.Index(order, seq[i-1]) + 1
		}
		order = slices.Insert(order, at, k)
	}
	return order, true
}

// conflict names two members that a and b hold in opposite orders, or
// returns "".
func conflict(a, b []string) string {
	for i, x := range b {
		for _, y := range b[i+1:] {
			ix, iy := slices.Index(a, x), slices.Index(a, y)
			if ix >= 0 && iy >= 0 && iy < ix {
				return fmt.Sprintf("%s before %s", y, x)
			}
		}
	}
	return ""
}

// inOrder reports whether the keys of seq that order knows come in order's order.
func inOrder(order, seq []string) bool {
	last := -1
	for _, k := range seq {
		i := slices.Index(order, k)
		if i < 0 {
			continue
		}
		if i < last {
			return false
		}
		last = i
	}
	return true
}

// record merges value v at path into s.
func record(s *shape, path string, v any) {
	k := kindOf(v)
	addKind(s, k)
	if opaque(path) {
		s.Opaque = true
		return
	}
	switch t := v.(type) {
	case []any:
		if s.Items == nil && len(t) > 0 {
			s.Items = &shape{}
		}
		for _, e := range t {
			record(s.Items, path+"[]", e)
		}
	case *orderedObject:
		if typ, ok := t.vals["type"].(string); ok {
			if s.Variants == nil {
				s.Variants = map[string]*shape{}
			}
			vs := s.Variants[typ]
			if vs == nil {
				vs = &shape{}
				s.Variants[typ] = vs
			}
			addKind(vs, "object")
			recordObject(vs, path+"{"+typ+"}", t)
			return
		}
		recordObject(s, path, t)
	}
}

func recordObject(s *shape, path string, o *orderedObject) {
	s.Keys, _ = mergeOrder(s.Keys, o.keys)
	// This run's order wins over a recorded one it contradicts (two
	// orders this run saw both stay: two producers of one shape).
	if s.fresh == nil {
		s.fresh = map[string]bool{}
	}
	s.fresh[strings.Join(o.keys, ",")] = true
	s.Orders = slices.DeleteFunc(s.Orders, func(seq []string) bool {
		return !s.fresh[strings.Join(seq, ",")] && conflict(seq, o.keys) != ""
	})
	if !slices.ContainsFunc(s.Orders, func(seq []string) bool { return slices.Equal(seq, o.keys) }) {
		s.Orders = append(s.Orders, slices.Clone(o.keys))
		sort.Slice(s.Orders, func(i, j int) bool { return strings.Join(s.Orders[i], ",") < strings.Join(s.Orders[j], ",") })
	}
	if s.Fields == nil {
		s.Fields = map[string]*shape{}
	}
	for _, k := range o.keys {
		f := s.Fields[k]
		if f == nil {
			f = &shape{}
			s.Fields[k] = f
		}
		record(f, path+"."+k, o.vals[k])
	}
}

// check reports how v at path departs from s.
func check(s *shape, path string, v any, errs *[]string) {
	k := kindOf(v)
	if !slices.Contains(s.Kinds, k) {
		*errs = append(*errs, fmt.Sprintf("%s: a %s; the goldens have %s", path, k, strings.Join(s.Kinds, "|")))
		return
	}
	if s.Opaque {
		return
	}
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			if s.Items == nil {
				*errs = append(*errs, fmt.Sprintf("%s[]: array elements the goldens never saw", path))
				return
			}
			check(s.Items, path+"[]", e, errs)
		}
	case *orderedObject:
		if typ, ok := t.vals["type"].(string); ok {
			vs := s.Variants[typ]
			if vs == nil {
				*errs = append(*errs, fmt.Sprintf("%s: type %q the goldens never saw", path, typ))
				return
			}
			checkObject(vs, path+"{"+typ+"}", t, errs)
			return
		}
		checkObject(s, path, t, errs)
	}
}

func checkObject(s *shape, path string, o *orderedObject, errs *[]string) {
	for _, k := range o.keys {
		if s.Fields[k] == nil {
			*errs = append(*errs, fmt.Sprintf("%s: member %q the goldens never saw (they have %s)", path, k, strings.Join(s.Keys, ",")))
			return
		}
	}
	// The order must agree with one recorded order (one shape can have two
	// producers, each with its order).
	var clash string
	for _, seq := range s.Orders {
		c := conflict(seq, o.keys)
		if c == "" {
			clash = ""
			break
		}
		if clash == "" {
			clash = fmt.Sprintf("the goldens have %s (%s)", strings.Join(seq, ","), c)
		}
	}
	if clash != "" {
		*errs = append(*errs, fmt.Sprintf("%s: members in the order %s; %s", path, strings.Join(o.keys, ","), clash))
		return
	}
	for _, k := range o.keys {
		check(s.Fields[k], path+"."+k, o.vals[k], errs)
	}
}

// wireGoldens is the suite-wide set of recorded shapes, by message kind.
type wireGoldens struct {
	mu     sync.Mutex
	shapes map[string]*shape
	loaded bool
	err    error
}

var goldens wireGoldens

func (g *wireGoldens) load() {
	if g.loaded {
		return
	}
	g.loaded = true
	g.shapes = map[string]*shape{}
	data, err := os.ReadFile(wireGoldenPath)
	if errors.Is(err, os.ErrNotExist) && *wireUpdate {
		return
	}
	if err == nil {
		err = json.Unmarshal(data, &g.shapes)
	}
	g.err = err
}

// observe checks (or, with -wire-update, records) the body v of one message
// of kind, and returns what departs from the goldens.
func (g *wireGoldens) observe(kind string, v any) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.load()
	if g.err != nil {
		return []string{fmt.Sprintf("reading %s: %v", wireGoldenPath, g.err)}
	}
	s := g.shapes[kind]
	if *wireUpdate {
		if s == nil {
			s = &shape{}
			g.shapes[kind] = s
		}
		record(s, "", v)
		return nil
	}
	if s == nil {
		return []string{fmt.Sprintf("%s: a message kind the goldens never saw", kind)}
	}
	var errs []string
	check(s, "", v, &errs)
	for i := range errs {
		errs[i] = kind + ": " + errs[i]
	}
	return errs
}

// save writes the goldens after a -wire-update run.
func (g *wireGoldens) save() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.loaded || g.err != nil {
		return g.err
	}
	b, err := json.MarshalIndent(g.shapes, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		return err
	}
	return os.WriteFile(wireGoldenPath, append(b, '\n'), 0o644)
}

// wireKind names the kind of the message in line, given the methods of the
// requests the client sent by id, and returns its body: a request's or a
// notification's params, a response's result or error object.
func wireKind(line []byte, methods func(id string) string) (kind string, body any, err error) {
	v, err := decodeOrdered(line)
	if err != nil {
		return "", nil, err
	}
	o, ok := v.(*orderedObject)
	if !ok {
		return "", nil, errors.New("not an object")
	}
	method, _ := o.vals["method"].(string)
	_, hasID := o.vals["id"]
	switch {
	case method != "" && hasID:
		return "request " + method, o.vals["params"], nil
	case method != "":
		return "notification " + method, o.vals["params"], nil
	}
	id, _ := json.Marshal(o.vals["id"])
	if m := methods(string(id)); m != "" {
		method = m
	} else {
		method = "?"
	}
	if e, ok := o.vals["error"]; ok {
		return "error " + method, e, nil
	}
	return "result " + method, o.vals["result"], nil
}

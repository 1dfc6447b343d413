// Package schema generates the published forms of the protocol from the Go
// types of internal/protocol: a JSON Schema (draft 2020-12) of every params,
// result, notification, event and error data type, and TypeScript
// declarations of the same types with a method map, so that a client can
// type its JSON-RPC calls. Descriptions come from the types' doc comments,
// which internal/protocol embeds (protocol.Source), so that a built runtime
// prints the same schema (task-x-runtime --print-schema).
//
// The committed copies are schema/protocol.schema.json and
// schema/protocol.d.ts at the repository root; TestCommittedFilesCurrent
// fails when they drift from the Go types. Regenerate them with
//
//	go test ./internal/protocol/schema -update
package schema

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// ID is the $id of the protocol schema.
const ID = "https://github.com/task-x/task-x-runtime/schema/protocol.schema.json"

// RegenerateCommand is the command that rewrites the committed files.
const RegenerateCommand = "go test ./internal/protocol/schema -update"

var (
	rawMessage = reflect.TypeFor[json.RawMessage]()
	idType     = reflect.TypeFor[protocol.ID]()
	timeType   = reflect.TypeFor[time.Time]()
	agentEvent = reflect.TypeFor[protocol.AgentEvent]()
	chatEvent  = reflect.TypeFor[protocol.ChatEvent]()
	pkgPath    = idType.PkgPath()
)

// ErrorDataTypes are the types of error.data, described with the rest.
var ErrorDataTypes = []reflect.Type{
	reflect.TypeFor[protocol.ErrorObject](),
	reflect.TypeFor[protocol.ProviderError](),
	reflect.TypeFor[protocol.ToolErrorData](),
	reflect.TypeFor[protocol.VersionMismatchData](),
	reflect.TypeFor[protocol.CancelledData](),
	reflect.TypeFor[protocol.InvalidConfigData](),
	reflect.TypeFor[protocol.MessageTooLargeData](),
}

// docs is what the generator reads from the protocol's source: the doc
// comment of each type and field, and the values of each string enum.
type docs struct {
	types  map[string]string
	fields map[string]map[string]string
	enums  map[string][]string
}

func readDocs(src fs.FS) (*docs, error) {
	d := &docs{types: map[string]string{}, fields: map[string]map[string]string{}, enums: map[string][]string{}}
	names, err := fs.Glob(src, "*.go")
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		data, err := fs.ReadFile(src, name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, name, data, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			switch gd.Tok {
			case token.TYPE:
				for _, spec := range gd.Specs {
					ts := spec.(*ast.TypeSpec)
					doc := ts.Doc
					if doc == nil && len(gd.Specs) == 1 {
						doc = gd.Doc
					}
					d.types[ts.Name.Name] = clean(doc.Text())
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					fd := map[string]string{}
					for _, fl := range st.Fields.List {
						for _, n := range fl.Names {
							fd[n.Name] = clean(fl.Doc.Text())
						}
					}
					d.fields[ts.Name.Name] = fd
				}
			case token.CONST:
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					id, ok := vs.Type.(*ast.Ident)
					if !ok || len(vs.Values) != len(vs.Names) {
						continue
					}
					for _, v := range vs.Values {
						lit, ok := v.(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						s, err := strconv.Unquote(lit.Value)
						if err != nil {
							return nil, err
						}
						d.enums[id.Name] = append(d.enums[id.Name], s)
					}
				}
			}
		}
	}
	return d, nil
}

// clean joins a doc comment's lines into paragraphs.
func clean(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	var paras []string
	for _, p := range strings.Split(s, "\n\n") {
		paras = append(paras, strings.Join(strings.Fields(p), " "))
	}
	return strings.Join(paras, "\n\n")
}

// model is the set of named types the protocol uses, found from the method
// table, the event lists and the error data types.
type model struct {
	docs  *docs
	named map[string]reflect.Type
	order []string
}

func newModel(src fs.FS) (*model, error) {
	d, err := readDocs(src)
	if err != nil {
		return nil, err
	}
	m := &model{docs: d, named: map[string]reflect.Type{}}
	for _, meth := range protocol.Methods {
		m.add(meth.Params)
		m.add(meth.Result)
	}
	m.add(agentEvent)
	m.add(chatEvent)
	for _, t := range ErrorDataTypes {
		m.add(t)
	}
	sort.Strings(m.order)
	return m, nil
}

// ours reports whether t is a named type of package protocol.
func ours(t reflect.Type) bool { return t.PkgPath() == pkgPath && t.Name() != "" }

func (m *model) add(t reflect.Type) {
	if t == nil {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessage || t == timeType {
		return
	}
	if ours(t) {
		if _, ok := m.named[t.Name()]; ok {
			return
		}
		m.named[t.Name()] = t
		m.order = append(m.order, t.Name())
	}
	switch {
	case protocol.Unions[t] != nil:
		for _, u := range protocol.Unions[t] {
			m.add(u)
		}
	case t == idType:
	case t.Kind() == reflect.Struct:
		for _, f := range fields(t) {
			m.add(f.typ)
		}
	case t.Kind() == reflect.Slice, t.Kind() == reflect.Array, t.Kind() == reflect.Map:
		m.add(t.Elem())
	}
}

type field struct {
	goName, name string
	typ          reflect.Type
	omitempty    bool
}

// fields lists the JSON members of struct t in order.
func fields(t reflect.Type) []field {
	var out []field
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		omit := slices.Contains(strings.Split(opts, ","), "omitempty") || slices.Contains(strings.Split(opts, ","), "omitzero")
		out = append(out, field{f.Name, name, f.Type, omit})
	}
	return out
}

// eventType is the "type" of an event struct, "" for other types.
func eventType(t reflect.Type) string {
	if t.Implements(agentEvent) || t.Implements(chatEvent) {
		return reflect.Zero(t).Interface().(interface{ EventType() string }).EventType()
	}
	return ""
}

func ref(name string) *jsonschema.Schema { return &jsonschema.Schema{Ref: "#/$defs/" + name} }

// typeSchema is the schema of a use of t (a $ref for a named type).
func (m *model) typeSchema(t reflect.Type) *jsonschema.Schema {
	switch {
	case t == rawMessage:
		return &jsonschema.Schema{}
	case t == timeType:
		return &jsonschema.Schema{Type: "string", Format: "date-time"}
	case t.Kind() == reflect.Pointer:
		return nullable(m.typeSchema(t.Elem()))
	case ours(t):
		return ref(t.Name())
	}
	return m.shape(t)
}

// shape is the schema of t's own structure.
func (m *model) shape(t reflect.Type) *jsonschema.Schema {
	switch t.Kind() {
	case reflect.Bool:
		return &jsonschema.Schema{Type: "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &jsonschema.Schema{Type: "integer"}
	case reflect.Float32, reflect.Float64:
		return &jsonschema.Schema{Type: "number"}
	case reflect.String:
		if vals := m.docs.enums[t.Name()]; ours(t) && len(vals) > 0 {
			s := &jsonschema.Schema{Type: "string"}
			for _, v := range vals {
				s.Enum = append(s.Enum, v)
			}
			return s
		}
		return &jsonschema.Schema{Type: "string"}
	case reflect.Slice, reflect.Array:
		return &jsonschema.Schema{Type: "array", Items: m.typeSchema(t.Elem())}
	case reflect.Map:
		return &jsonschema.Schema{Type: "object", AdditionalProperties: m.typeSchema(t.Elem())}
	case reflect.Interface:
		return &jsonschema.Schema{}
	case reflect.Struct:
		s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
		if typ := eventType(t); typ != "" {
			var c any = typ
			s.Properties["type"] = &jsonschema.Schema{Const: &c}
			s.PropertyOrder = append(s.PropertyOrder, "type")
			s.Required = append(s.Required, "type")
		}
		for _, f := range fields(t) {
			fs := m.typeSchema(f.typ)
			if f.omitempty && f.typ.Kind() == reflect.Pointer {
				fs = m.typeSchema(f.typ.Elem()) // left out when nil, never null
			}
			if doc := m.docs.fields[t.Name()][f.goName]; doc != "" {
				fs = withDescription(fs, doc)
			}
			s.Properties[f.name] = fs
			s.PropertyOrder = append(s.PropertyOrder, f.name)
			if !f.omitempty {
				s.Required = append(s.Required, f.name)
			}
		}
		return s
	}
	panic(fmt.Sprintf("schema: no JSON form for %v", t))
}

// withDescription adds a description, wrapping a $ref so that the
// description belongs to the use, not to the referenced type.
func withDescription(s *jsonschema.Schema, doc string) *jsonschema.Schema {
	if s.Description != "" {
		return s
	}
	c := *s
	c.Description = doc
	return &c
}

func nullable(s *jsonschema.Schema) *jsonschema.Schema {
	switch {
	case s.Type != "":
		c := *s
		c.Types = []string{"null", s.Type}
		c.Type = ""
		return &c
	default:
		if s.Ref == "" && s.Type == "" && len(s.Types) == 0 && len(s.AnyOf) == 0 {
			return s // any value, null included
		}
		return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "null"}, s}}
	}
}

// def is the $defs entry of the named type name.
func (m *model) def(name string) *jsonschema.Schema {
	t := m.named[name]
	var s *jsonschema.Schema
	switch {
	case t == idType:
		s = &jsonschema.Schema{Types: []string{"string", "integer"}}
	case protocol.Unions[t] != nil:
		s = &jsonschema.Schema{}
		for _, u := range protocol.Unions[t] {
			s.OneOf = append(s.OneOf, ref(u.Name()))
		}
	default:
		s = m.shape(t)
	}
	s.Description = m.docs.types[name]
	return s
}

// Build returns the JSON Schema of the protocol described by the Go types,
// with the descriptions in src (protocol.Source).
func Build(src fs.FS) (*jsonschema.Schema, error) {
	m, err := newModel(src)
	if err != nil {
		return nil, err
	}
	root := &jsonschema.Schema{
		Schema: "https://json-schema.org/draft/2020-12/schema",
		ID:     ID,
		Title:  "task-x runtime protocol",
		Description: fmt.Sprintf("The JSON-RPC 2.0 protocol between a client and task-x-runtime, version %d "+
			"(protocol.md and addendum.md). $defs holds every params, result, notification, event and error data type; "+
			"x-methods gives each method's direction, params and result. Generated from internal/protocol by `%s`; do not edit.",
			protocol.Version, RegenerateCommand),
		Defs: map[string]*jsonschema.Schema{},
	}
	for _, name := range m.order {
		root.Defs[name] = m.def(name)
	}
	methods := map[string]any{}
	for _, meth := range protocol.Methods {
		e := map[string]any{"direction": meth.Direction.String()}
		if meth.Params != nil {
			e["params"] = m.typeSchema(meth.Params)
		}
		switch {
		case meth.Result != nil:
			e["result"] = m.typeSchema(meth.Result)
		case meth.Direction == protocol.ClientRequest || meth.Direction == protocol.ServerRequest:
			e["result"] = &jsonschema.Schema{Type: "null"}
		}
		methods[meth.Name] = e
	}
	root.Extra = map[string]any{"x-protocolVersion": protocol.Version, "x-methods": methods}
	return root, nil
}

// JSON returns the schema as the committed file holds it.
func JSON(src fs.FS) ([]byte, error) {
	s, err := Build(src)
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// The committed files, relative to the repository root.
const (
	JSONFile = "schema/protocol.schema.json"
	TSFile   = "schema/protocol.d.ts"
)

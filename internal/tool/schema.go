package tool

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Constraint is what a struct tag cannot say about one input property:
// bounds, an enum, sizes. Zero fields add nothing.
type Constraint struct {
	Min, Max           *float64
	MinLength          *int
	MinItems, MaxItems *int
	Enum               []string
}

// Constraints are keyed by property path: "startLine", or through an array
// of objects "questions.options".
type Constraints map[string]Constraint

// N is a pointer to n, for Constraint fields.
func N[T int | float64](n T) *T { return &n }

// InputSchema derives a tool's input JSON Schema from its Go input struct T
// with jsonschema-go: one property per JSON field, in field order, described
// by the field's `jsonschema` tag; the fields without omitempty are
// required and no other property is allowed. A tool input is never null, so
// pointer and slice fields (pointers tell a missing field from a zero one
// when decoding) take the schema of their element. c adds the bounds and
// enums tags cannot give. It panics on a type jsonschema-go cannot describe:
// the input types are static, and every tool's schema is built in its tests.
func InputSchema[T any](c Constraints) json.RawMessage {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("tool: input schema: %v", err))
	}
	dropNull(s)
	for path, con := range c {
		p := property(s, path)
		if p == nil {
			panic(fmt.Sprintf("tool: input schema of %T: no property %q", *new(T), path))
		}
		p.Minimum, p.Maximum = con.Min, con.Max
		if con.MinLength != nil {
			p.MinLength = con.MinLength
		}
		p.MinItems, p.MaxItems = con.MinItems, con.MaxItems
		for _, e := range con.Enum {
			p.Enum = append(p.Enum, e)
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tool: input schema: %v", err))
	}
	return b
}

// property finds the schema of a property path ("a.b" goes through the
// items of array a).
func property(s *jsonschema.Schema, path string) *jsonschema.Schema {
	for _, name := range strings.Split(path, ".") {
		if s.Items != nil {
			s = s.Items
		}
		s = s.Properties[name]
		if s == nil {
			return nil
		}
	}
	return s
}

// dropNull turns jsonschema-go's ["null", T] of pointers and slices into T.
func dropNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		dropNull(p)
	}
	dropNull(s.Items)
	dropNull(s.AdditionalProperties)
}

package tool

import (
	"encoding/json"
	"reflect"
	"testing"
)

type sampleItem struct {
	Name  string   `json:"name" jsonschema:"The item's name."`
	Kinds []string `json:"kinds,omitempty" jsonschema:"Its kinds."`
}

type sampleInput struct {
	Path  *string      `json:"path" jsonschema:"A path."`
	Limit int          `json:"limit,omitempty" jsonschema:"At most this many."`
	Items []sampleItem `json:"items,omitempty" jsonschema:"The items."`
}

// TestInputSchemaFromStruct: properties in field order with their tag
// descriptions, required = the fields without omitempty, closed objects,
// no null for pointers and slices, and the constraints at their paths.
func TestInputSchemaFromStruct(t *testing.T) {
	got := InputSchema[sampleInput](Constraints{
		"limit":      {Min: N(1.0), Max: N(10.0)},
		"items":      {MinItems: N(1)},
		"items.name": {MinLength: N(1), Enum: []string{"a", "b"}},
	})
	const want = `{"type":"object","properties":{` +
		`"path":{"type":"string","description":"A path."},` +
		`"limit":{"type":"integer","description":"At most this many.","minimum":1,"maximum":10},` +
		`"items":{"type":"array","description":"The items.","minItems":1,"items":{"type":"object","properties":{` +
		`"name":{"type":"string","description":"The item's name.","enum":["a","b"],"minLength":1},` +
		`"kinds":{"type":"array","description":"Its kinds.","items":{"type":"string"}}},` +
		`"required":["name"],"additionalProperties":false}}},` +
		`"required":["path"],"additionalProperties":false}`
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal([]byte(want), &w)
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestInputSchemaUnknownPropertyPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("a constraint on a property the struct lacks did not panic")
		}
	}()
	InputSchema[sampleInput](Constraints{"nope": {Min: N(1.0)}})
}

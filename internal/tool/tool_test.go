package tool

import (
	"context"
	"encoding/json"
	"testing"
)

type named struct{ name, desc string }

func (n named) Spec() Spec { return Spec{Name: n.name, Description: n.desc, Permission: ClassRead} }
func (n named) Run(context.Context, *Env, json.RawMessage) (Result, error) {
	return Result{Content: n.desc}, nil
}

// A registry made With tools sees its base as it is at each call and its
// own tools win by name; changing it leaves the base alone.
func TestRegistryWith(t *testing.T) {
	base := NewRegistry(named{"a", "base a"}, named{"b", "base b"})
	over := base.With(named{"b", "own b"}, named{"c", "own c"})
	base.Add(named{"d", "joined later"})
	var got []string
	for _, s := range over.Specs() {
		got = append(got, s.Name+"="+s.Description)
	}
	if want := "a=base a b=own b c=own c d=joined later"; join(got) != want {
		t.Errorf("specs %s; want %s", join(got), want)
	}
	if tl, ok := over.Get("d"); !ok || tl.Spec().Description != "joined later" {
		t.Errorf("Get d: %v %v", tl, ok)
	}
	over.Remove("b", "a")
	if tl, _ := over.Get("b"); tl.Spec().Description != "base b" {
		t.Errorf("after Remove, b is %v", tl.Spec())
	}
	if _, ok := base.Get("c"); ok || len(base.Specs()) != 3 {
		t.Errorf("the base changed: %v", base.Specs())
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

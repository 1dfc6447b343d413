package sample

import (
	"fmt"
	str "strings"

	"example.com/mod/internal/util"
)

import "os"

// MaxItems bounds a list.
const MaxItems = 10

const (
	a = iota
	B
)

var defaultName = "x"

type Store struct {
	Name  string
	items []Item
	util.Base
}

type Item interface {
	ID() string
	fmt.Stringer
}

type Alias = Store

type Generic[T any] struct{ v T }

func New(name string) *Store {
	return &Store{Name: str.ToUpper(name)}
}

func (s *Store) Add(it Item) {
	s.items = append(s.items, it)
	fmt.Println(os.Args, util.Helper(it.ID()))
}

func (g Generic[T]) get() T { return g.v }

// Package skills owns the user's skills (addendum §8): finding SKILL.md
// files under the workspace's .task-x/skills/*/ and .claude/skills/*/ and
// the user's ~/.task-x/skills/*/, parsing their YAML front matter (name,
// description, triggers, paths, params), and resolving which skills apply
// to a prompt: a leading /name (with key=value or positional arguments), a
// trigger word, or a file pattern matching one of the task's paths, with
// {{param}} placeholders filled in.
//
// Source: ../shared/spec/addendum.md §8; protocol.md skills/list and
// skills/resolve. docs/skills.md records the decisions.
package skills

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	yaml "go.yaml.in/yaml/v3"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// Sources of a skill.
const (
	SourceWorkspace = "workspace"
	SourceUser      = "user"
)

// FileName is the file a skill folder holds.
const FileName = "SKILL.md"

// MaxFileBytes bounds a SKILL.md (larger files are reported and skipped).
const MaxFileBytes = 256 << 10

// Param is one declared {{param}}: its name, a description, and the value
// used when the caller gives none ("" when no default).
type Param = protocol.SkillParam

// Skill is one parsed SKILL.md: what skills/list shows of it
// (protocol.Skill; Path is the file, relative to the root for workspace
// skills and absolute for user skills), and Body, the text after the front
// matter, which only the prompt gets.
type Skill struct {
	protocol.Skill
	Body string `json:"-"`

	triggers []*regexp.Regexp
}

// LoadError is a SKILL.md that could not be used.
type LoadError = protocol.SkillError

// Set is the skills found, in precedence order, with one skill per name.
type Set struct {
	Skills []*Skill
	Errors []LoadError
}

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Load finds the skills of a workspace root (may be "") and a home folder
// (may be ""). On a name clash the first found wins: the workspace's
// .task-x/skills, then its .claude/skills, then ~/.task-x/skills; within a
// folder, skills are taken in folder-name order. Unreadable or malformed
// files are listed in Set.Errors and skipped.
func Load(root, home string) *Set {
	set := &Set{}
	seen := map[string]bool{}
	type place struct{ dir, source, base string }
	var places []place
	if root != "" {
		places = append(places, place{filepath.Join(root, ".task-x", "skills"), SourceWorkspace, root},
			place{filepath.Join(root, ".claude", "skills"), SourceWorkspace, root})
	}
	if home != "" {
		places = append(places, place{filepath.Join(home, ".task-x", "skills"), SourceUser, ""})
	}
	for _, pl := range places {
		entries, err := os.ReadDir(pl.dir)
		if err != nil {
			continue
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			file := filepath.Join(pl.dir, e.Name(), FileName)
			shown := file
			if pl.base != "" {
				if rel, err := filepath.Rel(pl.base, file); err == nil {
					shown = filepath.ToSlash(rel)
				}
			}
			fi, err := os.Stat(file)
			if err != nil || fi.IsDir() {
				continue
			}
			if fi.Size() > MaxFileBytes {
				set.Errors = append(set.Errors, LoadError{Path: shown, Message: fmt.Sprintf("larger than %d bytes", MaxFileBytes)})
				continue
			}
			raw, err := os.ReadFile(file)
			if err != nil {
				set.Errors = append(set.Errors, LoadError{Path: shown, Message: err.Error()})
				continue
			}
			sk, err := Parse(raw, e.Name())
			if err != nil {
				set.Errors = append(set.Errors, LoadError{Path: shown, Message: err.Error()})
				continue
			}
			sk.Source, sk.Path = pl.source, shown
			if seen[strings.ToLower(sk.Name)] {
				continue
			}
			seen[strings.ToLower(sk.Name)] = true
			set.Skills = append(set.Skills, sk)
		}
	}
	return set
}

// frontMatter is the YAML header. Triggers and paths take a list or one
// string; params take a list of names, a list of {name, description,
// default}, or a map of name to description (or to {description, default}).
type frontMatter struct {
	Name        string    `yaml:"name"`
	Description string    `yaml:"description"`
	Triggers    yaml.Node `yaml:"triggers"`
	Paths       yaml.Node `yaml:"paths"`
	Params      yaml.Node `yaml:"params"`
}

// Parse reads one SKILL.md: a front matter block between "---" lines, then
// the body. fallbackName (the folder's name) is used when name is absent.
// Errors: no front matter, invalid YAML, a bad name, a bad trigger, path
// glob or param.
func Parse(raw []byte, fallbackName string) (*Skill, error) {
	text := strings.ReplaceAll(string(bytes.TrimPrefix(raw, []byte("\uFEFF"))), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return nil, errors.New("no YAML front matter (the file must start with a --- line)")
	}
	head, body, ok := strings.Cut(text[4:], "\n---")
	if !ok {
		return nil, errors.New("the front matter has no closing --- line")
	}
	if i := strings.IndexByte(body, '\n'); i >= 0 {
		body = body[i+1:]
	} else {
		body = ""
	}
	var fm frontMatter
	if err := yaml.Unmarshal([]byte(head), &fm); err != nil {
		return nil, fmt.Errorf("front matter: %v", err)
	}
	sk := &Skill{Skill: protocol.Skill{Name: strings.TrimSpace(fm.Name), Description: strings.TrimSpace(fm.Description)}, Body: strings.TrimSpace(body)}
	if sk.Name == "" {
		sk.Name = fallbackName
	}
	if !validName.MatchString(sk.Name) {
		return nil, fmt.Errorf("name %q must be 1 to 64 letters, digits, '.', '_' or '-'", sk.Name)
	}
	var err error
	if sk.Triggers, err = stringList(&fm.Triggers, "triggers"); err != nil {
		return nil, err
	}
	if sk.Paths, err = stringList(&fm.Paths, "paths"); err != nil {
		return nil, err
	}
	for _, p := range sk.Paths {
		if !doublestar.ValidatePattern(p) {
			return nil, fmt.Errorf("paths: %q is not a valid glob", p)
		}
	}
	for _, t := range sk.Triggers {
		if strings.TrimSpace(t) == "" {
			return nil, errors.New("triggers: empty trigger")
		}
		sk.triggers = append(sk.triggers, wordRegexp(t))
	}
	if sk.Params, err = params(&fm.Params); err != nil {
		return nil, err
	}
	return sk, nil
}

// wordRegexp matches t as a whole word (or phrase), ignoring case. Edges
// that are not word characters need no boundary.
func wordRegexp(t string) *regexp.Regexp {
	t = strings.TrimSpace(t)
	pre, post := `\b`, `\b`
	if !isWord(t[0]) {
		pre = `(?:^|\s|\W)`
	}
	if !isWord(t[len(t)-1]) {
		post = `(?:$|\s|\W)`
	}
	return regexp.MustCompile(`(?i)` + pre + regexp.QuoteMeta(t) + post)
}

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func stringList(n *yaml.Node, field string) ([]string, error) {
	out := []string{}
	switch n.Kind {
	case 0:
		return out, nil
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return out, nil
		}
		for _, s := range strings.Split(n.Value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%s: want a list of strings", field)
			}
			out = append(out, c.Value)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: want a list of strings", field)
}

func params(n *yaml.Node) ([]Param, error) {
	out := []Param{}
	add := func(p Param) error {
		if !validParam.MatchString(p.Name) {
			return fmt.Errorf("params: %q is not a valid parameter name (letters, digits, '_', '-')", p.Name)
		}
		for _, q := range out {
			if q.Name == p.Name {
				return fmt.Errorf("params: %q is declared twice", p.Name)
			}
		}
		out = append(out, p)
		return nil
	}
	decodeOne := func(name string, v *yaml.Node) (Param, error) {
		p := Param{Name: name}
		switch v.Kind {
		case yaml.ScalarNode:
			if v.Tag != "!!null" {
				p.Description = v.Value
			}
		case yaml.MappingNode:
			var m struct {
				Name        string `yaml:"name"`
				Description string `yaml:"description"`
				Default     string `yaml:"default"`
			}
			if err := v.Decode(&m); err != nil {
				return p, fmt.Errorf("params: %v", err)
			}
			if p.Name == "" {
				p.Name = m.Name
			}
			p.Description, p.Default = m.Description, m.Default
		default:
			return p, errors.New("params: want a name, or {name, description, default}")
		}
		return p, nil
	}
	switch n.Kind {
	case 0:
		return out, nil
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return out, nil
		}
		for _, s := range strings.Split(n.Value, ",") {
			if err := add(Param{Name: strings.TrimSpace(s)}); err != nil {
				return nil, err
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			var p Param
			var err error
			if c.Kind == yaml.ScalarNode {
				p = Param{Name: c.Value}
			} else if p, err = decodeOne("", c); err != nil {
				return nil, err
			}
			if err := add(p); err != nil {
				return nil, err
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p, err := decodeOne(n.Content[i].Value, n.Content[i+1])
			if err != nil {
				return nil, err
			}
			if err := add(p); err != nil {
				return nil, err
			}
		}
	default:
		return nil, errors.New("params: want a list or a map")
	}
	return out, nil
}

var validParam = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)

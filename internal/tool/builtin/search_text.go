package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/sync/errgroup"

	"github.com/task-x/task-x-runtime/internal/tool"
)

// Limits of search_text.
const (
	searchDefaultResults = 100
	searchMaxResults     = 1000
	searchMaxLineBytes   = 300
	searchMaxFileBytes   = 8 << 20
)

type searchText struct{}

type searchTextInput struct {
	Query         string `json:"query" jsonschema:"Text to find; an RE2 regular expression when regex is true."`
	Regex         bool   `json:"regex,omitempty" jsonschema:"Treat query as an RE2 regular expression. Default false (literal)."`
	CaseSensitive bool   `json:"caseSensitive,omitempty" jsonschema:"Match case exactly. Default false."`
	Glob          string `json:"glob,omitempty" jsonschema:"Only search files matching this pattern, e.g. *.go or src/**/*.ts."`
	MaxResults    int    `json:"maxResults,omitempty" jsonschema:"Maximum matches to return. Default 100."`
}

// searchMatch is one matching line: path relative to the root, 1-based
// line, the line's text trimmed and cut to 300 bytes.
type searchMatch struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// searchTextData is the structured result of search_text.
type searchTextData struct {
	Matches   []searchMatch `json:"matches"`
	Truncated bool          `json:"truncated"`
}

const searchTextDescription = `
Search the text of the workspace's indexed files and return matching lines as "path:line: text".
query is a literal string by default; set regex for an RE2 regular expression (Go syntax: no lookaround or backreferences). Matching is case-insensitive unless caseSensitive is true, and works line by line.
glob limits the files searched: a pattern without "/" matches file names at any depth ("*.go"), one with "/" matches paths from the root ("src/**/*.ts").
Excluded files (.gitignore, dependency and build folders), binary files and files that look like secrets (.env, *.pem, *.key, ...) are never searched. Returns at most maxResults matches (default {{.Default}}, max {{.Max}}); lines are cut to {{.LineBytes}} characters.`

var searchTextSchema = tool.InputSchema[searchTextInput](tool.Constraints{
	"maxResults": {Min: tool.N(1.0), Max: tool.N(1000.0)},
	"query":      {MinLength: tool.N(1)},
})

func (*searchText) Spec() tool.Spec {
	return tool.Spec{
		Name: "search_text",
		Description: renderDescription(searchTextDescription, map[string]int{
			"Default": searchDefaultResults, "Max": searchMaxResults, "LineBytes": searchMaxLineBytes,
		}),
		InputSchema: searchTextSchema,
		Permission:  tool.ClassRead,
	}
}

// Run searches env.Index.Files() (never excluded files, nor secret-looking
// ones unless WithSecretApproved) in parallel, at most
// NumCPU files at a time, and returns the first maxResults matches in path
// order. Files that vanished, cannot be read or are binary are skipped.
func (*searchText) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in searchTextInput
	if err := decodeInput(input, &in); err != nil {
		return tool.Result{}, err
	}
	if in.Query == "" {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "query is empty")
	}
	if strings.ContainsAny(in.Query, "\n") {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "query cannot span lines; search for one line of it")
	}
	switch {
	case in.MaxResults < 0:
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "maxResults must be positive")
	case in.MaxResults == 0:
		in.MaxResults = searchDefaultResults
	case in.MaxResults > searchMaxResults:
		in.MaxResults = searchMaxResults
	}
	if in.Glob != "" && !doublestar.ValidatePattern(in.Glob) {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "invalid glob %q", in.Glob)
	}
	expr := in.Query
	if !in.Regex {
		expr = regexp.QuoteMeta(expr)
	}
	if !in.CaseSensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return tool.Result{}, tool.Errorf(tool.ErrInvalidInput, "invalid regular expression: %v", err)
	}
	if err := needRoot(env); err != nil {
		return tool.Result{}, err
	}
	if env.Index == nil {
		return tool.Result{}, tool.Errorf(tool.ErrNoWorkspace, "no workspace index is open")
	}
	root, err := openRoot(env)
	if err != nil {
		return tool.Result{}, err
	}
	defer root.Close()

	var files []string
	skippedSecrets := 0
	for _, f := range env.Index.Files() {
		if env.Index.Excluded(f, false) || (in.Glob != "" && !globMatch(in.Glob, f)) {
			continue
		}
		if IsSecretFile(env.Root, f) && !secretApproved(ctx) {
			skippedSecrets++
			continue
		}
		files = append(files, f)
	}

	// Files are searched in parallel but the answer is the first matches in
	// path order: once every file up to some index is done and those files
	// hold more than maxResults matches, the rest is not searched.
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		mu          sync.Mutex
		results     = make([][]searchMatch, len(files))
		done        = make([]bool, len(files))
		prefix      int
		prefixCount int
	)
	g, gctx := errgroup.WithContext(sctx)
	g.SetLimit(runtime.NumCPU())
	for i, f := range files {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if gctx.Err() != nil {
				return nil
			}
			ms := searchFile(root, f, re, in.MaxResults+1)
			mu.Lock()
			defer mu.Unlock()
			results[i], done[i] = ms, true
			for prefix < len(files) && done[prefix] {
				prefixCount += len(results[prefix])
				prefix++
			}
			if prefixCount > in.MaxResults {
				stop()
			}
			return nil
		})
	}
	g.Wait()
	if ctx.Err() != nil {
		return tool.Result{}, tool.Errorf(tool.ErrCancelled, "search cancelled")
	}

	d := searchTextData{Matches: []searchMatch{}}
	for i := 0; i < prefix; i++ {
		d.Matches = append(d.Matches, results[i]...)
	}
	if len(d.Matches) > in.MaxResults {
		d.Matches, d.Truncated = d.Matches[:in.MaxResults], true
	}
	var b strings.Builder
	for _, m := range d.Matches {
		fmt.Fprintf(&b, "%s:%d: %s\n", m.Path, m.Line, m.Text)
	}
	switch {
	case len(d.Matches) == 0:
		fmt.Fprintf(&b, "No matches for %q in %s.\n", in.Query, plural(len(files), "searched file"))
	case d.Truncated:
		fmt.Fprintf(&b, "[results cut at %d matches; narrow the query or the glob, or raise maxResults (max %d)]\n", in.MaxResults, searchMaxResults)
	}
	if skippedSecrets > 0 {
		fmt.Fprintf(&b, "[%s that look like secrets (.env, *.pem, ...) not searched]\n", plural(skippedSecrets, "file"))
	}
	return tool.Result{Content: b.String(), Data: d}, nil
}

// globMatch matches a root-relative path: a pattern without "/" matches the
// file name, any other the whole path.
func globMatch(glob, rel string) bool {
	if !strings.Contains(glob, "/") {
		m, _ := doublestar.Match(glob, path.Base(rel))
		return m
	}
	m, _ := doublestar.Match(glob, rel)
	return m
}

// searchFile returns up to limit matching lines of rel. A file that vanished,
// cannot be read (or leads outside the root), is too large or is binary has
// no matches.
func searchFile(root *os.Root, rel string, re *regexp.Regexp, limit int) []searchMatch {
	fi, err := root.Stat(osName(rel))
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > searchMaxFileBytes {
		return nil
	}
	data, err := root.ReadFile(osName(rel))
	if err != nil || isBinary(data) {
		return nil
	}
	text := strings.TrimPrefix(string(data), utf8BOM)
	var out []searchMatch
	for n, line := range splitLines(text) {
		line = strings.TrimSuffix(line, "\r")
		if !re.MatchString(line) {
			continue
		}
		t, cut := truncateRunes(strings.TrimSpace(line), searchMaxLineBytes)
		if cut {
			t += " …"
		}
		out = append(out, searchMatch{Path: rel, Line: n + 1, Text: t})
		if len(out) >= limit {
			break
		}
	}
	return out
}

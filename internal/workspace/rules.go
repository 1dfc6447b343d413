package workspace

import (
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/task-x/task-x-runtime/internal/workspace/ignore"
)

// builtinDirs are folder names excluded at any depth: version control
// folders, dependency folders, tool caches and virtual environments. They
// cannot be re-included by a "!" rule in an ignore file.
//
// vendor/ is deliberately absent: Go's vendor folder is source people read
// and edit, and ripgrep does not skip it either; a project that does not want
// it indexed lists it in .gitignore, .ignore or .task-xignore.
var builtinDirs = []string{
	".git", ".hg", ".svn", ".bzr", ".jj",
	"node_modules", "bower_components", ".pnpm-store", ".yarn",
	".venv", "venv", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox",
	".next", ".nuxt", ".svelte-kit", ".angular", ".parcel-cache", ".turbo",
	".gradle", ".idea", ".vs", ".terraform", ".dart_tool",
	".nyc_output", ".cache",
}

// outputDirs are build and test output folder names. Unlike builtinDirs
// they are excluded only when their parent folder holds a build manifest
// whose tools write them (package.json, Cargo.toml, pom.xml, build.gradle,
// pyproject.toml, setup.py, CMakeLists.txt, *.csproj, a Gemfile,
// composer.json...): a Go package such as go/build, internal/coverage or
// runtime/coverage in Go's own source tree keeps its files. coverage/ is
// where jest, nyc and c8 (package.json), pytest-cov (pyproject.toml),
// SimpleCov (Gemfile) and PHPUnit (composer.json) write their reports.
var outputDirs = []string{"target", "dist", "build", "out", "coverage"}

// builtinFiles are globs on base names of generated files excluded at any
// depth.
var builtinFiles = []string{"*.min.js", "*.min.css", "*.pyc", "*.class", ".DS_Store"}

// builtinFileRules are builtinFiles compiled (suffix and literal fast paths).
var builtinFileRules = ignore.Parse([]byte(strings.Join(builtinFiles, "\n")), "")

// outputManifests are the base names that make outputDirs siblings excluded.
var outputManifests = map[string]bool{
	"package.json": true, "Cargo.toml": true, "pom.xml": true, "build.gradle": true,
	"build.gradle.kts": true, "pyproject.toml": true, "setup.py": true, "CMakeLists.txt": true,
	"build.sbt": true, "mix.exs": true, "pubspec.yaml": true, "Gemfile": true, "composer.json": true,
}

// isOutputManifest reports whether name marks its folder as a build root
// whose outputDirs are excluded.
func isOutputManifest(name string) bool {
	return outputManifests[name] || strings.HasSuffix(name, ".csproj") || strings.HasSuffix(name, ".fsproj")
}

// ignoreFileNames are the per-folder ignore files, lowest precedence first.
var ignoreFileNames = []string{".gitignore", ".ignore", ".task-xignore"}

func isIgnoreFile(name string) bool {
	return name == ".gitignore" || name == ".ignore" || name == ".task-xignore"
}

// BuiltinExcludes lists the built-in excludes as reported in
// Summary.Excludes: folders with a trailing "/" (the output folders target/,
// dist/, build/, out/ and coverage/ among them, though those apply only next
// to a build manifest), then file globs.
func BuiltinExcludes() []string {
	out := make([]string, 0, len(builtinDirs)+len(outputDirs)+len(builtinFiles))
	for _, d := range builtinDirs {
		out = append(out, d+"/")
	}
	for _, d := range outputDirs {
		out = append(out, d+"/")
	}
	return append(out, builtinFiles...)
}

// rules is the complete exclude rule set of one snapshot. It is immutable
// once a snapshot holds it; writers copy it with clone.
type rules struct {
	globs         []string               // the request's exclude globs
	info          ignore.List            // .git/info/exclude
	perDir        map[string]ignore.List // folder → its .gitignore, .ignore, .task-xignore rules in that order
	outputParents map[string]bool        // folders holding a build manifest
	// private are the runtime's own folders inside the root
	// (Options.Private, root-relative): always excluded, not listed in
	// Summary.Excludes.
	private map[string]bool
}

var builtinDirSet = func() map[string]bool {
	m := make(map[string]bool, len(builtinDirs))
	for _, d := range builtinDirs {
		m[d] = true
	}
	return m
}()

func newRules(globs []string, private map[string]bool) (*rules, error) {
	for _, g := range globs {
		if g == "" || !doublestar.ValidatePattern(g) {
			return nil, fmt.Errorf("workspace: invalid exclude glob %q", g)
		}
	}
	return &rules{globs: globs, perDir: map[string]ignore.List{}, outputParents: map[string]bool{}, private: private}, nil
}

func (r *rules) clone() *rules {
	c := *r
	c.perDir = make(map[string]ignore.List, len(r.perDir))
	for k, v := range r.perDir {
		c.perDir[k] = v
	}
	c.outputParents = make(map[string]bool, len(r.outputParents))
	for k, v := range r.outputParents {
		c.outputParents[k] = v
	}
	return &c
}

// excludedSelf reports whether rel itself is excluded, without looking at
// its ancestors: the walker never descends into an excluded folder, so this
// is all it needs. Order: built-ins and request globs (absolute), then the
// ignore files from the deepest folder up (a deeper file overrides a
// shallower one; within a folder the last matching line wins), then
// .git/info/exclude.
func (r *rules) excludedSelf(rel string, isDir bool) bool {
	name := rel
	parent := ""
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		name, parent = rel[i+1:], rel[:i]
	}
	if isDir {
		if builtinDirSet[name] || r.private[rel] {
			return true
		}
		if r.outputParents[parent] {
			for _, d := range outputDirs {
				if name == d {
					return true
				}
			}
		}
	} else {
		if builtinFileRules.Match(name, false) == ignore.Ignore {
			return true
		}
	}
	for _, g := range r.globs {
		if ok, _ := doublestar.Match(g, rel); ok {
			return true
		}
		if !strings.Contains(g, "/") {
			if ok, _ := doublestar.Match(g, name); ok {
				return true
			}
		}
	}
	// Ignore files of each ancestor folder, deepest first.
	dir := parent
	for {
		if l, ok := r.perDir[dir]; ok {
			switch l.Match(rel, isDir) {
			case ignore.Ignore:
				return true
			case ignore.Include:
				return false
			}
		}
		if dir == "" {
			break
		}
		dir = path.Dir(dir)
		if dir == "." {
			dir = ""
		}
	}
	return r.info.Match(rel, isDir) == ignore.Ignore
}

// excluded reports whether rel or any of its ancestor folders is excluded
// (git's rule: a file in an excluded folder cannot be re-included).
func (r *rules) excluded(rel string, isDir bool) bool {
	for i := 0; i < len(rel); i++ {
		if rel[i] == '/' && r.excludedSelf(rel[:i], true) {
			return true
		}
	}
	return r.excludedSelf(rel, isDir)
}

package workspace

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/task-x/task-x-runtime/internal/gitx"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// Project is the detected project (addendum §2, summary.project).
type Project = protocol.Project

// LanguageCount is one entry of Project.Languages.
type LanguageCount = protocol.LanguageCount

// GitInfo is the repository state: Branch ("" when detached), Head (short
// commit id, "" before the first commit), Dirty (number of changed or
// untracked paths in `git status --porcelain --ignore-submodules=all`:
// the repository's own paths; a nested repository, submodule or gitlink,
// is never looked into, so its changes and a moved or staged gitlink are
// not counted).
type GitInfo = protocol.GitInfo

// manifestKinds maps a manifest base name to the kinds it implies.
var manifestKinds = map[string][]string{
	"go.mod": {"go"}, "go.work": {"go"}, "Cargo.toml": {"rust"}, "package.json": {"node"},
	"deno.json": {"deno"}, "pyproject.toml": {"python"}, "setup.py": {"python"},
	"requirements.txt": {"python"}, "Pipfile": {"python"}, "setup.cfg": {"python"},
	"pom.xml": {"maven", "java"}, "build.gradle": {"gradle", "java"}, "build.gradle.kts": {"gradle", "java"},
	"Gemfile": {"ruby"}, "composer.json": {"php"}, "CMakeLists.txt": {"cmake"},
	"Makefile": {"make"}, "makefile": {"make"}, "GNUmakefile": {"make"},
	"mix.exs": {"elixir"}, "pubspec.yaml": {"dart"}, "build.sbt": {"scala"}, "Package.swift": {"swift"},
}

// maxManifestDepth is the deepest folder (counted in "/" separators)
// searched for manifests.
const maxManifestDepth = 3

func manifestKindsOf(name string) []string {
	if k, ok := manifestKinds[name]; ok {
		return k
	}
	switch {
	case strings.HasSuffix(name, ".csproj"), strings.HasSuffix(name, ".fsproj"), strings.HasSuffix(name, ".sln"):
		return []string{"dotnet"}
	}
	return nil
}

// detectProject builds the project from the indexed paths (sorted), the
// skipped ones and the root's manifests. Git is filled in by the caller.
func detectProject(root string, paths []string, files map[string]*File, skipped map[string]skipEntry) Project {
	p := Project{Kinds: []string{}, Manifests: []string{}, Languages: []LanguageCount{}, Commands: map[string]string{}}
	type man struct {
		rel   string
		depth int
	}
	var mans []man
	langs := map[string]int{}
	for _, rel := range paths {
		if l := files[rel].Language; l != "" {
			langs[l]++
		}
		depth := strings.Count(rel, "/")
		if depth <= maxManifestDepth && manifestKindsOf(path.Base(rel)) != nil {
			mans = append(mans, man{rel, depth})
		}
	}
	sort.SliceStable(mans, func(i, j int) bool { return mans[i].depth < mans[j].depth })
	seenKind := map[string]bool{}
	for _, m := range mans {
		p.Manifests = append(p.Manifests, m.rel)
		for _, k := range manifestKindsOf(path.Base(m.rel)) {
			if !seenKind[k] {
				seenKind[k] = true
				p.Kinds = append(p.Kinds, k)
			}
		}
	}
	for l, n := range langs {
		p.Languages = append(p.Languages, LanguageCount{Language: l, Files: n})
	}
	sort.Slice(p.Languages, func(i, j int) bool {
		a, b := p.Languages[i], p.Languages[j]
		if a.Files != b.Files {
			return a.Files > b.Files
		}
		return a.Language < b.Language
	})
	// Lock files are often over the size limit: a seen binary or too-large
	// file counts as present too.
	has := func(rel string) bool {
		if _, ok := files[rel]; ok {
			return true
		}
		e, ok := skipped[rel]
		return ok && (e.reason == skipTooLarge || e.reason == skipBinary)
	}
	p.Name = projectName(root, has)
	p.Commands = projectCommands(root, "", has)
	if len(p.Commands) == 0 {
		// No root manifest with commands: use the shallowest folder that has one.
		for _, m := range mans {
			dir := path.Dir(m.rel)
			if dir == "." {
				continue
			}
			pre := func(rel string) bool { return has(dir + "/" + rel) }
			if c := projectCommands(filepath.Join(root, filepath.FromSlash(dir)), "cd "+dir+" && ", pre); len(c) > 0 {
				p.Commands = c
				break
			}
		}
	}
	return p
}

var majorVersion = regexp.MustCompile(`^v[0-9]+$`)

// projectName reads the name from the root manifests.
func projectName(root string, has func(string) bool) string {
	if has("go.mod") {
		if data, err := readSmall(filepath.Join(root, "go.mod")); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				f := strings.Fields(line)
				if len(f) >= 2 && f[0] == "module" {
					mod := strings.Trim(f[1], `"`)
					parts := strings.Split(mod, "/")
					name := parts[len(parts)-1]
					if majorVersion.MatchString(name) && len(parts) > 1 {
						name = parts[len(parts)-2]
					}
					if name != "" {
						return name
					}
				}
			}
		}
	}
	if has("Cargo.toml") {
		if n := tomlString(filepath.Join(root, "Cargo.toml"), "package", "name"); n != "" {
			return n
		}
	}
	if has("package.json") {
		if pkg, ok := readPackageJSON(filepath.Join(root, "package.json")); ok && pkg.Name != "" {
			return pkg.Name
		}
	}
	if has("pyproject.toml") {
		if n := tomlString(filepath.Join(root, "pyproject.toml"), "project", "name"); n != "" {
			return n
		}
		if n := tomlString(filepath.Join(root, "pyproject.toml"), "tool.poetry", "name"); n != "" {
			return n
		}
	}
	return filepath.Base(root)
}

type packageJSON struct {
	Name            string            `json:"name"`
	Scripts         map[string]string `json:"scripts"`
	Dependencies    map[string]string `json:"dependencies"`
	DevDependencies map[string]string `json:"devDependencies"`
}

func (p packageJSON) hasDep(name string) bool {
	_, a := p.Dependencies[name]
	_, b := p.DevDependencies[name]
	return a || b
}

// npmPlaceholder reports whether a script is the one `npm init` writes
// (echo "Error: no test specified" && exit 1): no check is known.
func npmPlaceholder(script string) bool {
	return strings.Contains(script, "Error: no test specified")
}

// dotnetProject reports whether dir holds a .sln, .csproj or .fsproj file.
func dotnetProject(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		n := e.Name()
		if !e.IsDir() && (strings.HasSuffix(n, ".sln") || strings.HasSuffix(n, ".csproj") || strings.HasSuffix(n, ".fsproj")) {
			return true
		}
	}
	return false
}

func readPackageJSON(abs string) (packageJSON, bool) {
	var pkg packageJSON
	data, err := readSmall(abs)
	if err != nil || json.Unmarshal(data, &pkg) != nil {
		return pkg, false
	}
	return pkg, true
}

// tomlString returns the string value of key in [section] of a TOML file,
// for simple `key = "value"` lines (enough for manifest names).
func tomlString(abs, section, key string) string {
	data, err := readSmall(abs)
	if err != nil {
		return ""
	}
	cur := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			cur = strings.TrimSpace(strings.Trim(line, "[]"))
			continue
		}
		if cur != section {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) != key {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
			if end := strings.IndexByte(v[1:], v[0]); end >= 0 {
				return v[1 : 1+end]
			}
		}
	}
	return ""
}

// fileContains reports whether the file at abs holds sub.
func fileContains(abs, sub string) bool {
	data, err := readSmall(abs)
	return err == nil && bytes.Contains(data, []byte(sub))
}

var makeTarget = regexp.MustCompile(`(?m)^([A-Za-z0-9_.-]+)\s*:([^=]|$)`)

// projectCommands returns the build/test/lint/run commands for the folder
// dir (absolute); has tells whether a path relative to dir is indexed; pre
// is prepended to each command.
func projectCommands(dir, pre string, has func(string) bool) map[string]string {
	c := map[string]string{}
	set := func(k, v string) {
		if _, ok := c[k]; !ok {
			c[k] = pre + v
		}
	}
	if has("go.mod") || has("go.work") {
		set("build", "go build -o /dev/null ./...") // no binary left in the tree (a single main package would write one)
		set("test", "go test ./...")
		set("lint", "go vet ./...")
	}
	if has("Cargo.toml") {
		set("build", "cargo build")
		set("test", "cargo test")
		set("lint", "cargo clippy")
		if has("src/main.rs") {
			set("run", "cargo run")
		}
	}
	if has("package.json") {
		if pkg, ok := readPackageJSON(filepath.Join(dir, "package.json")); ok {
			pm := "npm"
			switch {
			case has("pnpm-lock.yaml"):
				pm = "pnpm"
			case has("yarn.lock"):
				pm = "yarn"
			case has("bun.lockb") || has("bun.lock"):
				pm = "bun"
			}
			script := func(name string) string {
				switch {
				case pm == "yarn":
					return "yarn " + name
				case name == "test" && pm != "bun", name == "start" && pm != "bun":
					return pm + " " + name
				default:
					return pm + " run " + name
				}
			}
			for _, k := range []string{"build", "test", "lint"} {
				if s, ok := pkg.Scripts[k]; ok && !npmPlaceholder(s) {
					set(k, script(k))
				}
			}
			if _, ok := pkg.Scripts["build"]; !ok && has("tsconfig.json") && pkg.hasDep("typescript") {
				x := map[string]string{"npm": "npx", "pnpm": "pnpm exec", "yarn": "yarn", "bun": "bunx"}[pm]
				set("build", x+" tsc --noEmit")
			}
			for _, k := range []string{"dev", "start"} {
				if _, ok := pkg.Scripts[k]; ok {
					set("run", script(k))
				}
			}
		}
	}
	if has("pyproject.toml") || has("setup.py") || has("requirements.txt") || has("setup.cfg") {
		// The runner a lock file shows runs the tools in the project's
		// environment.
		run := ""
		switch {
		case has("uv.lock"):
			run = "uv run "
		case has("poetry.lock"):
			run = "poetry run "
		case has("pdm.lock"):
			run = "pdm run "
		}
		in := func(file, section string) bool {
			return has(file) && fileContains(filepath.Join(dir, file), section)
		}
		switch {
		case has("pytest.ini") || has("conftest.py") || has("tests/conftest.py") || in("pyproject.toml", "[tool.pytest") ||
			in("setup.cfg", "[tool:pytest]") || in("tox.ini", "[pytest]"):
			set("test", run+"pytest")
		case in("tox.ini", "[tox"):
			set("test", "tox")
		case in("pyproject.toml", "[tool.hatch.envs"):
			set("test", "hatch test")
		}
		switch {
		case has("ruff.toml") || has(".ruff.toml") || in("pyproject.toml", "[tool.ruff"):
			set("lint", run+"ruff check .")
		case has(".flake8") || in("setup.cfg", "[flake8]") || in("tox.ini", "[flake8]"):
			set("lint", run+"flake8")
		}
		if has("mypy.ini") || in("pyproject.toml", "[tool.mypy") {
			set("build", run+"mypy .")
		}
	}
	if has("pom.xml") {
		mvn := "mvn"
		if has("mvnw") {
			mvn = "./mvnw"
		}
		set("build", mvn+" -q compile")
		set("test", mvn+" -q test")
	}
	if has("build.gradle") || has("build.gradle.kts") {
		g := "gradle"
		if has("gradlew") {
			g = "./gradlew"
		}
		set("build", g+" assemble")
		set("test", g+" test")
	}
	if dotnetProject(dir) {
		set("build", "dotnet build")
		set("test", "dotnet test")
		set("lint", "dotnet format --verify-no-changes")
	}
	if has("CMakeLists.txt") {
		set("build", "cmake -S . -B build && cmake --build build")
		set("test", "ctest --test-dir build")
	}
	if has("Gemfile") {
		if has("Rakefile") {
			set("test", "bundle exec rake test")
		}
	}
	if has("composer.json") && (has("phpunit.xml") || has("phpunit.xml.dist")) {
		set("test", "vendor/bin/phpunit")
	}
	for _, mk := range []string{"GNUmakefile", "Makefile", "makefile"} {
		if !has(mk) {
			continue
		}
		data, err := readSmall(filepath.Join(dir, mk))
		if err != nil {
			break
		}
		targets := map[string]bool{}
		for _, m := range makeTarget.FindAllSubmatch(data, -1) {
			targets[string(m[1])] = true
		}
		for _, k := range []string{"build", "test", "lint", "run"} {
			if targets[k] {
				set(k, "make "+k)
			}
		}
		if targets["all"] {
			set("build", "make")
		}
		break
	}
	return c
}

// startGit reads the git state of the root in the background; the channel
// yields nil when the root is not a repository or git fails.
func (w *Workspace) startGit(ctx context.Context) <-chan *GitInfo {
	w.gitRuns.Add(1)
	return startGitCommands(ctx, w.root, w.opts.GitTimeout, w.log)
}

func (w *Workspace) gitInfo(ctx context.Context) *GitInfo {
	return <-w.startGit(ctx)
}

// startGitCommands starts the three git commands that read root's state
// (branch, head, `git status`) at once, before it returns, and yields
// their answer on the channel once all have ended: nil when root is not
// a repository or git fails. They used to run one after the other from a
// goroutine, which on a busy process only began once the scheduler let
// it run (tens of ms into a reopen), and then took the sum of the three.
func startGitCommands(ctx context.Context, root string, timeout time.Duration, log *slog.Logger) <-chan *GitInfo {
	ch := make(chan *GitInfo, 1)
	if _, err := os.Lstat(filepath.Join(root, ".git")); err != nil {
		ch <- nil
		return ch
	}
	if _, err := exec.LookPath("git"); err != nil {
		ch <- nil
		return ch
	}
	// The runtime's git runs outside the sandbox: gitx keeps it from
	// running anything a sandboxed command planted in .git (fsmonitor,
	// filters, hooks...) and gives it no key.
	repo, err := gitx.Open(root)
	if err != nil {
		log.Debug("workspace: git snapshot failed", "err", err)
		ch <- nil
		return ch
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	type started struct {
		cmd *exec.Cmd
		out bytes.Buffer
		err error
	}
	start := func(args ...string) *started {
		c := &started{cmd: repo.Command(ctx, args...)}
		c.cmd.Stdout = &c.out
		c.err = c.cmd.Start()
		return c
	}
	branch := start("symbolic-ref", "--short", "-q", "HEAD")
	head := start("rev-parse", "--short", "HEAD")
	// --ignore-submodules=all: git never looks into a nested repository
	// (a submodule, or a folder with its own .git committed as a gitlink).
	// A sandboxed command can write one, and git would run `git status`
	// in it with that repository's own config: its filters, includes...
	// (issue 32). So Dirty counts the repository's own paths only.
	status := start("status", "--porcelain", "--untracked-files=normal", "--ignore-submodules=all")
	go func() {
		defer repo.Close()
		defer cancel()
		wait := func(c *started) (string, error) {
			if c.err == nil {
				c.err = c.cmd.Wait()
			}
			return c.out.String(), c.err
		}
		info := &GitInfo{}
		if out, err := wait(branch); err == nil {
			info.Branch = strings.TrimSpace(out)
		}
		if out, err := wait(head); err == nil {
			info.Head = strings.TrimSpace(out)
		}
		out, err := wait(status)
		if err != nil {
			log.Debug("workspace: git status failed", "err", err)
			ch <- nil
			return
		}
		for _, line := range strings.Split(out, "\n") {
			if line != "" {
				info.Dirty++
			}
		}
		ch <- info
	}()
	return ch
}

// Commands returns the build, test, lint and run commands of the project
// whose root manifests are in dir, read from the file system rather than an
// index (a task's worktree, a folder no workspace has open). It is the table
// of Project.Commands for root manifests; docs/validations.md lists it.
func Commands(dir string) map[string]string {
	has := func(rel string) bool {
		_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
		return err == nil
	}
	return projectCommands(dir, "", has)
}

package workspace

import (
	"bytes"
	"path"
	"strings"
)

// extLanguages maps a lower-case file extension to a language identifier.
// Identifiers follow VS Code's language ids where one exists.
var extLanguages = map[string]string{
	".go": "go", ".rs": "rust",
	".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
	".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
	".py": "python", ".pyi": "python", ".java": "java",
	".c": "c", ".h": "c",
	".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hh": "cpp", ".hpp": "cpp", ".hxx": "cpp", ".ipp": "cpp",
	".cs": "csharp", ".rb": "ruby", ".rake": "ruby", ".gemspec": "ruby",
	".sh": "bash", ".bash": "bash", ".zsh": "bash",
	".md": "markdown", ".markdown": "markdown", ".mdc": "markdown",
	".json": "json", ".jsonc": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml",
	".kt": "kotlin", ".kts": "kotlin", ".scala": "scala", ".swift": "swift",
	".m": "objective-c", ".mm": "objective-cpp", ".php": "php", ".lua": "lua",
	".pl": "perl", ".pm": "perl", ".r": "r", ".dart": "dart", ".ex": "elixir", ".exs": "elixir",
	".erl": "erlang", ".hs": "haskell", ".ml": "ocaml", ".mli": "ocaml", ".clj": "clojure",
	".zig": "zig", ".nim": "nim", ".jl": "julia", ".fs": "fsharp", ".vb": "vb",
	".html": "html", ".htm": "html", ".css": "css", ".scss": "scss", ".sass": "sass", ".less": "less",
	".vue": "vue", ".svelte": "svelte", ".xml": "xml", ".sql": "sql", ".proto": "proto",
	".graphql": "graphql", ".gql": "graphql", ".tf": "terraform", ".ps1": "powershell",
	".s": "asm", ".asm": "asm", ".tex": "latex", ".rst": "restructuredtext", ".txt": "plaintext",
	".ini": "ini", ".cmake": "cmake", ".gradle": "groovy", ".groovy": "groovy",
	".dockerfile": "dockerfile", ".mk": "makefile",
}

// nameLanguages maps whole base names without a telling extension.
var nameLanguages = map[string]string{
	"Makefile": "makefile", "makefile": "makefile", "GNUmakefile": "makefile",
	"Dockerfile": "dockerfile", "CMakeLists.txt": "cmake", "Rakefile": "ruby", "Gemfile": "ruby",
	"go.mod": "go.mod", "go.sum": "go.sum", "go.work": "go.mod",
	".bashrc": "bash", ".zshrc": "bash", ".profile": "bash",
}

// interpreterLanguages maps a shebang interpreter to a language.
var interpreterLanguages = map[string]string{
	"sh": "bash", "bash": "bash", "zsh": "bash", "dash": "bash", "ksh": "bash",
	"python": "python", "python3": "python", "python2": "python",
	"node": "javascript", "deno": "typescript", "bun": "javascript",
	"ruby": "ruby", "perl": "perl", "php": "php", "lua": "lua",
}

// detectLanguage returns the language of a file from its base name, its
// extension, or, for files without a known extension, the interpreter on a
// "#!" first line in head. It returns "" when unknown.
func detectLanguage(rel string, head []byte) string {
	name := path.Base(rel)
	if l, ok := nameLanguages[name]; ok {
		return l
	}
	if ext := path.Ext(name); ext != "" {
		if l, ok := extLanguages[strings.ToLower(ext)]; ok {
			return l
		}
	}
	if strings.HasPrefix(name, "Dockerfile.") {
		return "dockerfile"
	}
	return shebangLanguage(head)
}

// shebangLanguage reads "#!/usr/bin/env python3 -u" or "#!/bin/sh" style
// first lines.
func shebangLanguage(head []byte) string {
	if !bytes.HasPrefix(head, []byte("#!")) {
		return ""
	}
	line := head[2:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	fields := strings.Fields(string(line))
	if len(fields) == 0 {
		return ""
	}
	interp := path.Base(fields[0])
	if interp == "env" {
		interp = ""
		for _, f := range fields[1:] {
			if !strings.HasPrefix(f, "-") && !strings.Contains(f, "=") {
				interp = f
				break
			}
		}
	}
	if l, ok := interpreterLanguages[interp]; ok {
		return l
	}
	// python3.12, ruby3.3 and the like.
	for k, l := range interpreterLanguages {
		if strings.HasPrefix(interp, k) && len(interp) > len(k) && (interp[len(k)] == '.' || interp[len(k)] >= '0' && interp[len(k)] <= '9') {
			return l
		}
	}
	return ""
}

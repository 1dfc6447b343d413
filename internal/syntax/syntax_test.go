package syntax

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// golden renders the parts of a FileInfo the goldens pin, one symbol or
// import per line so a diff shows what changed.
func golden(info *FileInfo) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "package: %q\nhasErrors: %v\nsymbols:\n", info.Package, info.HasErrors)
	for _, s := range info.Symbols {
		j, _ := json.Marshal(s)
		fmt.Fprintf(&b, "  %s\n", j)
	}
	b.WriteString("imports:\n")
	for _, im := range info.Imports {
		j, _ := json.Marshal(im)
		fmt.Fprintf(&b, "  %s\n", j)
	}
	return b.Bytes()
}

// TestGolden parses every fixture under testdata/<language>/ and compares
// symbols and imports with <file>.golden (go test -update rewrites them).
func TestGolden(t *testing.T) {
	dirs, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range dirs {
		if !d.IsDir() || !Supported(d.Name()) {
			continue
		}
		lang := d.Name()
		files, _ := filepath.Glob(filepath.Join("testdata", lang, "*"))
		for _, f := range files {
			if strings.HasSuffix(f, ".golden") {
				continue
			}
			seen[lang] = true
			t.Run(lang+"/"+filepath.Base(f), func(t *testing.T) {
				src, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				info, err := Parse(context.Background(), lang, src, nil)
				if err != nil {
					t.Fatal(err)
				}
				if info.HasErrors {
					t.Errorf("fixture has syntax errors")
				}
				got := golden(info)
				gf := f + ".golden"
				if *update {
					if err := os.WriteFile(gf, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(gf)
				if err != nil {
					t.Fatalf("%v (run go test -update)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("golden mismatch for %s\n--- got\n%s\n--- want\n%s", f, got, want)
				}
				for _, s := range info.Symbols {
					if s.StartLine < 1 || s.EndLine < s.StartLine || s.StartByte >= s.EndByte || int(s.EndByte) > len(src) {
						t.Errorf("bad range %+v", s)
					}
					if !strings.Contains(string(src[s.StartByte:s.EndByte]), s.Name.String()) && s.Kind != KindModule {
						t.Errorf("symbol %q not inside its range", s.Name)
					}
				}
			})
		}
	}
	for _, l := range Languages() {
		if !seen[l] {
			t.Errorf("no fixture for %s", l)
		}
	}
}

func TestUnsupported(t *testing.T) {
	_, err := Parse(context.Background(), "cobol", []byte("x"), nil)
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("err = %v, want ErrUnsupported", err)
	}
	if Supported("markdown") || !Supported("tsx") || !Supported("csharp") {
		t.Error("Supported is wrong")
	}
}

// TestTypeScriptImportRequire: TypeScript's `import x = require("y")` (an
// import statement with no source field of its own; common in .d.ts files)
// is an import of y binding x. Its source is the require clause's: reading
// the statement's own missing source indexed node -1 and panicked the
// whole cold open.
func TestTypeScriptImportRequire(t *testing.T) {
	src := []byte("import ifm = require('../Interfaces');\nimport { a } from \"./a\";\nexport declare class H implements ifm.Handler {}\n")
	for _, lang := range []string{"typescript", "tsx"} {
		info, err := Parse(context.Background(), lang, src, nil)
		if err != nil {
			t.Fatalf("%s: %v", lang, err)
		}
		want := []Import{{Path: "../Interfaces", Kind: "import", Names: []string{"ifm"}, Line: 1}, {Path: "./a", Kind: "import", Names: []string{"a"}, Line: 2}}
		if !reflect.DeepEqual(info.Imports, want) {
			t.Errorf("%s: imports %+v, want %+v", lang, info.Imports, want)
		}
	}
}

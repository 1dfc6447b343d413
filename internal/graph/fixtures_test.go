package graph

import "github.com/task-x/task-x-runtime/internal/syntax"

// Hand-made parse results of the fixtures under testdata/, written as the
// syntax package documents FileInfo (types.go). They stand in for real
// parses so the graph's resolution rules are tested on their own.

func imp(path, kind string, names ...string) syntax.Import {
	return syntax.Import{Path: path, Kind: kind, Names: names, Line: 1}
}

func sym(name, kind string, exported bool) syntax.Symbol {
	k, ok := syntax.ParseSymbolKind(kind)
	if !ok {
		panic("fixture: unknown symbol kind " + kind)
	}
	return syntax.Symbol{Name: syntax.InternName(name), Kind: k, StartLine: 1, EndLine: 1, Exported: exported}
}

func info(lang string, syms []syntax.Symbol, imps []syntax.Import, refs ...string) *syntax.FileInfo {
	return &syntax.FileInfo{Language: lang, Symbols: syms, Imports: imps, Refs: syntax.InternNames(refs)}
}

var fixtureInfo = map[string]map[string]*syntax.FileInfo{
	"rust": {
		"src/lib.rs": info("rust", []syntax.Symbol{sym("net", "module", false), sym("util", "module", false), sym("missing", "module", false), sym("start", "function", true)},
			[]syntax.Import{imp("net", "mod"), imp("util", "mod"), imp("missing", "mod"), imp("crate::net::client::Client", "use"), imp("serde::Serialize", "use")},
			"Client", "new"),
		"src/net/mod.rs": info("rust", []syntax.Symbol{sym("client", "module", true), sym("Conn", "struct", true)},
			[]syntax.Import{imp("client", "mod"), imp("crate::util::helper", "use")}, "helper"),
		"src/net/client.rs": info("rust", []syntax.Symbol{sym("tcp", "module", false), sym("Client", "struct", true), sym("new", "method", true)},
			[]syntax.Import{imp("tcp", "mod"), imp("super::Conn", "use"), imp("crate::util", "use", "helper", "Config")}, "Conn", "helper", "Config"),
		"src/net/client/tcp.rs": info("rust", []syntax.Symbol{sym("dial", "function", true)},
			[]syntax.Import{imp("self::inner::Socket", "use")}, "Socket"),
		"src/util.rs": info("rust", []syntax.Symbol{sym("Config", "struct", true), sym("helper", "function", true), sym("make", "function", true)},
			[]syntax.Import{imp("crate::net::client::Client", "use")}, "Client", "new"),
	},
	"ts": {
		"src/index.ts": info("typescript", nil,
			[]syntax.Import{imp("./app", "import", "App"), imp("./styles.css", "import"), imp("./types", "import", "Shape")}, "App"),
		"src/types.d.ts": info("typescript", []syntax.Symbol{sym("Shape", "interface", true)}, nil, "number"),
		"src/app.tsx": info("tsx", []syntax.Symbol{sym("App", "class", true), sym("render", "method", false)},
			[]syntax.Import{imp("./lib", "import", "util"), imp("./components/Button.js", "import", "Button")}, "util", "Button"),
		"src/lib/index.ts": info("typescript", []syntax.Symbol{sym("util", "function", true)},
			[]syntax.Import{imp("./math", "export"), imp("../app", "import", "App")}, "App"),
		"src/lib/math.ts": info("typescript", []syntax.Symbol{sym("add", "function", true)},
			[]syntax.Import{imp("lodash", "import"), imp("./nope", "import")}, "number"),
		"src/components/Button.tsx": info("tsx", []syntax.Symbol{sym("Button", "function", true)}, nil, "props"),
		"src/legacy.js":             info("javascript", nil, []syntax.Import{imp("./lib/math.js", "require")}, "add", "module"),
	},
	"python": {
		"src/pkg/__init__.py": info("python", nil, []syntax.Import{imp(".core", "from", "Engine")}, "Engine"),
		"src/pkg/core.py": info("python", []syntax.Symbol{sym("Engine", "class", true), sym("run", "method", true)},
			[]syntax.Import{imp("os", "import"), imp(".", "from", "utils"), imp(".sub.helpers", "from", "h")}, "utils", "clean", "h"),
		"src/pkg/utils.py": info("python", []syntax.Symbol{sym("clean", "function", true)},
			[]syntax.Import{imp("pkg.core", "from", "Engine")}, "Engine"),
		"src/pkg/sub/__init__.py": info("python", nil, nil),
		"src/pkg/sub/helpers.py": info("python", []syntax.Symbol{sym("h", "function", true)},
			[]syntax.Import{imp("..utils", "from", "clean"), imp("..missing", "from", "nothing")}, "clean"),
		"scripts/run.py": info("python", nil, []syntax.Import{imp("requests", "import"), imp("pkg.core", "import")}, "pkg", "core", "Engine", "run"),
	},
	"go": {
		"main.go": &syntax.FileInfo{Language: "go", Package: "main", Symbols: []syntax.Symbol{sym("main", "function", false)},
			Imports: []syntax.Import{imp("fmt", "import"), imp("example.com/app/missing", "import"), imp("example.com/app/store", "import"), imp("example.com/app/tools/x", "import")},
			Refs:    syntax.InternNames([]string{"fmt", "Println", "store", "Open", "Item", "x", "Run"})},
		"store/store.go": &syntax.FileInfo{Language: "go", Package: "store", Symbols: []syntax.Symbol{sym("Open", "function", true)}, Refs: syntax.InternNames([]string{"helper"})},
		"store/item.go":  &syntax.FileInfo{Language: "go", Package: "store", Symbols: []syntax.Symbol{sym("Item", "struct", true), sym("helper", "function", false)}},
		"store/store_test.go": &syntax.FileInfo{Language: "go", Package: "store", Symbols: []syntax.Symbol{sym("TestOpen", "function", true)},
			Imports: []syntax.Import{imp("testing", "import")}, Refs: syntax.InternNames([]string{"testing", "T", "Open", "helper"})},
		"tools/x/x.go": &syntax.FileInfo{Language: "go", Package: "x", Symbols: []syntax.Symbol{sym("Run", "function", true)}},
	},
	"c": {
		"main.c": info("c", []syntax.Symbol{sym("main", "function", true)},
			[]syntax.Import{imp("stdio.h", "include"), imp("util.h", "include"), imp("lib/list.h", "include")}, "list_push", "util_max"),
		"util.h":     info("c", []syntax.Symbol{sym("util_max", "function", true)}, nil),
		"util.c":     info("c", []syntax.Symbol{sym("util_max", "function", true)}, []syntax.Import{imp("util.h", "include")}),
		"lib/list.h": info("c", []syntax.Symbol{sym("list_push", "function", true)}, []syntax.Import{imp("../util.h", "include")}),
		"lib/list.c": info("c", []syntax.Symbol{sym("list_push", "function", true)},
			[]syntax.Import{imp("list.h", "include"), imp("config.h", "include")}, "util_max", "LIST_CAP"),
		"include/config.h": info("c", []syntax.Symbol{sym("LIST_CAP", "constant", true)}, nil),
	},
}

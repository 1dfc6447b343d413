package protocol

// WorkspaceOpenParams is the params of workspace/open.
type WorkspaceOpenParams struct {
	// Root is the absolute path of the folder to open.
	Root string `json:"root"`
	// Exclude holds more globs to leave out (** syntax).
	Exclude []string `json:"exclude,omitempty"`
	// UserInstructions is accepted from older clients and ignored.
	UserInstructions any `json:"userInstructions,omitempty"`
	// UserPromptsDir is accepted from older clients and ignored.
	UserPromptsDir any `json:"userPromptsDir,omitempty"`
}

// WorkspaceSummary is the result of workspace/open, workspace/refresh and
// context/inspect (addendum §2).
type WorkspaceSummary struct {
	Root         string         `json:"root"`
	Project      Project        `json:"project"`
	Stats        WorkspaceStats `json:"stats"`
	Instructions []Instruction  `json:"instructions"`
	// Excludes are the built-in and requested excludes in force.
	Excludes []string `json:"excludes"`
}

// Project is what the runtime detected about the workspace.
type Project struct {
	Name string `json:"name"`
	// Kinds come from manifests: go, rust, node, python, ...
	Kinds     []string        `json:"kinds"`
	Manifests []string        `json:"manifests"`
	Languages []LanguageCount `json:"languages"`
	// Commands are what a developer of the project would type, by name
	// (build, test, lint, ...).
	Commands map[string]string `json:"commands"`
	// Git is null outside a git repository.
	Git *GitInfo `json:"git"`
}

// LanguageCount is one entry of Project.languages.
type LanguageCount struct {
	Language string `json:"language"`
	Files    int    `json:"files"`
}

// GitInfo is Project.git.
type GitInfo struct {
	Branch string `json:"branch"`
	Head   string `json:"head"`
	// Dirty counts changed files.
	Dirty int `json:"dirty"`
}

// WorkspaceStats is the workspace summary's stats.
type WorkspaceStats struct {
	Files        int          `json:"files"`
	IndexedFiles int          `json:"indexedFiles"`
	Skipped      SkippedStats `json:"skipped"`
	Bytes        int64        `json:"bytes"`
	Symbols      int          `json:"symbols"`
	ParseErrors  int          `json:"parseErrors"`
	ElapsedMs    int64        `json:"elapsedMs"`
	// Truncated: the cap on files (default 200 000) was reached.
	Truncated bool `json:"truncated"`
}

// SkippedStats counts the files listed but not parsed, by reason.
type SkippedStats struct {
	Binary   int `json:"binary"`
	TooLarge int `json:"tooLarge"`
	Excluded int `json:"excluded"`
	// Unreadable, Vanished, SymlinkLoop, OutsideRoot and InvalidName are
	// additive.
	Unreadable  int `json:"unreadable"`
	Vanished    int `json:"vanished"`
	SymlinkLoop int `json:"symlinkLoop"`
	OutsideRoot int `json:"outsideRoot"`
	InvalidName int `json:"invalidName"`
}

// InstructionScope is Instruction.scope.
type InstructionScope string

// The instruction scopes.
const (
	ScopeWorkspace InstructionScope = "workspace"
	ScopeDirectory InstructionScope = "directory"
	ScopeUser      InstructionScope = "user"
)

// Instruction is one instruction file (AGENTS.md, CLAUDE.md, ...).
type Instruction struct {
	Source string           `json:"source"`
	Scope  InstructionScope `json:"scope"`
	// Dir is the folder a directory-scoped file applies under ("" at the
	// root).
	Dir     string `json:"dir"`
	Content string `json:"content"`
	// Truncated: the file was cut at 32 KiB.
	Truncated bool `json:"truncated"`
}

// ProgressPhase is workspace/progress's phase.
type ProgressPhase string

// The progress phases (protocol.md workspace/progress).
const (
	PhaseIndexing ProgressPhase = "indexing"
	PhaseGraph    ProgressPhase = "graph"
	PhaseReady    ProgressPhase = "ready"
	PhaseUpdated  ProgressPhase = "updated"
	PhaseFailed   ProgressPhase = "failed"
)

// WorkspaceProgressParams is the params of workspace/progress: which members
// are present depends on the phase. Its members come in alphabetical order,
// as the runtime has always sent them.
type WorkspaceProgressParams struct {
	// ElapsedMs counts from the request's start (indexing, graph, ready).
	ElapsedMs *int64 `json:"elapsedMs,omitempty"`
	// Error says why the open failed (failed).
	Error string `json:"error,omitempty"`
	// Files are the files seen so far (indexing, graph).
	Files *int `json:"files,omitempty"`
	// Graph is the graph's stats (ready).
	Graph *GraphReadyStats `json:"graph,omitempty"`
	// Parsed counts the files parsed so far (indexing).
	Parsed *int          `json:"parsed,omitempty"`
	Phase  ProgressPhase `json:"phase"`
	// Stage refines a phase (additive): "loading" while indexing is the
	// revalidation of a saved index, "retrieval" while graph is the build
	// of the retrieval index.
	Stage string `json:"stage,omitempty"`
	// Stats is as in the workspace summary (ready, updated).
	Stats *WorkspaceStats `json:"stats,omitempty"`
	// Total is the number of files to check, when known (indexing).
	Total int `json:"total,omitempty"`
}

// FilesChangedParams is the params of the workspace/filesChanged
// notification.
type FilesChangedParams struct {
	// Paths are absolute, or relative to the root.
	Paths []string `json:"paths"`
}

// RetrieveParams is the params of context/retrieve.
type RetrieveParams struct {
	Query string `json:"query"`
	// BudgetTokens defaults to 8000.
	BudgetTokens int      `json:"budgetTokens,omitempty"`
	FocusPaths   []string `json:"focusPaths,omitempty"`
}

// RetrieveResult is the result of context/retrieve.
type RetrieveResult struct {
	Retrieval    Retrieval     `json:"retrieval"`
	Instructions []Instruction `json:"instructions"`
}

// Retrieval is the repository excerpts for a query (addendum §3).
type Retrieval struct {
	Terms           []string  `json:"terms"`
	Snippets        []Snippet `json:"snippets"`
	FilesConsidered int       `json:"filesConsidered"`
	BudgetTokens    int       `json:"budgetTokens"`
	UsedTokens      int       `json:"usedTokens"`
}

// Snippet is one excerpt of a retrieval.
type Snippet struct {
	Path      string  `json:"path"`
	StartLine int     `json:"startLine"`
	EndLine   int     `json:"endLine"`
	Text      string  `json:"text"`
	Score     float64 `json:"score"`
	// Reason says in words why the snippet was picked.
	Reason string `json:"reason"`
}

// GraphProjectParams is the params of graph/project.
type GraphProjectParams struct {
	// Level is file (default) or module.
	Level string `json:"level,omitempty"`
	// Focus is a file or directory.
	Focus string `json:"focus,omitempty"`
	// Depth is 1 by default, at most 4.
	Depth int `json:"depth,omitempty"`
	// MaxNodes is 250 by default, at most 600.
	MaxNodes    int  `json:"maxNodes,omitempty"`
	ImportsOnly bool `json:"importsOnly,omitempty"`
}

// GraphProjectResult is the result of graph/project.
type GraphProjectResult struct {
	Nodes []GraphNode `json:"nodes"`
	Edges []GraphEdge `json:"edges"`
	Total int         `json:"total"`
	Stats GraphStats  `json:"stats"`
}

// GraphNode is a file (or, at level module, a folder) of the graph.
type GraphNode struct {
	ID       string `json:"id"`
	Language string `json:"language"`
	Symbols  int    `json:"symbols"`
	Files    int    `json:"files"`
	Degree   int    `json:"degree"`
	InCycle  bool   `json:"inCycle"`
}

// EdgeKind is an edge's kind.
type EdgeKind string

// The edge kinds.
const (
	EdgeImport    EdgeKind = "import"
	EdgeReference EdgeKind = "reference"
)

// GraphEdge links two nodes; From and To index GraphProjectResult.nodes.
type GraphEdge struct {
	From int `json:"from"`
	To   int `json:"to"`
	// Weight counts linked symbols.
	Weight int      `json:"weight"`
	Kind   EdgeKind `json:"kind"`
}

// GraphStats is graph/project's stats.
type GraphStats struct {
	Files          int        `json:"files"`
	Edges          int        `json:"edges"`
	ImportEdges    int        `json:"importEdges"`
	ReferenceEdges int        `json:"referenceEdges"`
	Modules        int        `json:"modules"`
	Cycles         int        `json:"cycles"`
	Orphans        int        `json:"orphans"`
	Hubs           []GraphHub `json:"hubs"`
	// ImportCycles are strongly connected components of the import edges.
	ImportCycles [][]string `json:"importCycles"`
	BuildMs      int64      `json:"buildMs"`
	// Version is the graph engine version.
	Version string `json:"version"`
	// UnresolvedImports counts imports no file answers (additive).
	UnresolvedImports int `json:"unresolvedImports"`
}

// GraphHub is a file many others depend on.
type GraphHub struct {
	Path       string `json:"path"`
	Dependents int    `json:"dependents"`
}

// GraphFileParams is the params of graph/file.
type GraphFileParams struct {
	Path string `json:"path"`
}

// GraphFileResult is the result of graph/file.
type GraphFileResult struct {
	Path      string     `json:"path"`
	DependsOn []GraphDep `json:"dependsOn"`
	UsedBy    []GraphDep `json:"usedBy"`
	// ImportCycle lists the paths of the import cycle the file belongs to
	// (empty when none).
	ImportCycle []string `json:"importCycle"`
}

// GraphDep is one entry of graph/file's lists.
type GraphDep struct {
	Path    string   `json:"path"`
	Kind    EdgeKind `json:"kind"`
	Symbols []string `json:"symbols"`
}

// GraphReadyStats is the graph of workspace/progress ready: graph/project's
// stats, but ImportCycles holds at most the 5 largest cycles (largest
// first), each cut to its first 10 paths; Cycles still counts all of them.
type GraphReadyStats struct {
	Files             int        `json:"files"`
	Edges             int        `json:"edges"`
	ImportEdges       int        `json:"importEdges"`
	ReferenceEdges    int        `json:"referenceEdges"`
	Modules           int        `json:"modules"`
	Cycles            int        `json:"cycles"`
	Orphans           int        `json:"orphans"`
	Hubs              []GraphHub `json:"hubs"`
	BuildMs           int64      `json:"buildMs"`
	Version           string     `json:"version"`
	UnresolvedImports int        `json:"unresolvedImports"`
	ImportCycles      [][]string `json:"importCycles"`
	// ImportCycleSizes[i] is the full size of ImportCycles[i] (additive).
	ImportCycleSizes []int `json:"importCycleSizes"`
	// ImportCyclesTruncated: the list is not graph/project's whole list
	// (additive).
	ImportCyclesTruncated bool `json:"importCyclesTruncated,omitempty"`
}

// The task-x runtime protocol, version 1 (protocol.md and addendum.md).
// Code generated from internal/protocol by `go test ./internal/protocol/schema -update`. DO NOT EDIT.

/** The protocolVersion of initialize. */
export type ProtocolVersion = 1;

/** ActiveSkill is a skill that applies, with its {{param}} values filled in. */
export interface ActiveSkill {
  name: string;
  /** Reason is a leading /name, a trigger word, or a file pattern. */
  reason: string;
  source: string;
  text: string;
}

/** AgentEvent is one event of an agent/event notification (protocol.md "Agent, tools, and extensions"; docs/events.md lists each type's fields in wire order). The set is closed: only the types of this package implement it. On the wire an event is an object whose first member is "type"; MarshalAgentEvent is the one place that adds it. */
export type AgentEvent =
  | StartedEvent
  | ModelEvent
  | IterationEvent
  | TextDeltaEvent
  | ThinkingDeltaEvent
  | AssistantMessageEvent
  | UsageEvent
  | ContextEvent
  | CompactedEvent
  | RetryEvent
  | ModelSwitchedEvent
  | SteeredEvent
  | ToolStartedEvent
  | ApprovalRequestedEvent
  | ApprovalResolvedEvent
  | FileChangedEvent
  | ToolFinishedEvent
  | HookEvent
  | ValidationStartedEvent
  | ValidationFinishedEvent
  | WarningEvent
  | ErrorEvent
  | DoneEvent
  | PlanStartedEvent
  | StepSkippedEvent
  | MergedEvent
  | SubagentStartedEvent
  | SubagentEvent
  | SubagentFinishedEvent
  | BestOfDoneEvent
  | ToolOutputEvent
  | DiffEvent
  | PlanEvent
  | ApprovalWithdrawnEvent
  | ReplayedEvent
  | UserMessageEvent;

/** AgentEventParams is the params of an agent/event notification. */
export interface AgentEventParams {
  /** TaskID is the task the event belongs to. */
  taskId: string;
  event: AgentEvent;
  /** Replay marks an event agent/replay sent again (additive; absent on live events). */
  replay?: boolean;
}

/** AgentRunParams is the params of agent/run. */
export interface AgentRunParams {
  prompt: string;
  /** Images join the user message (protocol.md Images): at most 8. */
  images?: ImageInput[];
  provider: ProviderConfig;
  /** ChatMode defaults to agent. */
  chatMode?: ChatMode;
  /** TaskID continues a saved task, or names a new one. */
  taskId?: string;
  editor?: EditorContext;
  /** Policy: no policy means mode default. */
  policy?: Policy;
  limits?: Limits;
  /** Routes pick a provider per task kind. */
  routes?: Route[];
  /** Fallbacks take over, in order, when the provider fails for good. */
  fallbacks?: ProviderConfig[];
  /** RoleProviders set the model of team subagents per role. */
  roleProviders?: RoleProvider[];
  /** Prices are per million tokens, matched by model id prefix. */
  prices?: Price[];
  validation?: ValidationConfig;
}

/** AgentSummary is the result of agent/run and claude/run, and the summary of a saved task. */
export interface AgentSummary {
  taskId: string;
  status: TaskStatus;
  /** Text is the last assistant text of the task. */
  text: string;
  /** ChangedFiles holds one entry per path, in first-change order. */
  changedFiles: FileChange[];
  /** Operations are the edit-log operation ids of the task's edits. */
  operations: string[];
  /** Validations are the checks of the last round (addendum §12). */
  validations: ValidationResult[];
  /** ValidationRan is true when a check ran in any round. */
  validationRan: boolean;
  /** SkippedChecks are the last round's checks considered and not run. */
  skippedChecks: SkippedCheck[];
  /** Usage sums the token counts the providers reported. Usage and Metrics are absent only in the summary of a task that a killed runtime left running (initialize marks it failed): nobody measured it. */
  usage?: Usage;
  /** UnreportedUsageCalls counts the model calls whose provider reported no token counts (additive). */
  unreportedUsageCalls?: number;
  metrics?: Metrics;
  model: string;
  /** Iterations counts model calls. */
  iterations: number;
  /** ToolCalls counts the tool calls the model made (denied and failed ones included). */
  toolCalls: number;
  error: string | null;
  /** EndReason says which limit or refusal ended a failed task (additive; absent for every other end), so that a client acts on it without reading Error's text. */
  endReason?: TaskEndReason;
  /** Findings are the review findings of team mode's review subagents (additive; absent outside team mode). */
  findings?: Finding[];
}

/** ApprovalRequestedEvent says the runtime sent agent/requestApproval for a call. */
export interface ApprovalRequestedEvent {
  type: "approvalRequested";
  callId: string;
  tool: string;
  permission: Permission;
  input: unknown;
  preview: string;
}

/** ApprovalResolvedEvent gives an approval's decision. */
export interface ApprovalResolvedEvent {
  type: "approvalResolved";
  callId: string;
  tool: string;
  decision: Decision;
}

/** ApprovalWithdrawnEvent says the runtime stopped waiting for the answer to agent/requestApproval or agent/askUser of this call; the client closes the dialog. */
export interface ApprovalWithdrawnEvent {
  type: "approvalWithdrawn";
  callId: string;
}

/** AskUserParams is the params of agent/askUser (runtime → client), in alphabetical order as the runtime has always sent them. */
export interface AskUserParams {
  callId: string;
  /** Questions are 1 to 4. */
  questions: Question[];
  taskId: string;
}

/** AskUserResult is the client's answer to agent/askUser: the labels picked per question id, or null when the user dismissed the questions. */
export interface AskUserResult {
  /** Answers maps question ids to the labels picked; null when the user dismissed the questions. */
  answers: { [key: string]: string[] } | null;
}

/** AssistantMessageEvent is the whole turn's text (may be "") and its tool calls ([] when none). */
export interface AssistantMessageEvent {
  type: "assistantMessage";
  text: string;
  toolCalls: ToolCall[];
}

/** BestOfDoneEvent is the last event of agent/bestOf. */
export interface BestOfDoneEvent {
  type: "bestOfDone";
  /** TaskID is the best-of's. */
  taskId: string;
  candidates: CandidateSummary[];
  costUsd: number;
}

/** BestOfParams is the params of agent/bestOf. */
export interface BestOfParams {
  prompt: string;
  /** Providers are 2 to 4. */
  providers: ProviderConfig[];
  taskId?: string;
  editor?: EditorContext;
  policy?: Policy;
  limits?: Limits;
  prices?: Price[];
  validation?: ValidationConfig;
}

/** BestOfResult is the result of agent/bestOf. */
export interface BestOfResult {
  taskId: string;
  candidates: Candidate[];
  costUsd: number;
}

/** CancelParams is the params of the $/cancelRequest notification: the id of the request to cancel (a string or an integer). The cancelled request answers -32800 with data.kind "cancelled"; an unknown id is ignored. */
export interface CancelParams {
  id: ID;
}

/** CancelToolParams is the params of agent/cancelTool. */
export interface CancelToolParams {
  /** TaskID is a subagent's own task id for its calls. */
  taskId: string;
  /** CallID is from toolStarted. */
  callId: string;
}

/** CancelledData is the data of a -32800 error. */
export interface CancelledData {
  /** Kind is "cancelled". */
  kind: string;
  /** Message is "request cancelled" when the connection cancelled the request (a $/cancelRequest, shutdown) rather than the handler. */
  message?: string;
}

/** Candidate is one candidate of agent/bestOf: a FinishedCandidate, or a FailedCandidate when its subagent failed. */
export type Candidate =
  | FinishedCandidate
  | FailedCandidate;

/** CandidateSummary is one candidate of bestOfDone. */
export interface CandidateSummary {
  name: string | null;
  kind: string;
  model: string;
  status: TaskStatus;
}

/** ChatDoneEvent is chat/event done: the provider finished the response. */
export interface ChatDoneEvent {
  type: "done";
  stopReason: StopReason;
}

/** ChatEvent is one event of a chat/event notification (protocol.md chat/send). The set is closed, like AgentEvent's. */
export type ChatEvent =
  | ChatTextDeltaEvent
  | ChatThinkingDeltaEvent
  | ChatToolCallEvent
  | ChatUsageEvent
  | ChatDoneEvent;

/** ChatEventParams is the params of a chat/event notification. */
export interface ChatEventParams {
  /** RequestID is the id of the chat/send request. */
  requestId: ID;
  event: ChatEvent;
}

/** ChatMode is agent/run's chatMode. */
export type ChatMode = "ask" | "plan" | "agent" | "team" | "claudeCode";

/** ChatRequest is protocol.md ChatRequest. */
export interface ChatRequest {
  system?: string;
  /** Messages is required, not empty; the first role must be user. */
  messages: Message[];
  /** Tools: each inputSchema must be a JSON Schema object. */
  tools?: ChatTool[];
  /** MaxTokens defaults to 4096. */
  maxTokens?: number;
  /** Temperature is 0 to 2. */
  temperature?: number;
  /** ContextWindow becomes Ollama's num_ctx (addendum §10). */
  contextWindow?: number;
}

/** ChatResult is the result of chat/send: the fold of its chat/events. */
export interface ChatResult {
  text: string;
  toolCalls: ToolCall[];
  stopReason: StopReason;
  /** Usage is absent when the provider reported no token counts. */
  usage?: Usage;
}

/** ChatSendParams is the params of chat/send. */
export interface ChatSendParams {
  provider: ProviderConfig;
  request: ChatRequest;
}

/** ChatTextDeltaEvent is chat/event textDelta: the next part of the assistant text. */
export interface ChatTextDeltaEvent {
  type: "textDelta";
  text: string;
}

/** ChatThinkingDeltaEvent is chat/event thinkingDelta (additive, addendum §10): a part of the model's thinking, never part of the text. */
export interface ChatThinkingDeltaEvent {
  type: "thinkingDelta";
  text: string;
}

/** ChatTool is protocol.md ToolSpec, a tool offered in a ChatRequest. */
export interface ChatTool {
  name: string;
  description?: string;
  /** InputSchema is a JSON Schema object. */
  inputSchema: unknown;
}

/** ChatToolCallEvent is chat/event toolCall: a complete tool call (its arguments are parsed). */
export interface ChatToolCallEvent {
  type: "toolCall";
  id: string;
  input: unknown;
  name: string;
}

/** ChatUsageEvent is chat/event usage: token counts, when the provider reports them. */
export interface ChatUsageEvent {
  type: "usage";
  usage: Usage | null;
}

/** ClaudeRunParams is the params of claude/run (docs/claude.md). */
export interface ClaudeRunParams {
  prompt: string;
  images?: ImageInput[];
  taskId?: string;
  model?: string;
  /** PermissionMode is Claude Code's permission mode. */
  permissionMode?: string;
  /** ClaudePath is the Claude Code CLI to run. */
  claudePath?: string;
  /** UseTaskTools defaults to true: Claude works through the task-x tools. */
  useTaskTools?: boolean;
  /** ApproveAll allows every tool Claude Code asks about. */
  approveAll?: boolean;
  allowCommands?: boolean;
  /** MCPServers are more servers in Claude Code's mcpServers format; the name task-x is reserved. */
  mcpServers?: { [key: string]: unknown };
  editor?: EditorContext;
  /** Policy is agent/run's policy, applied to every call Claude Code asks about or forwards; permissionMode follows policy.mode when absent. */
  policy?: Policy;
}

/** ClientInfo is initialize.clientInfo. */
export interface ClientInfo {
  name: string;
  version?: string;
}

/** CompactedEvent says the context was compressed (protocol.md Context compression). */
export interface CompactedEvent {
  type: "compacted";
  /** Folded counts the messages folded into the progress summary. */
  folded: number;
  /** Pruned counts the tool results cut or made into stubs. */
  pruned: number;
  /** DroppedRetrieval is true when the repository excerpts were dropped. */
  droppedRetrieval: boolean;
  beforeTokens: number;
  afterTokens: number;
  windowTokens: number;
}

/** ConfigHooksParams is the params of config/hooks. */
export interface ConfigHooksParams {
  /** Hooks replace the earlier user hooks; a malformed object is -32602. */
  hooks: HooksConfig;
  /** WorkspaceTrusted lets the workspace's .task-x/hooks.json load. */
  workspaceTrusted: boolean;
}

/** ConfigHooksResult is the result of config/hooks, in alphabetical order as the runtime has always sent it. */
export interface ConfigHooksResult {
  hooks: HooksConfig;
  /** WorkspaceError says why the workspace's hooks file was not used (additive). */
  workspaceError?: string;
  /** WorkspaceHooks is the open workspace's .task-x/hooks.json when trusted ({} otherwise). */
  workspaceHooks: HooksConfig;
}

/** ContentPart is one part of a message: text { text }, toolUse { id, name, input }, toolResult { toolUseId, toolName, content, isError } or image { mediaType, data }. */
export interface ContentPart {
  type: ContentPartType;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  toolUseId?: string;
  toolName?: string;
  content?: string;
  isError?: boolean;
  mediaType?: string;
  data?: string;
}

/** ContentPartType is ContentPart.type. */
export type ContentPartType = "text" | "toolUse" | "toolResult" | "image";

/** ContextEvent follows every model response. */
export interface ContextEvent {
  type: "context";
  /** UsedTokens is the last call's input plus output tokens. */
  usedTokens: number;
  windowTokens: number;
}

/** ContextWindowResult is the result of provider/contextWindow. */
export interface ContextWindowResult {
  /** FromProvider is true when the provider said it, false for the built-in estimate (additive). */
  fromProvider: boolean;
  /** Tokens is the context window of provider.model. */
  tokens: number;
}

/** Decision is an approval's answer. */
export type Decision = "allow" | "allowSession" | "deny";

/** Diagnostic is one entry of EditorContext.diagnostics. */
export interface Diagnostic {
  path: string;
  line: number;
  severity: string;
  message: string;
  source?: string;
}

/** DiffEvent gives the task's whole diff after file changes (debounced). */
export interface DiffEvent {
  type: "diff";
  /** Diff is the task's whole unified diff. */
  diff: string;
  /** Files are the paths in it, in edits/pending's order. */
  files: string[];
  /** Truncated: the diff was cut at 4 MiB. */
  truncated: boolean;
}

/** DoneEvent is always the last event of a task, exactly once. */
export interface DoneEvent {
  type: "done";
  status: TaskStatus;
  /** Error is null when completed, "cancelled" on cancel. */
  error: string | null;
  /** Text is the last assistant text. */
  text: string;
  changedFiles: FileChange[];
  /** Usage is the task's summed token counts. */
  usage: Usage;
  model: string;
  iterations: number;
  toolCalls: number;
  /** ValidationRan and SkippedChecks repeat the summary's (additive): a client that rebuilds a saved task from its events (agent/replay) shows "no checks ran" and the skipped checks as the live run did. */
  validationRan: boolean;
  skippedChecks: SkippedCheck[];
}

/** EdgeKind is an edge's kind. */
export type EdgeKind = "import" | "reference";

/** EditFile is one file of an edit operation. */
export interface EditFile {
  path: string;
  kind: FileChangeKind;
  beforeHash: string;
  afterHash: string;
  added: number;
  removed: number;
  settled: boolean;
}

/** EditOperation is one operation of the edit log. */
export interface EditOperation {
  id: string;
  taskId?: string;
  callId?: string;
  tool: string;
  /** Time is RFC 3339 with milliseconds. */
  time: string;
  files: EditFile[];
  diff: string;
  /** Settled: every file of the operation was kept or reverted. */
  settled: boolean;
  undone: boolean;
  /** Undoable is false once undone, or when its contents were dropped (the log keeps 500 operations' contents). */
  undoable: boolean;
  /** DiffTruncated: the diff was cut to keep the reply under the message cap (additive). */
  diffTruncated?: boolean;
}

/** EditorContext is protocol.md EditorContext. */
export interface EditorContext {
  activeFile?: string;
  selection?: Selection;
  openFiles?: string[];
  diagnostics?: Diagnostic[];
  /** Mentions are files and folders the user referenced with @path (at most 10). */
  mentions?: string[];
}

/** EditsListResult is the result of edits/list: the operation log with diffs. */
export interface EditsListResult {
  operations: EditOperation[];
}

/** EditsPendingResult is the result of edits/pending: the net unsettled change of each file. */
export interface EditsPendingResult {
  files: PendingFile[];
}

/** ErrorEvent is the ProviderError of a failed model call; done follows. */
export interface ErrorEvent {
  type: "error";
  message: string;
  kind: ProviderErrorKind;
  /** Status is the HTTP status, 0 when none. */
  status: number;
  retryable: boolean;
}

/** ErrorObject is the error member of a response. */
export interface ErrorObject {
  code: number;
  message: string;
  /** Data depends on the code: ProviderError for -32001 and for a -32602 of local validation, ToolErrorData for -32005, VersionMismatchData for -32002, CancelledData for -32800. */
  data?: unknown;
}

/** FailedCandidate is a candidate whose subagent failed: name null, status failed. */
export interface FailedCandidate {
  name: string | null;
  kind: string;
  model: string;
  status: TaskStatus;
  error: string | null;
}

/** FileChange is one changed file of a summary or done event. */
export interface FileChange {
  path: string;
  kind: FileChangeKind;
  added: number;
  removed: number;
}

/** FileChangeKind says how a file changed. */
export type FileChangeKind = "created" | "modified" | "deleted";

/** FileChangedEvent reports one file a call changed. */
export interface FileChangedEvent {
  type: "fileChanged";
  callId: string;
  /** Path is root-relative, with "/". */
  path: string;
  kind: FileChangeKind;
  /** Added and Removed count lines. */
  added: number;
  removed: number;
}

/** FilesChangedParams is the params of the workspace/filesChanged notification. */
export interface FilesChangedParams {
  /** Paths are absolute, or relative to the root. */
  paths: string[];
}

/** Finding is one review finding (protocol.md Review findings). */
export interface Finding {
  path: string;
  line: number;
  /** Severity is error, warning or info. */
  severity: string;
  message: string;
}

/** FinishedCandidate is a candidate whose subagent ended (completed or cancelled): its change is in its worktree, named Name. */
export interface FinishedCandidate {
  name: string | null;
  kind: string;
  model: string;
  status: TaskStatus;
  report?: string;
  /** Files, Added and Removed describe its change. */
  files: number;
  added: number;
  removed: number;
  validations: ValidationResult[];
  costUsd: number;
  tokens: number;
  /** Dir is its worktree folder. */
  dir: string | null;
  /** Patch is cut at 60000 characters. */
  patch: string;
  patchTruncated?: boolean;
  taskId?: string;
}

/** GitInfo is Project.git. */
export interface GitInfo {
  branch: string;
  head: string;
  /** Dirty counts changed files. */
  dirty: number;
}

/** GraphDep is one entry of graph/file's lists. */
export interface GraphDep {
  path: string;
  kind: EdgeKind;
  symbols: string[];
}

/** GraphEdge links two nodes; From and To index GraphProjectResult.nodes. */
export interface GraphEdge {
  from: number;
  to: number;
  /** Weight counts linked symbols. */
  weight: number;
  kind: EdgeKind;
}

/** GraphFileParams is the params of graph/file. */
export interface GraphFileParams {
  path: string;
}

/** GraphFileResult is the result of graph/file. */
export interface GraphFileResult {
  path: string;
  dependsOn: GraphDep[];
  usedBy: GraphDep[];
  /** ImportCycle lists the paths of the import cycle the file belongs to (empty when none). */
  importCycle: string[];
}

/** GraphHub is a file many others depend on. */
export interface GraphHub {
  path: string;
  dependents: number;
}

/** GraphNode is a file (or, at level module, a folder) of the graph. */
export interface GraphNode {
  id: string;
  language: string;
  symbols: number;
  files: number;
  degree: number;
  inCycle: boolean;
}

/** GraphProjectParams is the params of graph/project. */
export interface GraphProjectParams {
  /** Level is file (default) or module. */
  level?: string;
  /** Focus is a file or directory. */
  focus?: string;
  /** Depth is 1 by default, at most 4. */
  depth?: number;
  /** MaxNodes is 250 by default, at most 600. */
  maxNodes?: number;
  importsOnly?: boolean;
}

/** GraphProjectResult is the result of graph/project. */
export interface GraphProjectResult {
  nodes: GraphNode[];
  edges: GraphEdge[];
  total: number;
  stats: GraphStats;
}

/** GraphReadyStats is the graph of workspace/progress ready: graph/project's stats, but ImportCycles holds at most the 5 largest cycles (largest first), each cut to its first 10 paths; Cycles still counts all of them. */
export interface GraphReadyStats {
  files: number;
  edges: number;
  importEdges: number;
  referenceEdges: number;
  modules: number;
  cycles: number;
  orphans: number;
  hubs: GraphHub[];
  buildMs: number;
  version: string;
  unresolvedImports: number;
  importCycles: string[][];
  /** ImportCycleSizes[i] is the full size of ImportCycles[i] (additive). */
  importCycleSizes: number[];
  /** ImportCyclesTruncated: the list is not graph/project's whole list (additive). */
  importCyclesTruncated?: boolean;
}

/** GraphStats is graph/project's stats. */
export interface GraphStats {
  files: number;
  edges: number;
  importEdges: number;
  referenceEdges: number;
  modules: number;
  cycles: number;
  orphans: number;
  hubs: GraphHub[];
  /** ImportCycles are strongly connected components of the import edges. */
  importCycles: string[][];
  buildMs: number;
  /** Version is the graph engine version. */
  version: string;
  /** UnresolvedImports counts imports no file answers (additive). */
  unresolvedImports: number;
}

/** HookCommand is one hook. */
export interface HookCommand {
  /** Type is "command". */
  type: string;
  command: string;
  /** Timeout is in seconds (default 60). */
  timeout?: number;
}

/** HookEvent reports one hook run (docs/hooks.md). */
export interface HookEvent {
  type: "hook";
  /** Event is PreToolUse, PostToolUse, UserPromptSubmit, Stop or SessionStart. */
  event: string;
  matcher: string;
  command: string;
  /** ExitCode is -1 when the hook was killed or did not start. */
  exitCode: number;
  durationMs: number;
  blocked: boolean;
  /** Output is the hook's stderr, cut at 2000 characters. */
  output: string;
}

/** HookGroup is the hooks of one matcher. */
export interface HookGroup {
  /** Matcher is a regular expression over tool names ("" for all). */
  matcher: string;
  hooks: HookCommand[];
}

/** HooksConfig is Claude Code's hooks settings (addendum §8): hook groups by event (PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart). */
export type HooksConfig = { [key: string]: HookGroup[] };

/** ID is a request id as sent: a string or an integer (protocol.md Framing; 1 and "1" are different ids). */
export type ID = string | number;

/** ImageInput is protocol.md ImageInput. */
export interface ImageInput {
  /** MediaType is image/png, image/jpeg, image/gif or image/webp. */
  mediaType: string;
  /** Data is base64 without a data: prefix, at most 7 000 000 characters. */
  data: string;
}

/** InitializeParams is the params of initialize (protocol.md initialize; dataDir and sandbox: protocol.md "Agent, tools, and extensions"). */
export interface InitializeParams {
  /** ProtocolVersion must be Version; another one fails with -32002. A pointer, so that a missing version is told apart from 0. */
  protocolVersion: number | null;
  /** ClientInfo names the client, such as { "name": "task-x-vscode", "version": "0.1.0" }. */
  clientInfo?: ClientInfo;
  /** DataDir is an absolute path where task files, checkpoints and the saved index are kept (addendum §7); without it nothing is written. */
  dataDir?: string;
  /** Sandbox runs commands in the sandbox (addendum §6); default true. */
  sandbox?: boolean;
}

/** InitializeResult is the result of initialize. DataDir and Sandbox echo the settings in force (additive). */
export interface InitializeResult {
  protocolVersion: number;
  serverInfo: ServerInfo;
  providers: ProviderInfo[];
  /** DataDir is the data folder in force, null without one. */
  dataDir: string | null;
  /** Sandbox reports whether commands run in the sandbox. */
  sandbox: boolean;
}

/** Instruction is one instruction file (AGENTS.md, CLAUDE.md, ...). */
export interface Instruction {
  source: string;
  scope: InstructionScope;
  /** Dir is the folder a directory-scoped file applies under ("" at the root). */
  dir: string;
  content: string;
  /** Truncated: the file was cut at 32 KiB. */
  truncated: boolean;
}

/** InstructionScope is Instruction.scope. */
export type InstructionScope = "workspace" | "directory" | "user";

/** InvalidConfigData is the data of a -32602 error when a ProviderConfig or ChatRequest fails local validation (addendum §10): nothing was sent. */
export interface InvalidConfigData {
  /** Field names the params member that failed, such as "provider.model". */
  field: string;
  /** Kind is invalidConfig or invalidRequest. */
  kind: ProviderErrorKind;
  message: string;
}

/** IterationEvent starts a model turn. */
export interface IterationEvent {
  type: "iteration";
  /** N is the model turn, from 1. */
  n: number;
}

/** KeepResult is the result of edits/keep. */
export interface KeepResult {
  kept: string[];
}

/** LanguageCount is one entry of Project.languages. */
export interface LanguageCount {
  language: string;
  files: number;
}

/** Limits is agent/run's limits. */
export interface Limits {
  maxIterations?: number;
  maxTokensPerCall?: number;
  maxWallClockMs?: number;
  /** ContextWindowTokens sets the model's window; without it the runtime asks the provider. */
  contextWindowTokens?: number;
  /** CompactPercent: compression starts above this share of the window (default 85, 30 to 95). */
  compactPercent?: number;
  /** MaxParallel bounds the plan steps that run at a time (team mode; default 3, at most 8). */
  maxParallel?: number;
}

/** ListModelsResult is the result of provider/listModels: model ids, sorted, at most 500. */
export interface ListModelsResult {
  models: string[];
}

/** MCPConfigureParams is the params of mcp/configure. */
export interface MCPConfigureParams {
  servers: { [key: string]: MCPServerConfig };
  /** WorkspaceTrusted lets the workspace's .mcp.json and .vscode/mcp.json servers start. */
  workspaceTrusted: boolean;
}

/** MCPServerConfig is one MCP server of mcp/configure, in Claude Code's or VS Code's shape; unknown fields are ignored. */
export interface MCPServerConfig {
  /** Type is stdio, http or sse. */
  type?: string;
  command?: string;
  args?: string[];
  env?: { [key: string]: string };
  cwd?: string;
  url?: string;
  headers?: { [key: string]: string };
  timeoutMs?: number;
  disabled?: boolean;
}

/** MCPServerStatus is one server of MCPStatus. */
export interface MCPServerStatus {
  name: string;
  /** Command is the URL for a remote server. */
  command: string;
  disabled: boolean;
  running: boolean;
  tools: string[];
  error: string | null;
  /** Type, State and Workspace are additive. */
  type: string;
  state: string;
  workspace: boolean;
}

/** MCPStatus is the result of mcp/configure and mcp/status. */
export interface MCPStatus {
  servers: MCPServerStatus[];
}

/** MergedEvent reports the merge of one writing step, at the end of a plan in dependency order. */
export interface MergedEvent {
  type: "merged";
  step: string;
  /** Name is the step's worktree. */
  name: string;
  ok: boolean;
  /** Files are the paths the merge changed. */
  files: string[];
  /** Error is null when ok. */
  error: string | null;
}

/** Message is one message of a conversation (protocol.md ChatRequest). */
export interface Message {
  role: Role;
  content: ContentPart[];
}

/** MessageTooLargeData is the data of the -32600 error that ends a session whose line went over the 32 MiB cap (protocol.md Framing). */
export interface MessageTooLargeData {
  maxBytes: number;
}

/** Metrics is summary metrics (protocol.md Costs). */
export interface Metrics {
  /** CostUSD includes the subagents'. */
  costUsd: number;
  /** UnpricedTokens are billed tokens of models with no price. */
  unpricedTokens: number;
  subagents: number;
  subagentCostUsd: number;
  subagentTokens: number;
}

/** ModelCapability is one entry of ModelInfo.capabilities. */
export type ModelCapability = "tools" | "vision" | "thinking" | "embedding";

/** ModelCapabilityFlags is provider/test's capabilities of one model. */
export interface ModelCapabilityFlags {
  embedding: boolean;
  thinking: boolean;
  tools: boolean;
  vision: boolean;
}

/** ModelEvent names the model that answers (ProviderConfig.kind and model). */
export interface ModelEvent {
  type: "model";
  provider: string;
  model: string;
}

/** ModelInfo is one model of provider/models. */
export interface ModelInfo {
  id: string;
  /** ContextWindow is the input window the endpoint reports, else the built-in estimate for Anthropic and OpenAI; absent when unknown. */
  contextWindow?: number;
  /** Capabilities: any of tools, vision, thinking, embedding, in that order; empty when unknown. */
  capabilities: ModelCapability[];
  /** Details gives the size and quantization of an Ollama model, such as "8.2B · Q4_K_M". */
  details?: string;
}

/** ModelSwitchedEvent says a fallback model takes over. */
export interface ModelSwitchedEvent {
  type: "modelSwitched";
  /** From and To are "kind/model". */
  from: string;
  to: string;
  /** Reason is "<kind>: <message>" of the failure. */
  reason: string;
}

/** ModelsResult is the result of provider/models, sorted by id, at most 500. */
export interface ModelsResult {
  models: ModelInfo[];
}

/** PathsParams is the params of edits/keep and edits/revert: the paths to settle, every pending file when absent. */
export interface PathsParams {
  paths?: string[];
}

/** PendingFile is one file of edits/pending. */
export interface PendingFile {
  path: string;
  /** Original is null for a file the agent created. */
  original: string | null;
  /** Current is null for a file the agent deleted. */
  current: string | null;
  added: number;
  removed: number;
  operations: string[];
  /** ChangedOutside: the file changed after the agent's edit (additive). */
  changedOutside: boolean;
  /** Truncated: original or current was cut to keep the reply under the message cap (additive). */
  truncated?: boolean;
}

/** Permission is a tool's permission class (addendum §4); "" for an unknown tool. */
export type Permission = "read" | "edit" | "command" | "destructive" | "mcp" | "interactive";

/** PlanEvent is an update_plan call, before its toolFinished. */
export interface PlanEvent {
  type: "plan";
  /** Explanation is "" when none. */
  explanation: string;
  /** Steps is the whole plan. */
  steps: PlanItem[];
}

/** PlanItem is one step of a plan event. */
export interface PlanItem {
  step: string;
  /** Status is pending, inProgress or completed. */
  status: string;
}

/** PlanStartedEvent starts a run_plan (team mode, docs/team.md). */
export interface PlanStartedEvent {
  type: "planStarted";
  /** CallID is the lead's run_plan call. */
  callId: string;
  maxParallel: number;
  steps: PlanStep[];
}

/** PlanStep is one step of planStarted. */
export interface PlanStep {
  id: string;
  /** Role is the role as the runtime matched it. */
  role: string;
  objective: string;
  /** DependsOn is [] when none. */
  dependsOn: string[];
}

/** Policy is agent/run's policy. */
export interface Policy {
  mode?: PolicyMode;
  /** Allow and Deny hold tool names or rules with an argument pattern, such as "run_command(npm test:*)"; deny always wins. */
  allow?: string[];
  deny?: string[];
  /** AllowAll runs every tool call with no agent/requestApproval; only deny refuses a tool. */
  allowAll?: boolean;
}

/** PolicyMode is Policy.mode (addendum §5). */
export type PolicyMode = "default" | "acceptEdits" | "readOnly";

/** Price is a model's price per million tokens, matched by model id prefix. */
export interface Price {
  model: string;
  inputPerMtok: number;
  outputPerMtok: number;
}

/** ProgressPhase is workspace/progress's phase. */
export type ProgressPhase = "indexing" | "graph" | "ready" | "updated" | "failed";

/** Project is what the runtime detected about the workspace. */
export interface Project {
  name: string;
  /** Kinds come from manifests: go, rust, node, python, ... */
  kinds: string[];
  manifests: string[];
  languages: LanguageCount[];
  /** Commands are what a developer of the project would type, by name (build, test, lint, ...). */
  commands: { [key: string]: string };
  /** Git is null outside a git repository. */
  git: GitInfo | null;
}

/** ProviderCapabilities is what a provider kind supports. */
export interface ProviderCapabilities {
  streaming: boolean;
  tools: boolean;
  vision: boolean;
  thinking: boolean;
  listModels: boolean;
  modelInfo: boolean;
  contextWindow: boolean;
}

/** ProviderConfig is protocol.md ProviderConfig: which model to call and how. Unknown fields are rejected. */
export interface ProviderConfig {
  kind: ProviderKind;
  /** Model is 1 to 256 characters, with no control characters. */
  model: string;
  /** BaseURL is optional, except for openaiCompatible. It must be http or https and hold no credentials (addendum §10 for the path). */
  baseUrl?: string;
  /** APIKey is required for anthropic, openai and openaiCompatible, optional for ollama. Never logged; rejected over plain http unless the host is loopback. */
  apiKey?: string;
  /** TimeoutMs is the wait for headers and for each idle gap in a stream: default 120000, clamped to 1000..600000. */
  timeoutMs?: number;
}

/** ProviderError is protocol.md ProviderError, the data of a -32001 error, and of a -32602 error when a ProviderConfig or ChatRequest fails local validation (addendum §10, with Field set). */
export interface ProviderError {
  kind: ProviderErrorKind;
  message: string;
  /** Status is the provider's HTTP status, when there was one. */
  status?: number;
  /** Retryable is true for rateLimited, overloaded, server, network and timeout. */
  retryable: boolean;
  /** RetryAfterMs is the provider's Retry-After, in milliseconds (additive). */
  retryAfterMs?: number;
  /** Field names the params member that failed local validation. */
  field?: string;
}

/** ProviderErrorKind is ProviderError.kind. */
export type ProviderErrorKind = "invalidConfig" | "invalidRequest" | "auth" | "permissionDenied" | "notFound" | "rateLimited" | "overloaded" | "server" | "network" | "timeout" | "cancelled" | "protocol";

/** ProviderInfo is one entry of initialize.providers and the result of provider/capabilities. */
export interface ProviderInfo {
  kind: ProviderKind;
  capabilities: ProviderCapabilities;
  requiresApiKey: boolean;
}

/** ProviderKind is ProviderConfig.kind. */
export type ProviderKind = "anthropic" | "openai" | "openaiCompatible" | "ollama";

/** ProviderParams is the params of provider/listModels, provider/models, provider/contextWindow and provider/test. */
export interface ProviderParams {
  provider: ProviderConfig;
}

/** ProviderTestResult is the result of provider/test. Its members come in alphabetical order, as the runtime has always sent them. */
export interface ProviderTestResult {
  /** Capabilities of the configured model (addendum §10). */
  capabilities: ModelCapabilityFlags;
  latencyMs: number;
  /** ModelAvailable is null when the endpoint cannot list models. */
  modelAvailable: boolean | null;
  models: string[];
}

/** Question is one question of agent/askUser. */
export interface Question {
  id: string;
  text: string;
  kind: QuestionKind;
  /** Options are 2 to 8 distinct labels. */
  options: string[];
}

/** QuestionKind is Question.kind. */
export type QuestionKind = "radio" | "checkbox";

/** RefineParams is the params of prompt/refine. */
export interface RefineParams {
  /** Prompt is 1 to 100 000 characters. */
  prompt: string;
  provider?: ProviderConfig;
  routes?: Route[];
  /** FocusPaths come first among the repository excerpts. */
  focusPaths?: string[];
}

/** RefineResult is the result of prompt/refine. */
export interface RefineResult {
  text: string;
  kind: TaskKind;
  model: string;
  routed: boolean;
  /** Usage is absent when the provider reported none. */
  usage?: Usage;
}

/** ReplayResult is the result of agent/replay (docs/tasklog.md). */
export interface ReplayResult {
  taskId: string;
  /** Events counts the events replayed (the replayed marker not counted). */
  events: number;
  /** Status is the saved task's status when the replay read it. */
  status: TaskStatus;
  /** Running: this runtime runs the task; its live events follow. */
  running: boolean;
}

/** ReplayedEvent is the last event of agent/replay (docs/tasklog.md). */
export interface ReplayedEvent {
  type: "replayed";
  /** Events counts the events replayed. */
  events: number;
  /** Running: this runtime runs the task; its live events follow. */
  running: boolean;
  status: TaskStatus;
}

/** RequestApprovalParams is the params of agent/requestApproval (runtime → client). Its members come in alphabetical order, as the runtime has always sent them. */
export interface RequestApprovalParams {
  callId: string;
  /** Input is the call's arguments. */
  input: unknown;
  permission: Permission;
  /** Preview shows the change (a unified diff) or the command. */
  preview: string;
  taskId: string;
  tool: string;
}

/** RequestApprovalResult is the client's answer to agent/requestApproval. No answer, or an error, counts as deny. */
export interface RequestApprovalResult {
  decision: Decision;
  /** Message (optional, with deny only) is the user's reason for the denial: the model reads it in the denied call's result, in the same turn (docs/events.md). Ignored with allow and allowSession; cut at MaxDenyMessage bytes. */
  message?: string;
}

/** Retrieval is the repository excerpts for a query (addendum §3). */
export interface Retrieval {
  terms: string[];
  snippets: Snippet[];
  filesConsidered: number;
  budgetTokens: number;
  usedTokens: number;
}

/** RetrieveParams is the params of context/retrieve. */
export interface RetrieveParams {
  query: string;
  /** BudgetTokens defaults to 8000. */
  budgetTokens?: number;
  focusPaths?: string[];
}

/** RetrieveResult is the result of context/retrieve. */
export interface RetrieveResult {
  retrieval: Retrieval;
  instructions: Instruction[];
}

/** RetryEvent announces a retry of a failed model call. */
export interface RetryEvent {
  type: "retry";
  /** Attempt is the retry about to run, from 1. */
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  /** Kind is the ProviderError kind of the failure. */
  kind: ProviderErrorKind;
  /** Status is the HTTP status, 0 when none. */
  status: number;
  message: string;
}

/** RevertResult is the result of edits/revert, in alphabetical order as the runtime has always sent it. A file that changed after the agent's edit is never reverted: it is a conflict. */
export interface RevertResult {
  conflicts: string[];
  reverted: string[];
}

/** Role is Message.role. */
export type Role = "user" | "assistant";

/** RoleProvider sets the model of the subagents of one role. */
export interface RoleProvider {
  /** Role is research, implementation, testing, review or documentation. */
  role: string;
  provider: ProviderConfig;
}

/** Route sends the tasks of some kinds to a provider. */
export interface Route {
  kinds: TaskKind[];
  provider: ProviderConfig;
}

/** Selection is EditorContext.selection. */
export interface Selection {
  path: string;
  startLine: number;
  endLine: number;
  text: string;
}

/** ServerInfo is initialize.serverInfo. */
export interface ServerInfo {
  name: string;
  version: string;
}

/** Skill is one skill found (addendum §8). */
export interface Skill {
  name: string;
  description: string;
  source: string;
  path: string;
  triggers: string[];
  paths: string[];
  params: SkillParam[];
}

/** SkillError is a skill file that did not load. */
export interface SkillError {
  path: string;
  message: string;
}

/** SkillParam is one {{param}} of a skill. */
export interface SkillParam {
  name: string;
  description: string;
  default: string;
}

/** SkillsListResult is the result of skills/list, in alphabetical order as the runtime has always sent it. */
export interface SkillsListResult {
  /** Errors are the skill files that did not load. */
  errors: SkillError[];
  skills: Skill[];
}

/** SkillsResolveParams is the params of skills/resolve. */
export interface SkillsResolveParams {
  prompt: string;
  paths?: string[];
}

/** SkillsResolveResult is the result of skills/resolve. */
export interface SkillsResolveResult {
  active: ActiveSkill[];
}

/** SkippedCheck is a check considered and not run. */
export interface SkippedCheck {
  name: string;
  reason: string;
}

/** SkippedStats counts the files listed but not parsed, by reason. */
export interface SkippedStats {
  binary: number;
  tooLarge: number;
  excluded: number;
  /** Unreadable, Vanished, SymlinkLoop, OutsideRoot and InvalidName are additive. */
  unreadable: number;
  vanished: number;
  symlinkLoop: number;
  outsideRoot: number;
  invalidName: number;
}

/** Snippet is one excerpt of a retrieval. */
export interface Snippet {
  path: string;
  startLine: number;
  endLine: number;
  text: string;
  score: number;
  /** Reason says in words why the snippet was picked. */
  reason: string;
}

/** StartedEvent is always the first event of a task. */
export interface StartedEvent {
  type: "started";
  taskId: string;
  chatMode: ChatMode;
  model: string;
}

/** SteerParams is the params of agent/steer. */
export interface SteerParams {
  taskId: string;
  /** Text is 1 to 100 000 characters after trimming. */
  text: string;
}

/** SteeredEvent reports an agent/steer message as it joined (trimmed). */
export interface SteeredEvent {
  type: "steered";
  text: string;
}

/** StepSkippedEvent says a plan step did not run. */
export interface StepSkippedEvent {
  type: "stepSkipped";
  step: string;
  /** Reason says which dependency did not complete, or that the plan was cancelled. */
  reason: string;
}

/** StopReason is why the provider ended a response. */
export type StopReason = "endTurn" | "maxTokens" | "toolUse" | "stopSequence" | "contentFilter" | "unknown";

/** SubagentEvent carries one event of a subagent's own task. */
export interface SubagentEvent {
  type: "subagent";
  name: string;
  taskId: string;
  event: AgentEvent;
}

/** SubagentFinishedEvent ends a subagent. */
export interface SubagentFinishedEvent {
  type: "subagentFinished";
  name: string;
  taskId: string;
  role: string;
  status: TaskStatus;
  error: string | null;
  costUsd: number;
  unpricedTokens: number;
  /** Tokens is input plus output. */
  tokens: number;
  /** Files, Added and Removed describe its own committed change. */
  files: number;
  added: number;
  removed: number;
  /** Worktree is the folder, null for read-only roles. */
  worktree: string | null;
  /** Findings of a review subagent (additive). */
  findings?: Finding[];
}

/** SubagentStartedEvent starts a subagent (team mode and best-of). */
export interface SubagentStartedEvent {
  type: "subagentStarted";
  /** Name is the worktree name; read-only roles get one too. */
  name: string;
  /** TaskID is the subagent's own task id. */
  taskId: string;
  role: string;
  objective: string;
  kind: string;
  model: string;
  /** Dir is the worktree folder, null for research and review. */
  dir: string | null;
  /** Step is the plan step id, null outside a plan. */
  step: string | null;
  /** Candidate is the index in agent/bestOf's providers of the provider this subagent runs, absent outside best of N (additive): two providers of one kind and model are told apart by it. */
  candidate?: number;
}

/** TaskEndReason is AgentSummary.endReason. */
export type TaskEndReason = "maxIterations" | "maxWallClock" | "promptRefused";

/** TaskIDParams is the params of agent/cancelSubagent, agent/task, agent/deleteTask and agent/replay. */
export interface TaskIDParams {
  taskId: string;
}

/** TaskInfo is one entry of agent/tasks (addendum §11). */
export interface TaskInfo {
  taskId: string;
  title: string;
  status: TaskStatus;
  chatMode: ChatMode;
  model: string;
  createdAt: string;
  updatedAt: string;
  /** Root is the workspace folder the task ran in (additive). */
  root?: string;
}

/** TaskKind is a kind of task (addendum §10). */
export type TaskKind = "question" | "codeModification" | "bugFix" | "refactoring" | "testing" | "documentation" | "review" | "planning";

/** TaskResult is the result of agent/task. */
export interface TaskResult {
  /** Messages is the task's conversation (bounded under the message cap). */
  messages: Message[];
  status: TaskStatus;
  /** Summary is null for a task saved before it ended. */
  summary: AgentSummary | null;
  title: string;
}

/** TaskStatus is a task's status. */
export type TaskStatus = "running" | "completed" | "failed" | "cancelled";

/** TasksResult is the result of agent/tasks, newest first. */
export interface TasksResult {
  tasks: TaskInfo[];
}

/** TextDeltaEvent is a piece of the answer as it streams. */
export interface TextDeltaEvent {
  type: "textDelta";
  text: string;
}

/** ThinkingDeltaEvent is a piece of the model's thinking (additive, addendum §10); never part of text. */
export interface ThinkingDeltaEvent {
  type: "thinkingDelta";
  text: string;
}

/** ToolCall is a complete tool call of the model: its arguments are parsed. */
export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
}

/** ToolErrorData is the data of a -32005 tools/call error. */
export interface ToolErrorData {
  kind: string;
  message: string;
}

/** ToolFinishedEvent ends a tool call. */
export interface ToolFinishedEvent {
  type: "toolFinished";
  callId: string;
  tool: string;
  ok: boolean;
  /** Result is the tool's structured data, or its text; null when not ok. */
  result: unknown;
  /** Error is the message the model saw, null when ok. */
  error: string | null;
  durationMs: number;
  /** Background is true on both events of a background command: the first, at once, with the result { background, command, message }, the second with the output when the command ends. */
  background?: boolean;
}

/** ToolOutputEvent is live output of a running run_command call or validation check (callId "validation:<name>"). */
export interface ToolOutputEvent {
  type: "toolOutput";
  callId: string;
  /** Stream is stdout or stderr. */
  stream: string;
  text: string;
}

/** ToolSpec is one tool of tools/list (addendum §4). */
export interface ToolSpec {
  /** Name is snake_case; MCP tools are named mcp__<server>__<tool>. */
  name: string;
  description: string;
  /** InputSchema is the JSON Schema of the tool's input. */
  inputSchema: unknown;
  permission: Permission;
}

/** ToolStartedEvent starts a tool call. */
export interface ToolStartedEvent {
  type: "toolStarted";
  callId: string;
  tool: string;
  /** Input is the call's arguments. */
  input: unknown;
  permission: Permission;
}

/** ToolsCallParams is the params of tools/call. */
export interface ToolsCallParams {
  name: string;
  /** Input is the tool's input object ({} when absent). */
  input?: unknown;
}

/** ToolsCallResult is the result of tools/call (docs/tools.md), in alphabetical order as the runtime has always sent it. A tool failure is error -32005 with ToolErrorData. */
export interface ToolsCallResult {
  /** Changes are the files the call changed. */
  changes: FileChange[];
  /** Content is the text the model would see. */
  content: string;
  /** Data is the tool's structured result, null when it has none. */
  data: unknown;
}

/** ToolsListResult is the result of tools/list. */
export interface ToolsListResult {
  tools: ToolSpec[];
}

/** UndoParams is the params of edits/undo. */
export interface UndoParams {
  /** Operation is an operation id of edits/list. */
  operation: string;
}

/** UndoResult is the result of edits/undo, in alphabetical order as the runtime has always sent it. */
export interface UndoResult {
  conflicts: string[];
  restored: string[];
}

/** Usage is token counts the provider reported. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** UsageEvent gives the token counts of a response whose provider reported them. */
export interface UsageEvent {
  type: "usage";
  /** InputTokens and OutputTokens are this call's. */
  inputTokens: number;
  outputTokens: number;
  /** TotalInputTokens and TotalOutputTokens are the task's so far. */
  totalInputTokens: number;
  totalOutputTokens: number;
  /** CostUSD is the task's cost so far (0 for local or unpriced models). */
  costUsd: number;
}

/** UserMessageEvent shows, only in agent/replay, the prompt that started a run. */
export interface UserMessageEvent {
  type: "userMessage";
  /** Images counts the images attached. */
  images: number;
  text: string;
}

/** ValidationCheck is one command to run, named. */
export interface ValidationCheck {
  name: string;
  command: string;
}

/** ValidationConfig is agent/run's validation (addendum §12). */
export interface ValidationConfig {
  /** Enabled defaults to true. */
  enabled?: boolean;
  /** Checks default to the project's lint, build and test commands. */
  checks?: ValidationCheck[];
  /** FixRounds defaults to 1 (0 to 3). */
  fixRounds?: number;
  /** TimeoutMs is per check, default 300000. */
  timeoutMs?: number;
}

/** ValidationFinishedEvent says a check ended; a cancelled check gets one too (passed false, exitCode -1). */
export interface ValidationFinishedEvent {
  type: "validationFinished";
  name: string;
  command: string;
  passed: boolean;
  exitCode: number;
  timedOut: boolean;
  durationMs: number;
}

/** ValidationResult is one check of summary validations. */
export interface ValidationResult {
  name: string;
  command: string;
  passed: boolean;
  /** ExitCode is -1 when killed. */
  exitCode: number;
  timedOut: boolean;
  durationMs: number;
  /** Output is at most 4000 characters, head and tail kept. */
  output: string;
}

/** ValidationStartedEvent says a check starts (addendum §12). */
export interface ValidationStartedEvent {
  type: "validationStarted";
  name: string;
  command: string;
}

/** VersionMismatchData is the data of a -32002 error. */
export interface VersionMismatchData {
  /** ServerProtocolVersion is the protocolVersion this runtime speaks. */
  serverProtocolVersion: number;
}

/** WarningEvent can come anywhere. */
export interface WarningEvent {
  type: "warning";
  message: string;
  /** Kind names a warning a client may act on (additive; absent for the others). */
  kind?: WarningKind;
}

/** WarningKind is WarningEvent.kind. */
export type WarningKind = "outputCut" | "contentFilter";

/** WorkspaceOpenParams is the params of workspace/open. */
export interface WorkspaceOpenParams {
  /** Root is the absolute path of the folder to open. */
  root: string;
  /** Exclude holds more globs to leave out (** syntax). */
  exclude?: string[];
  /** UserInstructions is accepted from older clients and ignored. */
  userInstructions?: unknown;
  /** UserPromptsDir is accepted from older clients and ignored. */
  userPromptsDir?: unknown;
}

/** WorkspaceProgressParams is the params of workspace/progress: which members are present depends on the phase. Its members come in alphabetical order, as the runtime has always sent them. */
export interface WorkspaceProgressParams {
  /** ElapsedMs counts from the request's start (indexing, graph, ready). */
  elapsedMs?: number;
  /** Error says why the open failed (failed). */
  error?: string;
  /** Files are the files seen so far (indexing, graph). */
  files?: number;
  /** Graph is the graph's stats (ready). */
  graph?: GraphReadyStats;
  /** Parsed counts the files parsed so far (indexing). */
  parsed?: number;
  phase: ProgressPhase;
  /** Stage refines a phase (additive): "loading" while indexing is the revalidation of a saved index, "retrieval" while graph is the build of the retrieval index. */
  stage?: string;
  /** Stats is as in the workspace summary (ready, updated). */
  stats?: WorkspaceStats;
  /** Total is the number of files to check, when known (indexing). */
  total?: number;
}

/** WorkspaceStats is the workspace summary's stats. */
export interface WorkspaceStats {
  files: number;
  indexedFiles: number;
  skipped: SkippedStats;
  bytes: number;
  symbols: number;
  parseErrors: number;
  elapsedMs: number;
  /** Truncated: the cap on files (default 200 000) was reached. */
  truncated: boolean;
}

/** WorkspaceSummary is the result of workspace/open, workspace/refresh and context/inspect (addendum §2). */
export interface WorkspaceSummary {
  root: string;
  project: Project;
  stats: WorkspaceStats;
  instructions: Instruction[];
  /** Excludes are the built-in and requested excludes in force. */
  excludes: string[];
}

/** WorktreeApplyResult is the result of worktrees/apply: the merge goes through the edit log, so it is pending review and can be undone. */
export interface WorktreeApplyResult {
  applied: boolean;
  /** Files counts the files changed. */
  files: number;
  changed: string[];
  /** Operation is the edit-log operation id, null when nothing changed. */
  operation: string | null;
  conflicts?: string[];
  error?: string;
}

/** WorktreeDiscardResult is the result of worktrees/discard. */
export interface WorktreeDiscardResult {
  discarded: boolean;
}

/** WorktreeInfo is one task-x worktree. */
export interface WorktreeInfo {
  name: string;
  dir: string;
  branch: string;
  base: string;
  head: string;
  role?: string;
  taskId?: string;
  createdAt: string;
}

/** WorktreeNameParams is the params of worktrees/apply and worktrees/discard. */
export interface WorktreeNameParams {
  name: string;
}

/** WorktreesListResult is the result of worktrees/list. */
export interface WorktreesListResult {
  worktrees: WorktreeInfo[];
}

/** Requests the client sends; the runtime answers with result. */
export interface ClientRequests {
  "initialize": { params: InitializeParams; result: InitializeResult };
  "shutdown": { params: void; result: null };
  "provider/capabilities": { params: void; result: ProviderInfo[] };
  "provider/listModels": { params: ProviderParams; result: ListModelsResult };
  "provider/models": { params: ProviderParams; result: ModelsResult };
  "provider/contextWindow": { params: ProviderParams; result: ContextWindowResult };
  "provider/test": { params: ProviderParams; result: ProviderTestResult };
  "chat/send": { params: ChatSendParams; result: ChatResult };
  "workspace/open": { params: WorkspaceOpenParams; result: WorkspaceSummary };
  "workspace/refresh": { params: void; result: WorkspaceSummary };
  "context/inspect": { params: void; result: WorkspaceSummary };
  "context/retrieve": { params: RetrieveParams; result: RetrieveResult };
  "prompt/refine": { params: RefineParams; result: RefineResult };
  "graph/project": { params: GraphProjectParams; result: GraphProjectResult };
  "graph/file": { params: GraphFileParams; result: GraphFileResult };
  "agent/run": { params: AgentRunParams; result: AgentSummary };
  "claude/run": { params: ClaudeRunParams; result: AgentSummary };
  "agent/steer": { params: SteerParams; result: boolean };
  "agent/cancelTool": { params: CancelToolParams; result: boolean };
  "agent/cancelSubagent": { params: TaskIDParams; result: boolean };
  "agent/tasks": { params: void; result: TasksResult };
  "agent/task": { params: TaskIDParams; result: TaskResult };
  "agent/deleteTask": { params: TaskIDParams; result: boolean };
  "agent/replay": { params: TaskIDParams; result: ReplayResult };
  "agent/bestOf": { params: BestOfParams; result: BestOfResult };
  "worktrees/apply": { params: WorktreeNameParams; result: WorktreeApplyResult };
  "worktrees/discard": { params: WorktreeNameParams; result: WorktreeDiscardResult };
  "worktrees/list": { params: void; result: WorktreesListResult };
  "tools/list": { params: void; result: ToolsListResult };
  "tools/call": { params: ToolsCallParams; result: ToolsCallResult };
  "edits/list": { params: void; result: EditsListResult };
  "edits/pending": { params: void; result: EditsPendingResult };
  "edits/keep": { params: PathsParams; result: KeepResult };
  "edits/revert": { params: PathsParams; result: RevertResult };
  "edits/undo": { params: UndoParams; result: UndoResult };
  "config/hooks": { params: ConfigHooksParams; result: ConfigHooksResult };
  "mcp/configure": { params: MCPConfigureParams; result: MCPStatus };
  "mcp/status": { params: void; result: MCPStatus };
  "skills/list": { params: void; result: SkillsListResult };
  "skills/resolve": { params: SkillsResolveParams; result: SkillsResolveResult };
}

/** Notifications the client sends. */
export interface ClientNotifications {
  "exit": { params: void };
  "$/cancelRequest": { params: CancelParams };
  "workspace/filesChanged": { params: FilesChangedParams };
}

/** Requests the runtime sends; the client answers with result. */
export interface ServerRequests {
  "agent/requestApproval": { params: RequestApprovalParams; result: RequestApprovalResult };
  "agent/askUser": { params: AskUserParams; result: AskUserResult };
}

/** Notifications the runtime sends. */
export interface ServerNotifications {
  "chat/event": { params: ChatEventParams };
  "workspace/progress": { params: WorkspaceProgressParams };
  "agent/event": { params: AgentEventParams };
}

/** The name of a method of the protocol. */
export type MethodName = keyof ClientRequests | keyof ClientNotifications | keyof ServerRequests | keyof ServerNotifications;

// The messages between the extension host and the chat webview, both ways.
//
// The host talks to task-x-runtime (protocol.md); the webview never does. The
// host forwards what the user must see (agent/event notifications, approval
// and askUser requests, the models list) and the webview posts what the user
// did. Protocol types come from ./protocol (the generated schema), never
// copied here.
//
// Trust: the webview shows hostile text (model output, tool output, file
// contents), so the host must treat every WebviewToHost message as untrusted:
// parse it with parseWebviewMessage, and accept an approval or askUser answer
// only for an id it issued and still holds (issue 35, Security).
//
// Evolving: add fields as optional and new message types freely; both sides
// ignore message types they do not know. docs/webview.md describes the flow.

import type {
  AgentEvent,
  AgentSummary,
  AskUserParams,
  ChatMode,
  ImageInput,
  ModelInfo,
  RequestApprovalParams,
} from "./protocol";

export type { AgentEvent, AgentSummary, AskUserParams, ChatMode, ImageInput, ModelInfo, RequestApprovalParams };

/** Every ChatMode (protocol.md agent/run chatMode), in the order the switcher shows them. */
export const CHAT_MODES: readonly ChatMode[] = ["ask", "plan", "agent", "team", "claudeCode"];

/**
 * The user's answer to an approval. The host maps it to the protocol's
 * decision: allowOnce → "allow", allowTask → "allowSession", deny → "deny".
 */
export type ApprovalDecision = "allowOnce" | "allowTask" | "deny";
export const APPROVAL_DECISIONS: readonly ApprovalDecision[] = ["allowOnce", "allowTask", "deny"];

// ---------------------------------------------------------------------------
// Host → webview

/** Runtime process state, as the host sees it. */
export type RuntimeStatus =
  | { state: "starting" }
  | { state: "ready"; version?: string }
  | { state: "restarting"; reason: string }
  | { state: "failed"; reason: string };

/** The editor selection the user can mention as @selection. */
export interface EditorSelection {
  /** Workspace-relative path with "/". */
  path: string;
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
}

/** What the editor-context switch would attach, for its label. */
export interface EditorContextInfo {
  activeFile: string | null;
  selection: EditorSelection | null;
  openFiles: number;
  diagnostics: number;
}

/**
 * The whole UI state the host owns, sent on "ready" and whenever it changes.
 * Every field is optional in an update: a missing field keeps its value.
 */
export interface ChatStateSnapshot {
  runtime?: RuntimeStatus;
  /** The task shown in the view, null for a new chat. */
  taskId?: string | null;
  /** Title of that task (agent/tasks), null for a new chat. */
  title?: string | null;
  /** True while an agent/run (or claude/run) of taskId is in flight. */
  running?: boolean;
  mode?: ChatMode;
  /** Selected model id, null when no provider is set up. */
  model?: string | null;
  /** Name of the configured provider shown next to the model, null when none. */
  provider?: string | null;
  /** Whether the editor context is attached to the next prompt. */
  includeEditorContext?: boolean;
  editor?: EditorContextInfo;
  /** Whether the selected model accepts images (capabilities has "vision"). */
  imagesSupported?: boolean;
  /** Whether the Claude Code CLI was found (the "claudeCode" mode runs tasks with it, through claude/run). */
  claudeCode?: boolean;
  /** The skills (skills/list) offered as "/name" completion at the start of a prompt. */
  skills?: SkillInfo[];
}

export type HostToWebview =
  /** State update (see ChatStateSnapshot). */
  | { type: "state"; state: ChatStateSnapshot }
  /** Live agent/event notifications, in order. The host may batch several in one message. */
  | { type: "events"; taskId: string; events: AgentEvent[] }
  /**
   * agent/replay: clear the transcript, then render `events` (in one or more
   * batches with the same replayId; `last: true` on the final batch). Live
   * "events" messages for the task follow the last batch.
   */
  | { type: "replay"; replayId: number; taskId: string; title?: string | null; events: AgentEvent[]; last: boolean }
  /** Start a fresh, empty chat (New Task). */
  | { type: "clear" }
  /** The prompt the host sent with agent/run, shown as the user's turn. */
  | { type: "userPrompt"; taskId: string; text: string; images: number; mentions: string[] }
  /** A best-of-N run's providers, by the names the user gave them, in the order asked: its candidate cards are named after them. */
  | { type: "bestOfProviders"; taskId: string; providers: string[] }
  /** The agent/run (or claude/run) result: the summary with validations. */
  | { type: "runResult"; taskId: string; summary: AgentSummary }
  /** agent/run failed as a request (JSON-RPC error), not as a task. */
  | { type: "runFailed"; taskId: string | null; message: string; code?: number }
  /**
   * agent/requestApproval. `id` is issued by the host and must come back in
   * the answer; `params.preview` is the diff or command to show.
   */
  | { type: "approval"; id: string; params: RequestApprovalParams }
  /** agent/askUser. `id` is issued by the host. */
  | { type: "askUser"; id: string; params: AskUserParams }
  /**
   * The request with this id is over (answered elsewhere, withdrawn, timed out).
   * `decision` (and the deny's `message`) when the user answered it outside the page,
   * from the diff editor's title bar.
   */
  | { type: "requestClosed"; id: string; decision?: "allow" | "deny"; message?: string }
  /** provider/models for the configured provider. */
  | { type: "models"; models: ModelInfo[]; selected: string | null }
  /** Answer to WebviewToHost "mentionQuery". */
  | { type: "mentionResults"; requestId: number; items: MentionCandidate[] }
  /** Insert a mention into the input (for example from "Add selection to chat"). */
  | { type: "insertMention"; mention: Mention }
  /** Put the focus in the input. */
  | { type: "focusInput" }
  /** Answer to "refine": the rewritten prompt (null when it failed) and a note in plain words. */
  | { type: "refined"; requestId: number; text: string | null; note: string }
  /** A problem to show in the chat in plain words (runtime crash, bad settings, refused request). */
  | { type: "error"; message: string; detail?: string }
  /** A notice in plain words (runtime restarted, workspace picked from several). */
  | { type: "notice"; message: string };

/** A skill as the "/" completion shows it. */
export interface SkillInfo {
  name: string;
  description: string;
}

// ---------------------------------------------------------------------------
// Mentions

/** A completion candidate for "@". */
export interface MentionCandidate {
  kind: "file" | "folder";
  /** Workspace-relative path with "/" (a folder ends without "/"). */
  path: string;
}

/** A mention the user put in the prompt. */
export type Mention =
  | { kind: "file"; path: string }
  | { kind: "folder"; path: string }
  | { kind: "selection"; path: string; startLine: number; endLine: number };

// ---------------------------------------------------------------------------
// Webview → host

export type WebviewToHost =
  /** The page is loaded and listening; the host answers with "state", "models" and the transcript. */
  | { type: "ready" }
  /**
   * Send a prompt. With taskId null the host starts a new task; otherwise it
   * continues that task (agent/run with taskId). `text` holds large pastes
   * expanded. The host builds EditorContext from `mentions` and, when
   * `includeEditorContext`, from the editor.
   */
  | {
      type: "send";
      taskId: string | null;
      text: string;
      mode: ChatMode;
      model: string | null;
      mentions: Mention[];
      images: ImageInput[];
      includeEditorContext: boolean;
    }
  /** agent/steer while the task runs. */
  | { type: "steer"; taskId: string; text: string }
  /** Stop the running task ($/cancelRequest of its agent/run). */
  | { type: "stop"; taskId: string }
  /** agent/cancelTool: stop one tool call (taskId is the subagent's for a subagent's call). */
  | { type: "cancelTool"; taskId: string; callId: string }
  /** agent/cancelSubagent. */
  | { type: "cancelSubagent"; taskId: string }
  /** prompt/refine of the text in the input; the host answers "refined" with the same requestId. */
  | { type: "refine"; requestId: number; text: string }
  /** Open a check's output (a validation of the task's summary) in an editor. */
  | { type: "openCheckOutput"; taskId: string; name: string }
  /** Open a subagent's worktree folder (the host opens only a folder a subagentStarted/Finished event named). */
  | { type: "openWorktree"; path: string }
  /**
   * The answer to "approval" `id`. `message` (deny only, optional) is the
   * user's reason; the host sends it in the approval's answer (RequestApprovalResult.message), so the model reads it with the denied call's result in the same turn.
   */
  | { type: "approvalAnswer"; id: string; decision: ApprovalDecision; message?: string }
  /**
   * What approval `id`'s reason box holds, as it is typed: a Deny from the diff
   * editor's title bar (outside the page) sends it with the answer too.
   */
  | { type: "approvalReason"; id: string; message: string }
  /** Open the preview of approval `id` in VS Code's diff editor. */
  | { type: "openApprovalDiff"; id: string }
  /** Open the pending change of one file in the diff editor. */
  | { type: "openFileDiff"; path: string }
  /** The answer to "askUser" `id`: question id → chosen options; null when dismissed. */
  | { type: "askUserAnswer"; id: string; answers: Record<string, string[]> | null }
  /** The user clicked a link; the host asks VS Code to open it (after its own checks). */
  | { type: "openLink"; url: string }
  /** Open a workspace file, at a line when given (1-based). */
  | { type: "openFile"; path: string; line?: number }
  /** "@" completion; the host answers "mentionResults" with the same requestId. */
  | { type: "mentionQuery"; requestId: number; query: string }
  | { type: "setMode"; mode: ChatMode }
  | { type: "setModel"; model: string }
  | { type: "setIncludeEditorContext"; enabled: boolean }
  /** Start a new chat (the host answers "clear" and a state update). */
  | { type: "newTask" };

// ---------------------------------------------------------------------------
// Validation of webview messages, for the host. The page is hostile input:
// everything is checked, unknown fields are dropped.

const MAX_TEXT = 2_000_000;
const MAX_ID = 200;
/** The reason box holds at most 2 000 characters (its maxlength); the runtime keeps 8 KiB. */
const MAX_REASON = 8192;
const MAX_PATH = 4096;
const MAX_MENTIONS = 10;
const MAX_IMAGES = 8;
const MAX_IMAGE_DATA = 7_000_000;
const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown, max: number): v is string => typeof v === "string" && v.length <= max;
const line = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 1;

function mention(v: unknown): Mention | undefined {
  if (!isObj(v) || !str(v.path, MAX_PATH) || v.path === "") return undefined;
  if (v.kind === "file" || v.kind === "folder") return { kind: v.kind, path: v.path };
  if (v.kind === "selection" && line(v.startLine) && line(v.endLine) && v.endLine >= v.startLine) {
    return { kind: "selection", path: v.path, startLine: v.startLine, endLine: v.endLine };
  }
  return undefined;
}

function image(v: unknown): ImageInput | undefined {
  if (!isObj(v) || !str(v.mediaType, 20) || !IMAGE_TYPES.includes(v.mediaType)) return undefined;
  if (!str(v.data, MAX_IMAGE_DATA) || !/^[A-Za-z0-9+/]*={0,2}$/.test(v.data)) return undefined;
  return { mediaType: v.mediaType, data: v.data };
}

function list<T>(v: unknown, max: number, each: (x: unknown) => T | undefined): T[] | undefined {
  if (!Array.isArray(v) || v.length > max) return undefined;
  const out: T[] = [];
  for (const x of v) {
    const t = each(x);
    if (t === undefined) return undefined;
    out.push(t);
  }
  return out;
}

function answers(v: unknown): Record<string, string[]> | null | undefined {
  if (v === null) return null;
  if (!isObj(v)) return undefined;
  const out: Record<string, string[]> = {};
  const keys = Object.keys(v);
  if (keys.length > 16) return undefined;
  for (const k of keys) {
    if (k.length > MAX_ID) return undefined;
    const opts = list(v[k], 16, (o) => (str(o, 10_000) ? o : undefined));
    if (!opts) return undefined;
    out[k] = opts;
  }
  return out;
}

/**
 * Checks a message from the webview and returns it with only known fields, or
 * undefined when it is not a well-formed WebviewToHost. Passing this check
 * does not make a message trusted: the host still checks approval ids.
 */
export function parseWebviewMessage(m: unknown): WebviewToHost | undefined {
  if (!isObj(m) || typeof m.type !== "string") return undefined;
  switch (m.type) {
    case "ready":
    case "newTask":
      return { type: m.type };
    case "send": {
      const mentions = list(m.mentions, MAX_MENTIONS, mention);
      const images = list(m.images, MAX_IMAGES, image);
      if (
        !(m.taskId === null || str(m.taskId, MAX_ID)) ||
        !str(m.text, MAX_TEXT) ||
        !CHAT_MODES.includes(m.mode as ChatMode) ||
        !(m.model === null || str(m.model, 256)) ||
        !mentions ||
        !images ||
        typeof m.includeEditorContext !== "boolean"
      ) {
        return undefined;
      }
      return {
        type: "send",
        taskId: m.taskId,
        text: m.text,
        mode: m.mode as ChatMode,
        model: m.model,
        mentions,
        images,
        includeEditorContext: m.includeEditorContext,
      };
    }
    case "steer":
      return str(m.taskId, MAX_ID) && str(m.text, MAX_TEXT) ? { type: "steer", taskId: m.taskId, text: m.text } : undefined;
    case "stop":
    case "cancelSubagent":
      return str(m.taskId, MAX_ID) ? { type: m.type, taskId: m.taskId } : undefined;
    case "cancelTool":
      return str(m.taskId, MAX_ID) && str(m.callId, MAX_ID) ? { type: "cancelTool", taskId: m.taskId, callId: m.callId } : undefined;
    case "approvalAnswer": {
      if (!str(m.id, MAX_ID) || !APPROVAL_DECISIONS.includes(m.decision as ApprovalDecision)) return undefined;
      if (m.message !== undefined && !str(m.message, 100_000)) return undefined;
      const out: WebviewToHost = { type: "approvalAnswer", id: m.id, decision: m.decision as ApprovalDecision };
      if (typeof m.message === "string" && m.message.trim() !== "" && m.decision === "deny") out.message = m.message;
      return out;
    }
    case "refine":
      return Number.isSafeInteger(m.requestId) && str(m.text, MAX_TEXT) && m.text.trim() !== "" ? { type: "refine", requestId: m.requestId as number, text: m.text } : undefined;
    case "openCheckOutput":
      return str(m.taskId, MAX_ID) && str(m.name, 200) && m.name !== "" ? { type: "openCheckOutput", taskId: m.taskId, name: m.name } : undefined;
    case "openWorktree":
      return str(m.path, MAX_PATH) && m.path !== "" ? { type: "openWorktree", path: m.path } : undefined;
    case "openApprovalDiff":
      return str(m.id, MAX_ID) ? { type: "openApprovalDiff", id: m.id } : undefined;
    case "approvalReason":
      return str(m.id, MAX_ID) && str(m.message, MAX_REASON) ? { type: "approvalReason", id: m.id, message: m.message } : undefined;
    case "openFileDiff":
      return str(m.path, MAX_PATH) && m.path !== "" ? { type: "openFileDiff", path: m.path } : undefined;
    case "askUserAnswer": {
      const a = answers(m.answers);
      return str(m.id, MAX_ID) && a !== undefined ? { type: "askUserAnswer", id: m.id, answers: a } : undefined;
    }
    case "openLink":
      return str(m.url, 8192) ? { type: "openLink", url: m.url } : undefined;
    case "openFile": {
      if (!str(m.path, MAX_PATH) || m.path === "") return undefined;
      if (m.line !== undefined && !line(m.line)) return undefined;
      return m.line === undefined ? { type: "openFile", path: m.path } : { type: "openFile", path: m.path, line: m.line as number };
    }
    case "mentionQuery":
      return Number.isSafeInteger(m.requestId) && str(m.query, 1000)
        ? { type: "mentionQuery", requestId: m.requestId as number, query: m.query }
        : undefined;
    case "setMode":
      return CHAT_MODES.includes(m.mode as ChatMode) ? { type: "setMode", mode: m.mode as ChatMode } : undefined;
    case "setModel":
      return str(m.model, 256) && m.model !== "" ? { type: "setModel", model: m.model } : undefined;
    case "setIncludeEditorContext":
      return typeof m.enabled === "boolean" ? { type: "setIncludeEditorContext", enabled: m.enabled } : undefined;
    default:
      return undefined;
  }
}

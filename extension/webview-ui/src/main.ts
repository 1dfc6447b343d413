// The chat webview's entry point. Messages from the host are queued and
// handled in short tasks with a time budget, and the page paints once per
// animation frame, so a burst (10 000 deltas, a 2 000-event replay) never
// holds the main thread for long.
//
// Under the host's CSP (no inline script or style, no remote content) this
// file is loaded as a nonce'd module; it never navigates: links, files and
// diffs are posted to the host.

import "@vscode-elements/elements/dist/vscode-button/index.js";
import "@vscode-elements/elements/dist/vscode-checkbox/index.js";
import "@vscode-elements/elements/dist/vscode-option/index.js";
import "@vscode-elements/elements/dist/vscode-radio/index.js";
import "@vscode-elements/elements/dist/vscode-radio-group/index.js";
import "@vscode-elements/elements/dist/vscode-single-select/index.js";

import type { HostToWebview, WebviewToHost } from "./messages";
import { Composer } from "./composer";
import { Transcript } from "./transcript";
import { el, icon, str } from "./util";

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

// A task handles messages for up to TASK_BUDGET_MS; a frame paints new
// markdown for up to PAINT_BUDGET_MS (at least one chunk).
const TASK_BUDGET_MS = 10;
const PAINT_BUDGET_MS = 10;

const vscode = acquireVsCodeApi();
const post = (m: WebviewToHost): void => vscode.postMessage(m);

const saved = (vscode.getState() ?? {}) as { draft?: string };
const saveDraft = (draft: string): void => vscode.setState({ draft: draft.length <= 100_000 ? draft : "" });

// ----- layout

const title = el("div", { class: "title" });
const header = el(
  "div",
  { class: "header" },
  title,
  el("button", { class: "icon-button", type: "button", title: "New task", "aria-label": "New task", "data-action": "new-task" }, icon("add")),
);
const log = el("div", { class: "transcript", role: "log", "aria-label": "Conversation", "aria-live": "polite", "aria-relevant": "additions" });
const empty = el(
  "div",
  { class: "empty" },
  el("div", { class: "empty-title" }, "What should task-x do?"),
  el("div", { class: "muted" }, "Ask a question, plan a change or let the agent make it. Mention files with @; paste or drop images."),
);
const scroller = el("div", { class: "scroller" }, empty, log);
const transcript = new Transcript(log, scroller, post, () => schedule());
const composer = new Composer(post, saveDraft);
if (saved.draft) composer.restoreDraft(saved.draft);

const app = document.getElementById("root") ?? document.body;
app.replaceChildren(el("div", { class: "app", "data-testid": "chat-root" }, header, scroller, composer.el));

function showTitle(): void {
  const t = composer.state.title;
  title.textContent = t ?? (composer.state.taskId ? "Task" : "New task");
  title.title = title.textContent;
  empty.hidden = log.childElementCount > 0;
}

// ----- the message queue

const queue: HostToWebview[] = [];
let head = 0; // next message
let inner = 0; // next event inside queue[head]
let replayId = -1;
let scheduled = false;
let rafHandle = 0;
let timerHandle = 0;
// How many host messages were handled and painted; tests and the bench wait on
// it (window.taskxHandled) instead of sleeping.
let handled = 0;
let busyMs = 0; // time spent handling messages and painting (the bench reports it)
(window as unknown as { taskxHandled: () => { handled: number; idle: boolean; busyMs: number } }).taskxHandled = () => ({
  handled,
  idle: !scheduled && !draining && head >= queue.length,
  busyMs,
});

window.addEventListener("message", (e: MessageEvent) => {
  const m = e.data as HostToWebview;
  if (typeof m !== "object" || m === null || typeof (m as { type?: unknown }).type !== "string") return;
  queue.push(m);
  // Handled in this task when nothing waits (a delta costs microseconds);
  // what does not fit in the budget continues in tasks of its own.
  if (!draining) {
    const t0 = performance.now();
    if (!drain(t0 + TASK_BUDGET_MS)) scheduleDrain();
    busyMs += performance.now() - t0;
  }
  schedule();
});

// Messages are handled in tasks of their own (a MessageChannel message runs
// as soon as the thread is free, without waiting for a frame), each at most
// TASK_BUDGET_MS; the page paints in animation frames. A burst or a replay
// so uses the whole thread in short slices, and input and frames still get
// their turn between slices.
const channel = new MessageChannel();
let draining = false;
channel.port1.onmessage = () => {
  draining = false;
  const t0 = performance.now();
  if (!drain(t0 + TASK_BUDGET_MS)) scheduleDrain();
  busyMs += performance.now() - t0;
  schedule();
};

function scheduleDrain(): void {
  if (draining) return;
  draining = true;
  channel.port2.postMessage(null);
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  rafHandle = requestAnimationFrame(frame);
  // A hidden webview gets no animation frames: still keep up, slowly.
  timerHandle = window.setTimeout(frame, 100);
}

function frame(): void {
  cancelAnimationFrame(rafHandle);
  clearTimeout(timerHandle);
  scheduled = false;
  const start = performance.now();
  const pending = transcript.paint(start, start + PAINT_BUDGET_MS);
  if (transcript.statsDirty) {
    transcript.statsDirty = false;
    composer.paintStats(transcript.stats, composer.state.running);
  }
  empty.hidden = log.childElementCount > 0;
  busyMs += performance.now() - start;
  if (pending) schedule();
}

/** Handles queued messages until the deadline; true when the queue is empty. */
function drain(deadline: number): boolean {
  while (head < queue.length) {
    const m = queue[head]!;
    if (m.type === "events" || m.type === "replay") {
      const events = Array.isArray(m.events) ? m.events : [];
      const taskId = str(m.taskId);
      if (inner === 0 && m.type === "replay" && m.replayId !== replayId) {
        replayId = m.replayId;
        transcript.clear();
        composer.update({ taskId, title: m.title ?? null });
        showTitle();
      }
      while (inner < events.length) {
        transcript.event(taskId, events[inner++]!);
        if ((inner & 31) === 0 && performance.now() > deadline) return false;
      }
      inner = 0;
    } else {
      handle(m);
    }
    head++;
    handled++;
    if (performance.now() > deadline) break;
  }
  if (head >= queue.length) {
    queue.length = 0;
    head = 0;
    return true;
  }
  return false;
}

function handle(m: HostToWebview): void {
  switch (m.type) {
    case "state":
      composer.update(m.state ?? {});
      if (m.state?.running !== undefined) transcript.statsDirty = true;
      showTitle();
      break;
    case "clear":
      replayId = -1;
      transcript.clear();
      composer.update({ taskId: null, title: null });
      showTitle();
      break;
    case "bestOfProviders":
      transcript.bestOfProviders(str(m.taskId), Array.isArray(m.providers) ? m.providers.map(str) : []);
      return;
    case "userPrompt":
      transcript.userPrompt(str(m.taskId), str(m.text), typeof m.images === "number" ? m.images : 0, Array.isArray(m.mentions) ? m.mentions.map(str) : []);
      break;
    case "runResult":
      transcript.runResult(str(m.taskId), m.summary);
      break;
    case "runFailed":
      transcript.notice("error", `The task could not run: ${str(m.message)}`, "notice-error");
      break;
    case "approval":
      transcript.approval(str(m.id), m.params);
      break;
    case "askUser":
      transcript.askUser(str(m.id), m.params);
      break;
    case "requestClosed":
      transcript.requestClosed(str(m.id), m.decision === "allow" || m.decision === "deny" ? m.decision : undefined, typeof m.message === "string" ? m.message : undefined);
      break;
    case "models":
      composer.setModels(Array.isArray(m.models) ? m.models : [], m.selected ?? null);
      transcript.statsDirty = true;
      break;
    case "mentionResults":
      composer.mentionResults(m.requestId, m.items);
      break;
    case "insertMention":
      composer.insertMention(m.mention);
      break;
    case "focusInput":
      composer.focus();
      break;
    case "refined":
      composer.refined(m.requestId, typeof m.text === "string" ? m.text : null, str(m.note));
      break;
    case "error":
      transcript.notice("error", str(m.message) + (m.detail ? ` (${str(m.detail)})` : ""), "notice-error");
      break;
    case "notice":
      transcript.notice("info", str(m.message));
      break;
    default:
      break; // unknown messages are ignored
  }
}

// ----- user actions, by delegation (no per-node listeners to leak)

document.addEventListener("click", (e) => {
  const target = e.target as Element | null;
  if (!target) return;
  const a = target.closest("a");
  if (a) {
    // Links never navigate the webview: the host opens them after its checks.
    e.preventDefault();
    const href = a.getAttribute("href");
    if (href) post({ type: "openLink", url: href });
    return;
  }
  const b = target.closest("[data-action]") as HTMLElement | null;
  if (!b) return;
  const action = b.dataset.action;
  switch (action) {
    case "copy-code": {
      const code = b.parentElement?.querySelector("pre")?.textContent ?? "";
      void navigator.clipboard?.writeText(code).catch(() => undefined);
      break;
    }
    case "toggle-tool": {
      const card = transcript.toolOf(b);
      card?.setOpen(!card.open);
      break;
    }
    case "toggle-sub": {
      const body = b.closest(".subagent")?.querySelector(".sub-body") as HTMLElement | null;
      if (body) {
        body.hidden = !body.hidden;
        b.setAttribute("aria-expanded", String(!body.hidden));
        b.closest(".subagent")?.classList.toggle("open", !body.hidden);
      }
      break;
    }
    case "cancel-tool": {
      const card = transcript.toolOf(b);
      if (card && !card.finished) post({ type: "cancelTool", taskId: card.taskId, callId: card.callId });
      break;
    }
    case "open-check": {
      const taskId = b.dataset.task;
      const name = b.dataset.name;
      if (taskId && name) post({ type: "openCheckOutput", taskId, name });
      break;
    }
    case "open-worktree": {
      const path = b.dataset.path;
      if (path) post({ type: "openWorktree", path });
      break;
    }
    case "cancel-subagent": {
      const taskId = (b.closest("[data-task]") as HTMLElement | null)?.dataset.task;
      if (taskId) post({ type: "cancelSubagent", taskId });
      break;
    }
    case "approve": {
      const id = transcript.requestOf(b);
      const d = b.dataset.decision;
      if (id && (d === "allowOnce" || d === "allowTask" || d === "deny")) {
        transcript.answerApproval(id, d);
        focusNext();
      }
      break;
    }
    case "open-approval-diff": {
      const id = transcript.requestOf(b);
      if (id) post({ type: "openApprovalDiff", id });
      break;
    }
    case "ask-submit":
    case "ask-dismiss": {
      const id = transcript.requestOf(b);
      if (id) {
        transcript.answerAsk(id, action === "ask-dismiss");
        focusNext();
      }
      break;
    }
    case "open-file-diff": {
      const path = b.dataset.path;
      if (path) post({ type: "openFileDiff", path });
      break;
    }
    case "new-task":
      post({ type: "newTask" });
      break;
    case "send":
      composer.submit();
      break;
    case "stop":
      composer.stop();
      break;
    case "toggle-context":
      composer.toggleContext();
      break;
    case "attach-image":
      composer.pickImages();
      break;
    case "refine":
      composer.refine();
      break;
    case "undo-refine":
      composer.undoRefine();
      break;
  }
});

/** After an answer the keyboard goes to the next open request, else to the input. */
function focusNext(): void {
  const next = log.querySelector<HTMLElement>('.card[data-request]:not(.settled) vscode-button, .card[data-request]:not(.settled) vscode-radio, .card[data-request]:not(.settled) vscode-checkbox');
  if (next) next.focus();
  else composer.focus();
}

// Enter in an approval's reason box denies with that reason (the box says it is sent when
// you deny); an empty box answers nothing, so a stray Enter never denies.
document.addEventListener("keydown", (e) => {
  const input = e.target as HTMLInputElement | null;
  if (e.key !== "Enter" || e.isComposing || e.shiftKey || e.altKey || e.ctrlKey || e.metaKey || !input?.classList?.contains("deny-reason")) return;
  e.preventDefault();
  if (input.value.trim() === "") return;
  const id = transcript.requestOf(input);
  if (!id) return;
  transcript.answerApproval(id, "deny");
  focusNext();
});

// What a reason box holds goes to the host as it is typed, so a Deny from the diff
// editor's title bar (outside the page) sends the reason too.
document.addEventListener("input", (e) => {
  const input = e.target as HTMLInputElement | null;
  if (!input?.classList?.contains("deny-reason")) return;
  const id = transcript.requestOf(input);
  if (id) post({ type: "approvalReason", id, message: input.value });
});

// Middle-click on a link would open it without the click handler.
document.addEventListener("auxclick", (e) => {
  if ((e.target as Element | null)?.closest("a")) e.preventDefault();
});

// Dropped images join the prompt; nothing dropped navigates the page.
document.addEventListener("dragover", (e) => {
  e.preventDefault();
  if (e.dataTransfer) e.dataTransfer.dropEffect = "copy";
});
document.addEventListener("drop", (e) => {
  e.preventDefault();
  const files = Array.from(e.dataTransfer?.files ?? []);
  if (files.length) void composer.addFiles(files);
  else composer.dropText(e.dataTransfer?.getData("text/plain") ?? "");
});

showTitle();
post({ type: "ready" });

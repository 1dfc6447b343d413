// The transcript: agent/event objects folded into DOM. Events are untrusted:
// every field is read through str/num/… and every text goes in as text. Only
// assistant answers go through sanitized markdown (./markdown.ts).
//
// Cost model: an event's handler does O(1) DOM work (a text delta only appends
// to a string); the streaming markdown and live tool output are painted once
// per animation frame by paint(). Tool bodies (input, result) are built only
// when opened.

import type { AgentEvent, AgentSummary, AskUserParams, RequestApprovalParams, WebviewToHost } from "./messages";

/**
 * An event as it arrived: typed by the schema, but read field by field with
 * run-time checks (str, num, …), since a malformed or unknown event must
 * render as nothing rather than break the page.
 */
type Ev = Record<string, unknown>;
import { StreamingMarkdown } from "./markdown";
import { arr, bool, bytes, clip, cost, duration, el, icon, num, obj, plural, str, tokens } from "./util";

export type Post = (m: WebviewToHost) => void;

/** Figures for the status line, from the main task's usage and context events. */
export interface Stats {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  usedTokens: number;
  windowTokens: number;
  model: string;
}

const LIVE_TAIL = 4000; // characters of live output shown under a running tool
const OUTPUT_KEEP = 1 << 20; // characters of live output kept per call
const LAZY_PLACEHOLDER = 8000; // characters of a not-yet-rendered answer shown as its placeholder

const permissionIcon: Record<string, string> = {
  read: "eye",
  edit: "edit",
  command: "terminal",
  destructive: "trash",
  mcp: "plug",
  interactive: "question",
};

/** One tool call's card. */
class ToolCard {
  readonly el: HTMLElement;
  private readonly toggle: HTMLButtonElement;
  private readonly status: HTMLElement;
  private readonly stop: HTMLButtonElement;
  private readonly body: HTMLElement;
  private readonly files: HTMLElement;
  readonly extras: HTMLElement;
  private live: HTMLPreElement | null = null;
  private output = "";
  private outputDropped = 0;
  private liveDirty = false;
  private built = false;
  private input: unknown = {};
  private result: unknown = undefined;
  private error = "";
  private startedAt = performance.now();
  finished = false;

  constructor(
    readonly taskId: string,
    readonly callId: string,
    readonly tool: string,
    permission: string,
  ) {
    this.toggle = el("button", { class: "tool-toggle", type: "button", "aria-expanded": "false", "data-action": "toggle-tool" });
    this.status = el("span", { class: "tool-status" }, icon("loading", "codicon-modifier-spin"));
    this.stop = el(
      "button",
      { class: "icon-button tool-stop", type: "button", title: "Stop this tool call", "aria-label": `Stop ${tool}`, "data-action": "cancel-tool" },
      icon("debug-stop"),
    );
    this.body = el("div", { class: "tool-body", hidden: true });
    this.files = el("div", { class: "tool-files" });
    this.extras = el("div", { class: "tool-extras" });
    this.toggle.append(icon("chevron-right", "tool-chevron"), icon(permissionIcon[permission] ?? "tools"), el("span", { class: "tool-name" }, tool));
    this.el = el(
      "div",
      { class: "tool item", "data-state": "running", "data-testid": "tool-call" },
      el("div", { class: "tool-head" }, this.toggle, this.status, this.stop),
      this.body,
      this.files,
      this.extras,
    );
    (this.el as HTMLElement & { _card?: ToolCard })._card = this;
  }

  started(input: unknown): void {
    this.input = input;
    const i = obj(input);
    const arg = str(i.path) || str(i.command) || str(i.query) || str(i.pattern) || str(i.objective) || str(i.from) || str(i.url);
    if (arg) this.toggle.append(el("span", { class: "tool-arg" }, clip(arg, 120)));
    this.toggle.setAttribute("title", `${this.tool}${arg ? " " + clip(arg, 300) : ""}`);
  }

  addOutput(text: string): void {
    if (!text) return;
    this.output += text;
    if (this.output.length > OUTPUT_KEEP) {
      const cut = this.output.length - OUTPUT_KEEP;
      this.outputDropped += cut;
      this.output = this.output.slice(cut);
    }
    this.liveDirty = true;
  }

  paintLive(): void {
    if (!this.liveDirty) return;
    this.liveDirty = false;
    if (!this.live) {
      this.live = el("pre", { class: "tool-live", "aria-live": "off" });
      this.el.insertBefore(this.live, this.body);
    }
    const tail = this.output.length > LIVE_TAIL ? this.output.slice(this.output.length - LIVE_TAIL) : this.output;
    this.live.textContent = tail;
    this.live.scrollTop = this.live.scrollHeight;
  }

  fileChanged(path: string, kind: string, added: number, removed: number): void {
    const letter = kind === "created" ? "A" : kind === "deleted" ? "D" : "M";
    this.files.append(fileRow(path, letter, added, removed));
  }

  finished_(ok: boolean, result: unknown, error: string, durationMs: number, background: boolean): void {
    const firstOfBackground = background && obj(result).output === undefined && !this.finished && ok;
    this.result = result;
    this.error = error;
    this.finished = !firstOfBackground;
    const ms = durationMs || performance.now() - this.startedAt;
    if (firstOfBackground) {
      this.status.replaceChildren(icon("loading", "codicon-modifier-spin"), el("span", null, " in background"));
      this.el.dataset.state = "background";
    } else {
      this.el.dataset.state = ok ? "ok" : "failed";
      this.status.replaceChildren(icon(ok ? "check" : "error"), el("span", { class: "tool-duration" }, duration(ms)));
      this.status.setAttribute("title", ok ? `Finished in ${duration(ms)}` : `Failed after ${duration(ms)}`);
      this.stop.remove();
      if (this.live) {
        this.live.remove();
        this.live = null;
      }
      if (!ok && error) this.files.before(el("div", { class: "tool-error" }, clip(error, 400)));
    }
    if (this.built) this.buildBody();
  }

  /** Marks a call whose task ended without its toolFinished. */
  abandon(): void {
    if (this.finished) return;
    this.finished = true;
    this.el.dataset.state = "failed";
    this.status.replaceChildren(icon("circle-slash"), el("span", null, " stopped"));
    this.stop.remove();
  }

  setOpen(open: boolean): void {
    this.toggle.setAttribute("aria-expanded", String(open));
    this.body.hidden = !open;
    this.el.classList.toggle("open", open);
    if (open && !this.built) this.buildBody();
  }

  get open(): boolean {
    return !this.body.hidden;
  }

  private buildBody(): void {
    this.built = true;
    const parts: Node[] = [];
    const inputText = JSON.stringify(this.input, null, 2) ?? "";
    if (inputText && inputText !== "{}") parts.push(el("div", { class: "tool-label" }, "Input"), el("pre", { class: "tool-pre" }, inputText));
    if (this.output) {
      parts.push(
        el("div", { class: "tool-label" }, this.outputDropped ? `Output (first ${bytes(this.outputDropped)} not kept)` : "Output"),
        el("pre", { class: "tool-pre" }, this.output),
      );
    }
    if (this.result !== undefined && this.result !== null) {
      const text = typeof this.result === "string" ? this.result : JSON.stringify(this.result, null, 2) ?? "";
      parts.push(el("div", { class: "tool-label" }, "Result"), el("pre", { class: "tool-pre" }, text));
    }
    if (this.error) parts.push(el("div", { class: "tool-label" }, "Error"), el("pre", { class: "tool-pre tool-pre-error" }, this.error));
    if (parts.length === 0) parts.push(el("div", { class: "muted" }, this.finished ? "No output." : "Running…"));
    this.body.replaceChildren(...parts);
  }
}

function fileRow(path: string, letter: string, added: number, removed: number): HTMLElement {
  return el(
    "div",
    { class: "file-row" },
    el("span", { class: `file-kind kind-${letter}`, title: letter === "A" ? "created" : letter === "D" ? "deleted" : "modified" }, letter),
    el("button", { class: "link-button", type: "button", "data-action": "open-file-diff", "data-path": path, title: `Open the change to ${path}` }, path),
    el("span", { class: "added" }, `+${added}`),
    el("span", { class: "removed" }, `−${removed}`),
  );
}

/** A button that asks the host to open a subagent's worktree folder. */
function worktreeButton(dir: string): HTMLElement {
  return el("button", { class: "link-button", type: "button", title: dir, "data-action": "open-worktree", "data-path": dir, "data-testid": "open-worktree" }, icon("folder-opened"), " worktree");
}

/** Renders a unified diff as text lines with classes (never as HTML). */
export function diffView(text: string): HTMLElement {
  const pre = el("pre", { class: "diff", tabindex: "0" });
  const frag = document.createDocumentFragment();
  for (const line of text.split("\n")) {
    const c = line[0];
    const cls =
      line.startsWith("+++") || line.startsWith("---") ? "d-file" : c === "+" ? "d-add" : c === "-" ? "d-del" : c === "@" ? "d-hunk" : "d-ctx";
    frag.append(el("span", { class: cls }, line + "\n"));
  }
  pre.append(frag);
  return pre;
}

const decisionWords: Record<string, string> = {
  allow: "Allowed once",
  allowSession: "Allowed for this task",
  deny: "Denied",
};

/**
 * One stream of events rendered into a container: the main task, or a
 * subagent inside its card.
 */
class Lane {
  private stream: StreamingMarkdown | null = null;
  private thinking: { el: HTMLElement; pre: HTMLElement; text: string; dirty: boolean } | null = null;
  private planCard: HTMLElement | null = null;
  summary: HTMLElement | null = null;
  private validations: HTMLElement | null = null;

  constructor(
    readonly t: Transcript,
    readonly taskId: string,
    readonly box: HTMLElement,
    readonly nested: boolean,
  ) {}

  private add(node: HTMLElement): void {
    this.box.append(node);
  }

  notice(iconName: string, text: string, cls = ""): void {
    this.add(el("div", { class: `notice item ${cls}`, "data-testid": cls === "notice-error" ? "error" : "notice" }, icon(iconName), el("span", null, text)));
  }

  private endText(): void {
    if (this.stream) {
      // The rest is painted in the next frames, a piece at a time (a huge answer
      // in one paint blocked the page for seconds); the transcript drops the
      // stream from its set once it is done.
      this.stream.finish();
      this.t.streams.add(this.stream);
      this.stream = null;
    }
    this.thinkingDone();
  }

  event(ev: Ev): void {
    const type = str(ev.type);
    switch (type) {
      case "started":
        if (!this.nested) this.t.setModel(str(ev.model));
        break;
      case "userMessage":
        this.endText();
        this.t.userBubble(this.box, str(ev.text), num(ev.images), []);
        break;
      case "model":
        if (!this.nested) this.t.setModel(str(ev.model));
        break;
      case "iteration":
        this.endText();
        break;
      case "textDelta": {
        const text = str(ev.text);
        if (!text) break;
        this.thinkingDone();
        if (!this.stream) {
          this.stream = new StreamingMarkdown("md answer item");
          this.stream.el.dataset.testid = "message-assistant";
          this.add(this.stream.el);
        }
        this.stream.append(text);
        this.t.streams.add(this.stream);
        break;
      }
      case "thinkingDelta": {
        const text = str(ev.text);
        if (!text) break;
        if (!this.thinking) {
          const pre = el("div", { class: "thinking-text" });
          const d = el("details", { class: "thinking item" }, el("summary", null, icon("lightbulb"), " Thinking"), pre);
          this.thinking = { el: d, pre, text: "", dirty: false };
          this.add(d);
          this.t.thinkings.add(this.thinking);
        }
        this.thinking.text += text;
        this.thinking.dirty = true;
        break;
      }
      case "assistantMessage": {
        const text = str(ev.text);
        if (this.stream) {
          if (this.stream.value !== text && text) this.stream.reset(text);
          this.endText();
        } else if (text) {
          // Not streamed (a replay): shown as plain text at once, rendered as
          // markdown when it comes near the screen.
          this.add(this.t.lazyMarkdown(text));
        }
        this.thinkingDone();
        break;
      }
      case "usage":
        if (!this.nested) this.t.usage(num(ev.totalInputTokens), num(ev.totalOutputTokens), num(ev.costUsd));
        break;
      case "context":
        if (!this.nested) this.t.context(num(ev.usedTokens), num(ev.windowTokens));
        break;
      case "compacted": {
        this.endText();
        const parts = [];
        if (num(ev.folded)) parts.push(`${plural(num(ev.folded), "earlier message")} summarized`);
        if (num(ev.pruned)) parts.push(`${plural(num(ev.pruned), "old tool result")} shortened`);
        if (bool(ev.droppedRetrieval)) parts.push("the repository excerpts dropped");
        const win = num(ev.windowTokens);
        this.notice(
          "fold",
          `The conversation was getting long, so it was compressed${parts.length ? ": " + parts.join(", ") : ""}. ` +
            `About ${tokens(num(ev.beforeTokens))} → ${tokens(num(ev.afterTokens))} tokens${win ? ` of a ${tokens(win)} window` : ""}.`,
        );
        break;
      }
      case "retry": {
        const status = num(ev.status);
        const why = str(ev.message) || str(ev.kind);
        this.notice(
          "sync",
          `The model provider answered with an error (${str(ev.kind) || "error"}${status ? " " + status : ""}${why ? ": " + clip(why, 200) : ""}). ` +
            `Trying again in ${duration(num(ev.delayMs))} (attempt ${num(ev.attempt)} of ${num(ev.maxAttempts)}).`,
          "notice-warn",
        );
        break;
      }
      case "modelSwitched":
        this.notice(
          "arrow-swap",
          `Switched from ${str(ev.from)} to ${str(ev.to)} because ${str(ev.from) || "the model"} kept failing (${clip(str(ev.reason), 200)}).`,
          "notice-warn",
        );
        if (!this.nested) this.t.setModel(str(ev.to).replace(/^[^/]*\//, ""));
        break;
      case "warning":
        this.notice("warning", str(ev.message), "notice-warn");
        break;
      case "error": {
        const status = num(ev.status);
        this.notice(
          "error",
          `The model provider failed: ${str(ev.message) || str(ev.kind)}${status ? ` (HTTP ${status})` : ""}.${bool(ev.retryable) ? " This may pass if you try again." : ""}`,
          "notice-error",
        );
        break;
      }
      case "steered":
        this.endText();
        this.add(el("div", { class: "user steer item" }, el("div", { class: "user-label" }, icon("comment"), " You (while it ran)"), el("div", { class: "user-text" }, str(ev.text))));
        break;
      case "hook": {
        const blocked = bool(ev.blocked);
        const code = num(ev.exitCode);
        this.notice(
          blocked ? "shield" : "symbol-event",
          `${str(ev.event)} hook ${clip(str(ev.command), 120)} ${blocked ? "blocked the step" : code === 0 ? "ran" : `exited with ${code}`} (${duration(num(ev.durationMs))}).`,
          blocked ? "notice-warn" : "notice-quiet",
        );
        break;
      }
      case "toolStarted": {
        this.endText();
        const callId = str(ev.callId);
        const card = new ToolCard(this.taskId, callId, str(ev.tool) || "tool", str(ev.permission));
        card.started(ev.input);
        this.t.tools.set(key(this.taskId, callId), card);
        this.add(card.el);
        break;
      }
      case "toolOutput": {
        const card = this.t.tools.get(key(this.taskId, str(ev.callId)));
        if (card) {
          card.addOutput(str(ev.text));
          this.t.liveTools.add(card);
        }
        break;
      }
      case "approvalRequested": {
        const callId = str(ev.callId);
        const host = this.t.tools.get(key(this.taskId, callId))?.extras ?? this.box;
        this.t.approvalRecord(this.taskId, callId, str(ev.tool), str(ev.preview), host);
        break;
      }
      case "approvalResolved":
        this.t.approvalResolved(this.taskId, str(ev.callId), str(ev.decision));
        break;
      case "approvalWithdrawn":
        this.t.withdrawn(this.taskId, str(ev.callId));
        break;
      case "fileChanged": {
        const card = this.t.tools.get(key(this.taskId, str(ev.callId)));
        if (card) card.fileChanged(str(ev.path), str(ev.kind), num(ev.added), num(ev.removed));
        break;
      }
      case "toolFinished": {
        const callId = str(ev.callId);
        let card = this.t.tools.get(key(this.taskId, callId));
        if (!card) {
          // Replay of an old task file has no toolStarted.
          card = new ToolCard(this.taskId, callId, str(ev.tool) || "tool", "");
          this.t.tools.set(key(this.taskId, callId), card);
          this.add(card.el);
        }
        card.finished_(bool(ev.ok), ev.result, ev.error == null ? "" : str(ev.error), num(ev.durationMs), bool(ev.background));
        if (card.finished) this.t.liveTools.delete(card);
        break;
      }
      case "plan":
        this.plan(str(ev.explanation), arr(ev.steps));
        break;
      case "validationStarted":
        this.validationRow(str(ev.name), str(ev.command), null);
        break;
      case "validationFinished":
        this.validationRow(str(ev.name), str(ev.command), ev);
        break;
      case "planStarted": {
        this.endText();
        this.add(this.t.planView(ev));
        break;
      }
      case "subagentStarted":
        this.endText();
        this.t.subagentStarted(this, ev);
        break;
      case "subagent": {
        const sub = this.t.lanes.get(str(ev.taskId));
        if (sub) sub.event(obj(ev.event));
        break;
      }
      case "subagentFinished":
        this.t.subagentFinished(ev);
        break;
      case "stepSkipped":
        this.t.stepStatus(str(ev.step), "skipped", `skipped: ${clip(str(ev.reason), 300)}`);
        this.notice("debug-step-over", `Step ${str(ev.step)} was skipped: ${str(ev.reason)}.`, "notice-warn");
        break;
      case "merged": {
        const files = arr(ev.files).map(str);
        if (bool(ev.ok)) {
          this.t.stepStatus(str(ev.step), "merged", `merged: ${plural(files.length, "file")}`);
          this.notice("git-merge", `Merged step ${str(ev.step)} (${str(ev.name)}): ${plural(files.length, "file")} changed.`);
        } else {
          this.t.stepStatus(str(ev.step), "conflict", `not merged: ${clip(str(ev.error), 300)}`);
          this.notice(
            "error",
            `Could not merge step ${str(ev.step)} (${str(ev.name)}): ${str(ev.error)}. Its change is kept in its worktree: open it from the step's card, resolve it there, or apply it by hand.`,
            "notice-error",
          );
        }
        break;
      }
      case "bestOfDone": {
        // The candidates come in the order of the providers asked, as the cards number
        // them ("candidate 2"); only the completed ones are ready to apply.
        const cands = arr(ev.candidates).map(obj);
        const rows = cands.map((o, i) => el("li", null, `${this.t.candidateLabel(this.taskId, i + 1)}: ${str(o.kind)}/${str(o.model)}, ${str(o.status)}`));
        const ready = cands.filter((o) => str(o.status) === "completed").length;
        const title = ready === cands.length ? `${plural(cands.length, "candidate")} ready` : `${ready} of ${plural(cands.length, "candidate")} ready`;
        this.add(el("div", { class: "card item" }, el("div", { class: "card-title" }, icon("versions"), ` ${title} (${cost(num(ev.costUsd))})`), el("ul", null, ...rows)));
        break;
      }
      case "diff":
        this.t.lastDiffFiles = arr(ev.files).map(str);
        break;
      case "done":
        this.endText();
        this.t.done(this, ev);
        break;
      case "replayed":
        this.endText();
        break;
      default:
        // Unknown event types are ignored (protocol.md, Compatibility).
        break;
    }
  }

  private thinkingDone(): void {
    if (this.thinking) {
      const th = this.thinking;
      if (th.dirty) th.pre.textContent = th.text;
      th.dirty = false;
      this.t.thinkings.delete(th);
      this.thinking = null;
    }
  }

  private plan(explanation: string, steps: unknown[]): void {
    const list = el("ul", { class: "plan-list" });
    for (const s of steps) {
      const o = obj(s);
      const status = str(o.status);
      const ic = status === "completed" ? "pass-filled" : status === "inProgress" ? "circle-large-filled" : "circle-large-outline";
      list.append(el("li", { class: `plan-${status}` }, icon(ic), " ", str(o.step)));
    }
    const card = el("div", { class: "card plan item" }, el("div", { class: "card-title" }, icon("checklist"), " Plan"), explanation ? el("div", { class: "muted" }, explanation) : null, list);
    if (this.planCard) this.planCard.replaceWith(card);
    else this.add(card);
    this.planCard = card;
  }

  private validationRow(name: string, command: string, fin: Ev | null): void {
    if (!this.validations) {
      this.validations = el("div", { class: "card validations item" }, el("div", { class: "card-title" }, icon("beaker"), " Checks"));
      this.add(this.validations);
    }
    const id = `v-${name}`;
    const row = Array.from(this.validations.children).find((c) => (c as HTMLElement).dataset.check === id) as HTMLElement | undefined;
    const content: (Node | string)[] = [];
    if (!fin) content.push(icon("loading", "codicon-modifier-spin"), ` ${name} `, el("code", null, clip(command, 200)), " running…");
    else {
      const passed = bool(fin.passed);
      const why = bool(fin.timedOut) ? "timed out" : passed ? "passed" : `failed (exit ${num(fin.exitCode)})`;
      content.push(icon(passed ? "pass" : "error"), ` ${name} `, el("code", null, clip(command, 200)), ` ${why} in ${duration(num(fin.durationMs))}`);
    }
    const next = el("div", { class: `check ${fin ? (bool(fin.passed) ? "check-ok" : "check-fail") : ""}`, "data-check": id }, ...content);
    if (row) row.replaceWith(next);
    else this.validations.append(next);
  }
}

const key = (taskId: string, callId: string) => `${taskId}\u0000${callId}`;

interface OpenRequest {
  id: string;
  kind: "approval" | "askUser";
  taskId: string;
  callId: string;
  el: HTMLElement;
  answered: boolean;
}

/** "No checks ran." for a completed run that changed files and ran none, and each skipped check. */
function checkLines(ran: boolean, status: string, changedFiles: number, hasValidations: boolean, skipped: Ev[]): Node[] {
  const out: Node[] = [];
  if (!hasValidations && !ran && status === "completed" && changedFiles) out.push(el("div", { class: "muted", "data-testid": "no-checks" }, "No checks ran."));
  for (const k of skipped) out.push(el("div", { class: "check check-skip", "data-testid": "check-skipped" }, icon("debug-step-over"), ` ${str(k.name)} skipped: ${str(k.reason)}`));
  return out;
}

/** The whole chat transcript. */
export class Transcript {
  readonly streams = new Set<StreamingMarkdown>();
  readonly thinkings = new Set<{ pre: HTMLElement; text: string; dirty: boolean }>();
  readonly liveTools = new Set<ToolCard>();
  readonly tools = new Map<string, ToolCard>();
  readonly lanes = new Map<string, Lane>();
  private readonly subCards = new Map<string, HTMLElement>();
  /** Plan steps by id, and the step of each subagent task. */
  private readonly steps = new Map<string, HTMLElement>();
  private readonly subStep = new Map<string, string>();
  private readonly requests = new Map<string, OpenRequest>();
  private readonly approvalHistory = new Map<string, HTMLElement>();
  private readonly summaries = new Map<string, HTMLElement>();
  lastDiffFiles: string[] = [];
  stats: Stats = { inputTokens: 0, outputTokens: 0, costUsd: 0, usedTokens: 0, windowTokens: 0, model: "" };
  statsDirty = true;
  private main: Lane | null = null;
  private stick = true;
  private userScrollAt = -Infinity;
  /** Renders lazy answers as they come within a screen of the viewport. */
  private readonly lazy: IntersectionObserver;
  private readonly lazyText = new WeakMap<Element, string>();

  constructor(
    readonly root: HTMLElement,
    private readonly scroller: HTMLElement,
    private readonly post: Post,
    /** Asks for a paint in a coming frame (something outside an event became dirty). */
    private readonly onDirty: () => void = () => {},
  ) {
    this.lazy = new IntersectionObserver(
      (entries) => {
        for (const e of entries) {
          if (!e.isIntersecting) continue;
          this.renderLazy(e.target as HTMLElement);
        }
      },
      { root: scroller, rootMargin: "1000px 0px" },
    );
    // Only the user unsticks the view from the bottom: a scroll within a
    // second of a wheel, touch, scroll key or scrollbar press. Scrolls from
    // layout (content growing, rendered late) never do.
    const intent = (e: Event) => {
      if (e instanceof KeyboardEvent && !["PageUp", "PageDown", "ArrowUp", "ArrowDown", "Home", "End", " "].includes(e.key)) return;
      if (e.type === "pointerdown" && e.target !== scroller) return;
      this.userScrollAt = performance.now();
    };
    for (const t of ["wheel", "touchmove", "keydown", "pointerdown"]) scroller.addEventListener(t, intent, { passive: true });
    // Content that grows after layout (late rendering, off-screen estimates)
    // keeps a stuck view at the bottom.
    new ResizeObserver(() => {
      if (this.stick) scroller.scrollTop = scroller.scrollHeight;
    }).observe(root);
    scroller.addEventListener("scroll", () => {
      const atBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 48;
      if (atBottom) this.stick = true;
      else if (performance.now() - this.userScrollAt < 1000) this.stick = false;
    }, { passive: true });
  }

  /** An answer shown as text now and as markdown once near the viewport. */
  lazyMarkdown(text: string): HTMLElement {
    // The placeholder holds the start only: laying out a 1.7 MB text node took seconds.
    const shown = text.length > LAZY_PLACEHOLDER ? `${text.slice(0, LAZY_PLACEHOLDER)} …` : text;
    const e = el("div", { class: "md answer item lazy", "data-testid": "message-assistant" }, shown);
    this.lazyText.set(e, text);
    this.lazy.observe(e);
    return e;
  }

  /**
   * Replaces a lazy answer's plain text by its markdown: the first piece now,
   * the rest in the next frames like a streamed answer (`all`: everything now).
   */
  private renderLazy(e: HTMLElement, all = false): void {
    const text = this.lazyText.get(e);
    this.lazy.unobserve(e);
    if (text === undefined) return;
    this.lazyText.delete(e);
    const s = new StreamingMarkdown("md-body");
    s.append(text);
    s.finish();
    s.paint(all, performance.now(), performance.now() + 8);
    e.classList.remove("lazy");
    e.replaceChildren(s.el);
    if (s.isDirty) {
      this.streams.add(s);
      this.onDirty();
    }
  }

  /** Renders every lazy answer now (before a search of the page, or in tests). */
  renderAllLazy(): void {
    for (const e of Array.from(this.root.querySelectorAll<HTMLElement>(".answer.lazy"))) this.renderLazy(e, true);
  }

  /** Empties the transcript and forgets every reference into it. */
  clear(): void {
    this.lazy.disconnect();
    this.root.replaceChildren();
    this.streams.clear();
    this.thinkings.clear();
    this.liveTools.clear();
    this.tools.clear();
    this.lanes.clear();
    this.subCards.clear();
    this.steps.clear();
    this.subStep.clear();
    this.requests.clear();
    this.approvalHistory.clear();
    this.summaries.clear();
    this.lastDiffFiles = [];
    this.stats = { inputTokens: 0, outputTokens: 0, costUsd: 0, usedTokens: 0, windowTokens: 0, model: "" };
    this.statsDirty = true;
    this.main = null;
    this.stick = true;
  }

  private lane(taskId: string): Lane {
    let l = this.lanes.get(taskId);
    if (!l) {
      l = new Lane(this, taskId, this.root, false);
      this.lanes.set(taskId, l);
      this.main = l;
    }
    return l;
  }

  event(taskId: string, ev: AgentEvent): void {
    if (typeof ev !== "object" || ev === null || Array.isArray(ev)) return;
    // A subagent's own task id reaches us only inside "subagent" events.
    (this.lanes.get(taskId) ?? this.lane(taskId)).event(ev as unknown as Ev);
  }

  userPrompt(taskId: string, text: string, images: number, mentions: string[]): void {
    this.lane(taskId);
    this.userBubble(this.root, text, images, mentions);
    this.stick = true;
  }

  userBubble(box: HTMLElement, text: string, images: number, mentions: string[]): void {
    const meta: Node[] = [];
    for (const m of mentions) meta.push(el("span", { class: "chip" }, icon("mention"), m));
    if (images) meta.push(el("span", { class: "chip" }, icon("file-media"), plural(images, "image")));
    const shown = text.length > 20_000 ? text.slice(0, 20_000) : text;
    box.append(
      el(
        "div",
        { class: "user item", "data-testid": "message-user" },
        el("div", { class: "user-label" }, icon("account"), " You"),
        el("div", { class: "user-text" }, shown),
        text.length > 20_000 ? el("div", { class: "muted" }, `… and ${bytes(text.length - 20_000)} more`) : null,
        meta.length ? el("div", { class: "chips" }, ...meta) : null,
      ),
    );
  }

  notice(iconName: string, text: string, cls = ""): void {
    this.root.append(el("div", { class: `notice item ${cls}`, "data-testid": cls === "notice-error" ? "error" : "notice" }, icon(iconName), el("span", null, text)));
    this.stick = true;
  }

  setModel(model: string): void {
    if (model && model !== this.stats.model) {
      this.stats.model = model;
      this.statsDirty = true;
    }
  }

  usage(input: number, output: number, usd: number): void {
    this.stats.inputTokens = input;
    this.stats.outputTokens = output;
    this.stats.costUsd = usd;
    this.statsDirty = true;
  }

  context(used: number, window: number): void {
    this.stats.usedTokens = used;
    this.stats.windowTokens = window;
    this.statsDirty = true;
  }

  // ----- approvals and questions

  /** The approvalRequested event: a record in the transcript (the answerable card comes from the host). */
  approvalRecord(taskId: string, callId: string, tool: string, preview: string, host: HTMLElement): void {
    const k = key(taskId, callId);
    if (this.approvalHistory.has(k)) return;
    const open = Array.from(this.requests.values()).some((r) => r.kind === "approval" && r.taskId === taskId && r.callId === callId);
    if (open) return;
    const rec = el(
      "details",
      { class: "approval-record" },
      el("summary", null, icon("shield"), ` Asked to allow ${tool}`, el("span", { class: "approval-outcome" }, "")),
      preview ? diffView(preview) : null,
    );
    this.approvalHistory.set(k, rec);
    host.append(rec);
  }

  approval(id: string, params_: RequestApprovalParams): void {
    const params = obj(params_);
    const taskId = str(params.taskId);
    const callId = str(params.callId);
    const tool = str(params.tool) || "tool";
    const permission = str(params.permission);
    const preview = str(params.preview);
    const input = obj(params.input);
    const target = str(input.path) || str(input.command) || str(input.from);
    const what =
      permission === "edit" ? "edit" : permission === "command" ? "run a command" : permission === "destructive" ? "make a destructive change" : permission === "mcp" ? "use an MCP tool" : `use ${tool}`;
    const reason = el("input", {
      class: "text-input deny-reason",
      type: "text",
      placeholder: "Why not? (optional, sent to the agent when you deny)",
      "aria-label": "Reason for denying",
      maxlength: 2000,
    });
    const card = el(
      "div",
      { class: "approval card item", role: "group", "aria-label": `Approval needed: ${tool}`, "data-request": id, "data-testid": "approval" },
      el("div", { class: "card-title" }, icon("shield"), ` task-x wants to ${what}`, target ? el("code", { class: "approval-target" }, clip(target, 200)) : null, el("span", { class: "badge" }, tool)),
      preview ? diffView(preview) : null,
      el(
        "div",
        { class: "approval-actions" },
        preview && (permission === "edit" || permission === "destructive")
          ? el("vscode-button", { secondary: true, "data-action": "open-approval-diff", icon: "diff", "data-testid": "approval-open-diff" }, "Open diff")
          : null,
      ),
      reason,
      el(
        "div",
        { class: "approval-actions" },
        el("vscode-button", { "data-action": "approve", "data-decision": "allowOnce", "data-testid": "approval-allow" }, "Allow once"),
        el("vscode-button", { secondary: true, "data-action": "approve", "data-decision": "allowTask", "data-testid": "approval-allow-task" }, "Allow for this task"),
        el("vscode-button", { secondary: true, "data-action": "approve", "data-decision": "deny", "data-testid": "approval-deny" }, "Deny"),
      ),
    );
    // Replace the plain record, if the event came first.
    const k = key(taskId, callId);
    const rec = this.approvalHistory.get(k);
    const tool_ = this.tools.get(k);
    if (rec) {
      rec.replaceWith(card);
      this.approvalHistory.delete(k);
    } else if (tool_) tool_.extras.append(card);
    else this.root.append(card);
    this.requests.set(id, { id, kind: "approval", taskId, callId, el: card, answered: false });
    this.stick = true;
  }

  /** A click on an approval button. */
  answerApproval(id: string, decision: "allowOnce" | "allowTask" | "deny"): void {
    const r = this.requests.get(id);
    if (!r || r.answered || r.kind !== "approval") return;
    r.answered = true;
    const reason = (r.el.querySelector(".deny-reason") as HTMLInputElement | null)?.value.trim() ?? "";
    const msg: WebviewToHost = { type: "approvalAnswer", id, decision };
    if (decision === "deny" && reason) msg.message = reason;
    this.post(msg);
    const words = decision === "allowOnce" ? "You allowed this once" : decision === "allowTask" ? "You allowed this for the rest of the task" : reason ? `You denied this: ${reason}` : "You denied this";
    this.settle(r, words);
  }

  private settle(r: OpenRequest, words: string): void {
    for (const a of Array.from(r.el.querySelectorAll(".approval-actions, .deny-reason, .ask-actions"))) a.remove();
    for (const i of Array.from(r.el.querySelectorAll("vscode-radio, vscode-checkbox"))) i.setAttribute("disabled", "");
    r.el.classList.add("settled");
    r.el.append(el("div", { class: "settled-note" }, words));
    this.requests.delete(r.id);
  }

  approvalResolved(taskId: string, callId: string, decision: string): void {
    const k = key(taskId, callId);
    const rec = this.approvalHistory.get(k);
    const words = decisionWords[decision] ?? decision;
    if (rec) rec.querySelector(".approval-outcome")?.replaceChildren(` — ${words}`);
    for (const r of Array.from(this.requests.values())) {
      if (r.kind === "approval" && r.taskId === taskId && r.callId === callId) this.settle(r, words);
    }
  }

  withdrawn(taskId: string, callId: string): void {
    for (const r of Array.from(this.requests.values())) {
      if (r.taskId === taskId && r.callId === callId) this.settle(r, "No longer needed (the task stopped waiting).");
    }
  }

  /** The request is over; `decision` when the user answered it outside the page (the diff editor's title bar). */
  requestClosed(id: string, decision?: "allow" | "deny", message?: string): void {
    const r = this.requests.get(id);
    if (!r) return;
    if (r.kind === "approval" && decision) {
      r.answered = true;
      this.settle(r, decision === "allow" ? "You allowed this once, in the diff editor" : message ? `You denied this in the diff editor: ${message}` : "You denied this in the diff editor");
      return;
    }
    this.settle(r, r.kind === "approval" ? "No longer needed." : "The question was closed.");
  }

  askUser(id: string, params_: AskUserParams): void {
    const params = obj(params_);
    const taskId = str(params.taskId);
    const callId = str(params.callId);
    const qs = arr(params.questions).slice(0, 8);
    const body: Node[] = [];
    qs.forEach((q, qi) => {
      const o = obj(q);
      const qid = str(o.id) || String(qi);
      const kind = str(o.kind) === "checkbox" ? "checkbox" : "radio";
      const opts = arr(o.options).map(str).filter(Boolean).slice(0, 16);
      const label = el("div", { class: "question-text", id: `q-${id}-${qi}` }, str(o.text));
      const group =
        kind === "radio"
          ? el("vscode-radio-group", { variant: "vertical", "aria-labelledby": `q-${id}-${qi}`, "data-qid": qid, "data-kind": kind })
          : el("div", { class: "checkbox-group", role: "group", "aria-labelledby": `q-${id}-${qi}`, "data-qid": qid, "data-kind": kind });
      for (const opt of opts) {
        const input = el(kind === "radio" ? "vscode-radio" : "vscode-checkbox", { name: `${id}-${qid}`, value: opt, "data-testid": "askuser-option" });
        (input as HTMLElement & { label: string }).label = opt;
        input.append(opt);
        group.append(input);
      }
      body.push(el("div", { class: "question" }, label, group));
    });
    const card = el(
      "div",
      { class: "ask card item", role: "group", "aria-label": "A question for you", "data-request": id, "data-testid": "askuser" },
      el("div", { class: "card-title" }, icon("question"), qs.length > 1 ? " task-x has questions" : " task-x has a question"),
      ...body,
      el(
        "div",
        { class: "ask-actions approval-actions" },
        el("vscode-button", { "data-action": "ask-submit", "data-testid": "askuser-submit" }, "Answer"),
        el("vscode-button", { secondary: true, "data-action": "ask-dismiss", "data-testid": "askuser-dismiss" }, "Dismiss"),
      ),
    );
    const host = this.tools.get(key(taskId, callId))?.extras;
    (host ?? this.root).append(card);
    this.requests.set(id, { id, kind: "askUser", taskId, callId, el: card, answered: false });
    this.stick = true;
  }

  answerAsk(id: string, dismiss: boolean): void {
    const r = this.requests.get(id);
    if (!r || r.answered || r.kind !== "askUser") return;
    if (dismiss) {
      r.answered = true;
      this.post({ type: "askUserAnswer", id, answers: null });
      this.settle(r, "You dismissed the question.");
      return;
    }
    const answers: Record<string, string[]> = {};
    const chosen: string[] = [];
    for (const g of Array.from(r.el.querySelectorAll<HTMLElement>("[data-qid]"))) {
      const qid = g.dataset.qid!;
      const picked = Array.from(g.querySelectorAll<HTMLElement & { checked: boolean; value: string }>("vscode-radio, vscode-checkbox"))
        .filter((i) => i.checked)
        .map((i) => i.getAttribute("value") ?? "");
      answers[qid] = g.dataset.kind === "radio" ? picked.slice(0, 1) : picked;
      chosen.push(...answers[qid]!);
    }
    r.answered = true;
    this.post({ type: "askUserAnswer", id, answers });
    this.settle(r, chosen.length ? `You answered: ${chosen.join(", ")}` : "You answered without choosing anything.");
  }

  /** The id of the open request a node belongs to. */
  requestOf(node: Element): string | undefined {
    return (node.closest("[data-request]") as HTMLElement | null)?.dataset.request;
  }

  toolOf(node: Element): ToolCard | undefined {
    return ((node.closest(".tool") as (HTMLElement & { _card?: ToolCard }) | null) ?? undefined)?._card;
  }

  // ----- team

  /** A best-of-N run's provider names (the host's), by candidate index. */
  private readonly bestOfNames = new Map<string, string[]>();

  bestOfProviders(taskId: string, providers: string[]): void {
    if (taskId) this.bestOfNames.set(taskId, providers.slice(0, 8));
  }

  /** "candidate 2" with its provider's name when the host gave it, as the comparison panel names it. */
  candidateLabel(runTaskId: string, n: number): string {
    const name = this.bestOfNames.get(runTaskId)?.[n - 1];
    return name ? `${name} (candidate ${n})` : `candidate ${n}`;
  }

  subagentStarted(parent: Lane, ev: Ev): void {
    const taskId = str(ev.taskId);
    const name = str(ev.name);
    // A best-of-N candidate names its index among the providers asked.
    const candidate = typeof ev.candidate === "number" && Number.isInteger(ev.candidate) && ev.candidate >= 0 ? ev.candidate + 1 : 0;
    const role = candidate ? this.candidateLabel(parent.taskId, candidate) : str(ev.role);
    const box = el("div", { class: "sub-body", hidden: true });
    const status = el("span", { class: "sub-status" }, icon("loading", "codicon-modifier-spin"));
    const card = el(
      "div",
      { class: "subagent card item", "data-task": taskId, "data-testid": "subagent", ...(candidate ? { "data-candidate": String(candidate) } : {}) },
      el(
        "div",
        { class: "tool-head" },
        el(
          "button",
          { class: "tool-toggle", type: "button", "aria-expanded": "false", "data-action": "toggle-sub" },
          icon("chevron-right", "tool-chevron"),
          icon("person"),
          el("span", { class: "tool-name" }, role || "subagent"),
          el("span", { class: "tool-arg" }, clip(str(ev.objective), 160)),
        ),
        status,
        el("button", { class: "icon-button tool-stop", type: "button", title: "Stop this subagent", "aria-label": `Stop subagent ${name}`, "data-action": "cancel-subagent" }, icon("debug-stop")),
      ),
      el("div", { class: "muted sub-meta" }, [str(ev.model), name, str(ev.step) ? `step ${str(ev.step)}` : ""].filter(Boolean).join(" · ")),
      box,
    );
    const dir = str(ev.dir);
    if (dir) card.querySelector(".sub-meta")?.append(" · ", worktreeButton(dir));
    parent.box.append(card);
    this.subCards.set(taskId, card);
    const step = str(ev.step);
    if (step) {
      this.subStep.set(taskId, step);
      this.stepStatus(step, "running", `running · ${str(ev.model) || "subagent"}`);
    }
    this.lanes.set(taskId, new Lane(this, taskId, box, true));
  }

  subagentFinished(ev: Ev): void {
    const card = this.subCards.get(str(ev.taskId));
    if (!card) return;
    const ok = str(ev.status) === "completed";
    const files = num(ev.files);
    card.querySelector(".sub-status")?.replaceChildren(
      icon(ok ? "check" : "error"),
      ` ${str(ev.status)} · ${tokens(num(ev.tokens))} tokens · ${cost(num(ev.costUsd))}${files ? ` · ${plural(files, "file")} +${num(ev.added)} −${num(ev.removed)}` : ""}`,
    );
    card.querySelector(".tool-stop")?.remove();
    if (ev.error) card.append(el("div", { class: "tool-error" }, clip(str(ev.error), 400)));
    const wt = str(ev.worktree);
    if (wt && !card.querySelector('[data-action="open-worktree"]')) card.querySelector(".sub-meta")?.append(" · ", worktreeButton(wt));
    const step = this.subStep.get(str(ev.taskId));
    if (step) {
      const st = str(ev.status);
      const parts = [st, `${tokens(num(ev.tokens))} tokens`, cost(num(ev.costUsd))];
      if (files) parts.push(`${plural(files, "file")} +${num(ev.added)} −${num(ev.removed)}`);
      this.stepStatus(step, st === "completed" ? "done" : st === "cancelled" ? "cancelled" : "failed", parts.join(" · "));
    }
  }

  /** The team plan as a live list: each step with its role, dependencies and status (waiting, running, done, failed, skipped, merged). */
  planView(ev: Ev): HTMLElement {
    const list = el("ol", { class: "plan-steps" });
    for (const s of arr(ev.steps)) {
      const o = obj(s);
      const id = str(o.id);
      const deps = arr(o.dependsOn).map(str).filter(Boolean);
      const status = el("span", { class: "step-status", "data-testid": "step-status" }, "waiting");
      const li = el(
        "li",
        { class: "plan-step step-waiting", "data-step": id, "data-testid": "plan-step" },
        el("strong", null, id),
        ` (${str(o.role)}) `,
        clip(str(o.objective), 300),
        deps.length ? el("span", { class: "muted" }, ` after ${deps.join(", ")}`) : null,
        " — ",
        status,
      );
      if (id) this.steps.set(id, li);
      list.append(li);
    }
    return el(
      "div",
      { class: "card item plan-card", "data-testid": "team-plan" },
      el("div", { class: "card-title" }, icon("organization"), ` A team plan of ${plural(arr(ev.steps).length, "step")}, ${num(ev.maxParallel)} at a time`),
      list,
    );
  }

  /** Sets a plan step's status (a class for its colour and the words shown). */
  stepStatus(step: string, state: string, words: string): void {
    const li = this.steps.get(step);
    if (!li) return;
    // A merge or a conflict comes after "done": it stays; a later "done" does not undo it.
    if ((li.classList.contains("step-merged") || li.classList.contains("step-conflict")) && state === "done") return;
    li.className = `plan-step step-${state}`;
    const st = li.querySelector(".step-status");
    if (st) st.textContent = words;
  }

  // ----- the end of a run

  done(lane: Lane, ev: Ev): void {
    for (const c of this.tools.values()) if (c.taskId === lane.taskId) c.abandon();
    const status = str(ev.status);
    const files = arr(ev.changedFiles).map(obj);
    const u = obj(ev.usage);
    const title =
      status === "completed"
        ? el("div", { class: "card-title" }, icon("pass-filled"), " Done")
        : status === "cancelled"
          ? el("div", { class: "card-title" }, icon("circle-slash"), " Stopped")
          : el("div", { class: "card-title" }, icon("error"), " Failed");
    const list = el("div", { class: "summary-files" });
    for (const f of files) {
      const k = str(f.kind);
      list.append(fileRow(str(f.path), k === "created" ? "A" : k === "deleted" ? "D" : "M", num(f.added), num(f.removed)));
    }
    const meta = [
      str(ev.model),
      plural(num(ev.iterations), "turn"),
      plural(num(ev.toolCalls), "tool call"),
      // Providers count a call's tokens at its end: a run stopped or failed mid-answer
      // may have none counted, which is not "0 tokens" (QA: a stopped run's card said 0).
      num(u.inputTokens) || num(u.outputTokens) || status === "completed"
        ? `${tokens(num(u.inputTokens))} in / ${tokens(num(u.outputTokens))} out tokens`
        : "tokens not counted (the provider counts them when an answer ends)",
    ].filter(Boolean);
    const card = el(
      "div",
      { class: `summary card item summary-${status}`, "data-task": lane.taskId, "data-testid": "run-result" },
      title,
      status !== "completed" && ev.error ? el("div", { class: "tool-error" }, clip(str(ev.error), 600)) : null,
      files.length ? el("div", { class: "muted" }, `Changed ${plural(files.length, "file")}:`) : el("div", { class: "muted" }, "No files changed."),
      files.length ? list : null,
      el("div", { class: "muted summary-meta" }, meta.join(" · ")),
    );
    // A runtime that repeats validationRan and skippedChecks in `done` lets a replay show
    // what the live run's result showed ("No checks ran.", the skipped checks).
    if (typeof ev.validationRan === "boolean") {
      card.append(...checkLines(bool(ev.validationRan), status, files.length, false, arr(ev.skippedChecks).map(obj)));
      card.dataset.checks = "shown";
    }
    if (lane.nested) return; // a subagent's done is summed up by subagentFinished
    lane.box.append(card);
    lane.summary = card;
    this.summaries.set(lane.taskId, card);
    this.stick = true;
  }

  /** The agent/run result: validations and cost join the last summary card. */
  runResult(taskId: string, summary: AgentSummary): void {
    const card = this.summaries.get(taskId);
    const s = obj(summary);
    const validations = arr(s.validations).map(obj);
    const skipped = arr(s.skippedChecks).map(obj);
    const metrics = obj(s.metrics);
    const extra: Node[] = [];
    if (validations.length) {
      const rows = validations.map((v) => {
        const passed = bool(v.passed);
        const why = bool(v.timedOut) ? "timed out" : passed ? "passed" : `failed (exit ${num(v.exitCode)})`;
        const row = el("details", { class: `check ${passed ? "check-ok" : "check-fail"}`, "data-testid": "check" },
          el("summary", null, icon(passed ? "pass" : "error"), ` ${str(v.name)} `, el("code", null, clip(str(v.command), 200)), ` ${why} in ${duration(num(v.durationMs))}`),
          str(v.output) ? el("pre", { class: "tool-pre" }, str(v.output)) : null,
          passed ? null : el("button", { class: "link-button", type: "button", "data-action": "open-check", "data-task": taskId, "data-name": str(v.name), "data-testid": "open-check" }, icon("go-to-file"), " Open the output in an editor"));
        return row;
      });
      extra.push(el("div", { class: "muted" }, "Checks:"), ...rows);
    }
    // The done event already showed them (a runtime that sends them there).
    if (card?.dataset.checks !== "shown") extra.push(...checkLines(bool(s.validationRan), str(s.status), arr(s.changedFiles).length, validations.length > 0, skipped));
    const usd = num(metrics.costUsd);
    const unpriced = num(metrics.unpricedTokens);
    if (usd || unpriced) extra.push(el("div", { class: "muted" }, `Cost ${cost(usd)}${unpriced ? ` (${tokens(unpriced)} tokens of models without a price not counted)` : ""}`));
    if (!card) {
      if (extra.length) this.root.append(el("div", { class: "summary card item", "data-testid": "run-result" }, ...extra));
      return;
    }
    card.append(...extra);
    if (usd && usd > this.stats.costUsd) {
      this.stats.costUsd = usd;
      this.statsDirty = true;
    }
  }

  // ----- painting

  /** Paints everything that changed; returns true when something still waits for a later frame. */
  paint(now = performance.now(), deadline = Infinity): boolean {
    let pending = false;
    for (const s of this.streams) {
      s.paint(false, now, deadline);
      // A stream stays in the set until its message ended and all of it is painted.
      if (s.isDone) this.streams.delete(s);
    }
    for (const th of this.thinkings) {
      if (th.dirty) {
        th.dirty = false;
        th.pre.textContent = th.text;
      }
    }
    for (const c of this.liveTools) c.paintLive();
    if (this.stick) this.scroller.scrollTop = this.scroller.scrollHeight;
    for (const s of this.streams) if (s.isDirty) pending = true;
    return pending;
  }

  get mainTaskId(): string | null {
    return this.main?.taskId ?? null;
  }
}

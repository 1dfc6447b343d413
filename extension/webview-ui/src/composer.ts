// The input area: the prompt box with @ mentions, large pastes kept out of
// the box (a short token stands for them until sending, so typing stays
// instant), images pasted, dropped or picked, and under it the mode and
// model switchers, the editor-context switch and send / stop.

import type { ChatMode, ChatStateSnapshot, ImageInput, Mention, MentionCandidate, ModelInfo, WebviewToHost } from "./messages";
import { CHAT_MODES } from "./messages";
import type { Stats } from "./transcript";
import { arr, bytes, clip, cost, el, icon, num, plural, str, tokens } from "./util";

/** A paste longer than this is kept out of the text box. */
export const LARGE_PASTE_CHARS = 2000;
export const LARGE_PASTE_LINES = 40;
const MAX_IMAGES = 8;
const MAX_IMAGE_DATA = 7_000_000;
const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const MAX_MENTIONS = 10;
const HUGE_INPUT = 20_000;

const modeWords: Record<ChatMode, string> = {
  ask: "Ask: answers questions, reads only",
  plan: "Plan: reads and writes a plan, changes nothing",
  agent: "Agent: reads, edits and runs commands (asks first)",
  team: "Team: an agent that can split work among subagents",
  claudeCode: "Claude Code: the claude CLI does the task, with task-x's tools, approvals and changes",
};

interface Paste {
  token: string;
  text: string;
}

interface SelectLike extends HTMLElement {
  value: string;
}

export interface ComposerState extends Required<Omit<ChatStateSnapshot, "editor" | "runtime">> {
  editor: ChatStateSnapshot["editor"] | null;
  runtime: ChatStateSnapshot["runtime"] | null;
}

export class Composer {
  readonly el: HTMLElement;
  readonly input: HTMLTextAreaElement;
  private readonly chips: HTMLElement;
  private readonly popup: HTMLElement;
  private readonly modeSelect: SelectLike;
  private readonly modelSelect: SelectLike;
  private readonly contextButton: HTMLButtonElement;
  private readonly sendButton: HTMLButtonElement;
  private readonly stopButton: HTMLButtonElement;
  private readonly refineButton: HTMLButtonElement;
  private refineReq = 0;
  /** The text before the last refine, to put it back. */
  private beforeRefine: string | null = null;
  private readonly statusLine: HTMLElement;
  private readonly meter: HTMLElement;
  private readonly hint: HTMLElement;
  private readonly fileInput: HTMLInputElement;

  private pastes: Paste[] = [];
  private pasteSeq = 0;
  private images: { data: ImageInput; name: string }[] = [];
  private mentions: { token: string; mention: Mention }[] = [];
  private mentionReq = 0;
  private mentionTimer = 0;
  private candidates: MentionCandidate[] = [];
  private active = -1;
  private query: { start: number; text: string; slash?: boolean } | null = null;
  private draftTimer = 0;
  private models: ModelInfo[] = [];

  state: ComposerState = {
    taskId: null,
    title: null,
    running: false,
    mode: "agent",
    model: null,
    provider: null,
    includeEditorContext: true,
    editor: null,
    imagesSupported: true,
    runtime: null,
    claudeCode: false,
    skills: [],
  };
  private modesShown = "";

  /** The mode switcher's options: Claude Code only when the host found its CLI. */
  private renderModes(): void {
    const modes = CHAT_MODES.filter((m) => m !== "claudeCode" || this.state.claudeCode);
    const key = modes.join(",");
    if (key === this.modesShown) return;
    this.modesShown = key;
    this.modeSelect.replaceChildren(
      ...modes.map((m) => el("vscode-option", { value: m, description: modeWords[m], "data-testid": `mode-${m}` }, m === "claudeCode" ? "Claude Code" : m[0]!.toUpperCase() + m.slice(1))),
    );
  }

  constructor(
    private readonly post: (m: WebviewToHost) => void,
    private readonly saveDraft: (text: string) => void,
  ) {
    this.input = el("textarea", {
      class: "prompt",
      rows: 2,
      placeholder: "Ask task-x to do something. @ to mention a file, Enter to send, Shift+Enter for a new line.",
      "aria-label": "Message to task-x",
      "data-testid": "chat-input",
      "aria-autocomplete": "list",
      "aria-controls": "mention-list",
      spellcheck: "true",
    });
    this.chips = el("div", { class: "chips attachments", "aria-live": "polite" });
    this.popup = el("ul", { class: "mention-list", id: "mention-list", role: "listbox", "aria-label": "Mention a file or folder", hidden: true });
    this.modeSelect = el("vscode-single-select", { class: "mode-select", "aria-label": "Chat mode", title: "Chat mode", "data-testid": "mode-select" }) as unknown as SelectLike;
    this.renderModes();
    this.modelSelect = el("vscode-single-select", { class: "model-select", "aria-label": "Model", title: "Model", "data-testid": "model-select" }) as unknown as SelectLike;
    this.contextButton = el("button", { class: "context-toggle", type: "button", "aria-pressed": "true", "data-action": "toggle-context" });
    this.fileInput = el("input", { type: "file", accept: IMAGE_TYPES.join(","), multiple: true, hidden: true, "aria-hidden": "true" });
    const attach = el("button", { class: "icon-button", type: "button", title: "Attach images", "aria-label": "Attach images", "data-action": "attach-image" }, icon("file-media"));
    this.refineButton = el("button", { class: "icon-button", type: "button", title: "Refine the prompt: the model rewrites it so an agent can act on it", "aria-label": "Refine the prompt", "data-action": "refine", "data-testid": "refine" }, icon("sparkle"));
    this.sendButton = el("button", { class: "icon-button send", type: "button", title: "Send (Enter)", "aria-label": "Send", "data-action": "send", "data-testid": "send" }, icon("send"));
    this.stopButton = el("button", { class: "icon-button stop", type: "button", title: "Stop the task", "aria-label": "Stop the task", "data-action": "stop", "data-testid": "stop", hidden: true }, icon("debug-stop"));
    this.statusLine = el("div", { class: "status-line", "aria-live": "off" });
    this.meter = el("div", { class: "meter-fill" });
    this.hint = el("div", { class: "hint", "aria-live": "polite" });

    this.el = el(
      "div",
      { class: "composer" },
      el("div", { class: "status" }, this.statusLine, el("div", { class: "meter", title: "Context window used" }, this.meter)),
      this.chips,
      el("div", { class: "input-wrap" }, this.input, this.popup),
      this.hint,
      el(
        "div",
        { class: "toolbar" },
        this.modeSelect,
        this.modelSelect,
        this.contextButton,
        el("span", { class: "spacer" }),
        this.refineButton,
        attach,
        this.fileInput,
        this.stopButton,
        this.sendButton,
      ),
    );

    this.input.addEventListener("keydown", (e) => this.onKey(e));
    this.input.addEventListener("input", () => this.onInput());
    this.input.addEventListener("click", () => this.updateQuery());
    this.input.addEventListener("paste", (e) => this.onPaste(e));
    this.input.addEventListener("blur", () => setTimeout(() => this.closePopup(), 150));
    this.modeSelect.addEventListener("change", () => {
      const mode = this.modeSelect.value as ChatMode;
      if (CHAT_MODES.includes(mode) && mode !== this.state.mode) {
        this.state.mode = mode;
        this.post({ type: "setMode", mode });
      }
    });
    this.modelSelect.addEventListener("change", () => {
      const model = this.modelSelect.value;
      if (model && model !== this.state.model) {
        this.state.model = model;
        this.post({ type: "setModel", model });
      }
    });
    this.fileInput.addEventListener("change", () => {
      if (this.fileInput.files) void this.addFiles(Array.from(this.fileInput.files));
      this.fileInput.value = "";
    });
    this.popup.addEventListener("mousedown", (e) => {
      const li = (e.target as Element).closest("li[data-index]") as HTMLElement | null;
      if (li) {
        e.preventDefault();
        this.accept(Number(li.dataset.index));
      }
    });
    this.chips.addEventListener("click", (e) => {
      const b = (e.target as Element).closest("[data-remove]") as HTMLElement | null;
      if (b) this.removeChip(b.dataset.remove!);
    });
    this.update({});
  }

  // ----- state from the host

  update(s: ChatStateSnapshot): void {
    for (const k of Object.keys(s) as (keyof ChatStateSnapshot)[]) {
      if (s[k] !== undefined) (this.state as unknown as Record<string, unknown>)[k] = s[k];
    }
    const st = this.state;
    this.renderModes();
    if (this.modeSelect.value !== st.mode) this.modeSelect.value = st.mode;
    this.syncModelSelect();
    const running = st.running;
    this.stopButton.hidden = !running;
    this.sendButton.title = running ? "Send to the running task (Enter)" : "Send (Enter)";
    this.sendButton.setAttribute("aria-label", running ? "Send to the running task" : "Send");
    this.input.placeholder = running
      ? "The task is running: type to steer it, or stop it."
      : st.taskId
        ? "Follow up on this task. @ to mention a file."
        : "Ask task-x to do something. @ to mention a file, Enter to send, Shift+Enter for a new line.";
    const ed = st.editor;
    const on = st.includeEditorContext;
    this.contextButton.setAttribute("aria-pressed", String(on));
    this.contextButton.replaceChildren(
      icon(on ? "eye" : "eye-closed"),
      el("span", null, on ? (ed?.activeFile ? ` ${basename(ed.activeFile)}${ed.selection ? `:${ed.selection.startLine}-${ed.selection.endLine}` : ""}` : " Editor") : " No editor context"),
    );
    this.contextButton.title = on
      ? `The editor context goes with the prompt${ed ? `: ${ed.activeFile ?? "no active file"}${ed.selection ? ` (lines ${ed.selection.startLine}-${ed.selection.endLine})` : ""}, ${plural(ed.openFiles, "open file")}, ${plural(ed.diagnostics, "diagnostic")}` : ""}. Click to leave it out.`
      : "The editor context is left out. Click to attach it.";
    const rt = st.runtime;
    this.input.disabled = false;
    if (rt && rt.state !== "ready") {
      this.hint.textContent = rt.state === "starting" ? "Starting the task-x runtime…" : rt.state === "restarting" ? `The runtime stopped (${rt.reason}); restarting it.` : `The runtime could not start: ${rt.reason}`;
    } else if (this.hint.dataset.kind === "runtime") this.hint.textContent = "";
    this.hint.dataset.kind = rt && rt.state !== "ready" ? "runtime" : "";
  }

  setModels(models: ModelInfo[], selected: string | null): void {
    this.models = models.filter((m) => typeof m?.id === "string" && m.id !== "");
    if (selected !== null) this.state.model = selected;
    // A long list (Ollama, OpenRouter) can be filtered by typing.
    (this.modelSelect as SelectLike & { combobox: boolean; filter: string }).combobox = this.models.length > 12;
    (this.modelSelect as SelectLike & { filter: string }).filter = "contains";
    this.modelSelect.replaceChildren();
    this.syncModelSelect();
  }

  private syncModelSelect(): void {
    const want = this.state.model;
    if (this.modelSelect.childElementCount === 0 || (want && !this.models.some((m) => m.id === want) && !this.modelSelect.querySelector(`vscode-option[data-extra]`))) {
      const opts: HTMLElement[] = [];
      for (const m of this.models) {
        const caps = arr(m.capabilities).map(str).filter(Boolean);
        const win = num(m.contextWindow);
        const desc = [win ? `${tokens(win)} context` : "", caps.join(", "), str(m.details)].filter(Boolean).join(" · ");
        opts.push(el("vscode-option", { value: m.id, description: desc }, m.id));
      }
      if (want && !this.models.some((m) => m.id === want)) opts.unshift(el("vscode-option", { value: want, "data-extra": "1" }, want));
      if (opts.length === 0) opts.push(el("vscode-option", { value: "", disabled: true }, "No model"));
      this.modelSelect.replaceChildren(...opts);
    }
    if (want && this.modelSelect.value !== want) this.modelSelect.value = want;
    const m = this.models.find((x) => x.id === want);
    const caps = m ? arr(m.capabilities).map(str) : [];
    this.state.imagesSupported = m ? caps.includes("vision") : this.state.imagesSupported;
  }

  // ----- the status line under the transcript

  paintStats(s: Stats, running: boolean): void {
    const parts: Node[] = [];
    if (running) parts.push(el("span", { class: "working" }, icon("loading", "codicon-modifier-spin"), " Working"));
    const bits: string[] = [];
    if (s.model || this.state.model) bits.push(s.model || this.state.model || "");
    if (s.inputTokens || s.outputTokens) bits.push(`${tokens(s.inputTokens)} in · ${tokens(s.outputTokens)} out`);
    if (s.costUsd) bits.push(cost(s.costUsd));
    if (s.windowTokens) bits.push(`context ${Math.min(100, Math.round((s.usedTokens / s.windowTokens) * 100))}% of ${tokens(s.windowTokens)}`);
    parts.push(el("span", null, bits.join(" · ")));
    this.statusLine.replaceChildren(...parts);
    this.statusLine.title = s.windowTokens
      ? `${s.usedTokens.toLocaleString("en-US")} of ${s.windowTokens.toLocaleString("en-US")} context tokens used by the last model call`
      : "";
    const pct = s.windowTokens ? Math.min(100, (s.usedTokens / s.windowTokens) * 100) : 0;
    this.meter.style.width = `${pct}%`;
    this.meter.classList.toggle("high", pct >= 80);
  }

  // ----- keys, typing, mentions

  focus(): void {
    this.input.focus();
  }

  private onKey(e: KeyboardEvent): void {
    if (!this.popup.hidden && this.candidates.length + this.staticItems().length > 0) {
      const n = this.items().length;
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        this.setActive((this.active + (e.key === "ArrowDown" ? 1 : n - 1)) % n);
        return;
      }
      if ((e.key === "Enter" || e.key === "Tab") && this.active >= 0) {
        e.preventDefault();
        this.accept(this.active);
        return;
      }
      if (e.key === "Escape") {
        e.preventDefault();
        this.closePopup();
        return;
      }
    }
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing && !e.altKey) {
      e.preventDefault();
      this.submit();
    }
  }

  private onInput(): void {
    // A box holding a very long text stops growing with it (no layout of
    // the whole text to size it on every key).
    this.setHuge(this.input.textLength > HUGE_INPUT);
    this.updateQuery();
    // Pastes and mentions whose token the user deleted are dropped.
    if (this.pastes.length || this.mentions.length) this.pruneTokens();
    clearTimeout(this.draftTimer);
    this.draftTimer = window.setTimeout(() => this.saveDraft(this.input.value), 400);
  }

  private pruneTokens(): void {
    const v = this.input.value;
    const before = this.pastes.length + this.mentions.length;
    this.pastes = this.pastes.filter((p) => v.includes(p.token));
    this.mentions = this.mentions.filter((m) => v.includes(m.token));
    if (this.pastes.length + this.mentions.length !== before) this.renderChips();
  }

  /** Finds an "@query" right before the caret (only the last 256 characters are looked at). */
  private updateQuery(): void {
    if (this.input.classList.contains("huge")) return this.closePopup(); // no completion in a huge text
    const caret = this.input.selectionStart ?? 0;
    if (caret !== this.input.selectionEnd) return this.closePopup();
    const slash = caret <= 80 ? /^(\s*)\/([\w.:-]*)$/.exec(this.input.value.slice(0, caret)) : null;
    if (slash && this.state.skills.length > 0) {
      // "/name" at the start of the prompt: the skills, filtered here (no host round trip).
      this.query = { start: slash[1]!.length, text: slash[2]!, slash: true };
      this.candidates = [];
      this.renderPopup();
      return;
    }
    const from = Math.max(0, caret - 256);
    const before = this.input.value.slice(from, caret);
    const m = /(^|\s)@([^\s@]*)$/.exec(before);
    if (!m || (from > 0 && m.index === 0 && m[1] === "")) return this.closePopup();
    const text = m[2]!;
    this.query = { start: from + m.index + m[1]!.length, text };
    clearTimeout(this.mentionTimer);
    this.mentionTimer = window.setTimeout(() => {
      this.mentionReq++;
      this.post({ type: "mentionQuery", requestId: this.mentionReq, query: text });
    }, 60);
    this.renderPopup();
  }

  mentionResults(requestId: number, items: MentionCandidate[]): void {
    if (requestId !== this.mentionReq || !this.query) return;
    this.candidates = arr(items)
      .filter((i): i is MentionCandidate => typeof i === "object" && i !== null && typeof (i as MentionCandidate).path === "string")
      .slice(0, 50);
    this.renderPopup();
  }

  private staticItems(): { label: string; detail: string; mention?: Mention; skill?: string }[] {
    if (this.query?.slash) {
      const q = this.query.text.toLowerCase();
      return this.state.skills
        .filter((k) => k.name.toLowerCase().startsWith(q))
        .slice(0, 50)
        .map((k) => ({ label: `/${k.name}`, detail: k.description, skill: k.name }));
    }
    const sel = this.state.editor?.selection;
    const q = this.query?.text.toLowerCase() ?? "";
    if (sel && "selection".startsWith(q)) {
      return [{ label: "selection", detail: `${sel.path}:${sel.startLine}-${sel.endLine}`, mention: { kind: "selection", ...sel } }];
    }
    return [];
  }

  private items(): { label: string; detail: string; mention?: Mention; skill?: string }[] {
    return [
      ...this.staticItems(),
      ...this.candidates.map((c) => ({
        label: c.path + (c.kind === "folder" ? "/" : ""),
        detail: c.kind,
        mention: c.kind === "folder" ? ({ kind: "folder", path: c.path } as Mention) : ({ kind: "file", path: c.path } as Mention),
      })),
    ];
  }

  private renderPopup(): void {
    const items = this.items();
    if (!this.query || items.length === 0) {
      this.popup.hidden = true;
      this.popup.replaceChildren();
      this.input.removeAttribute("aria-activedescendant");
      this.input.setAttribute("aria-expanded", "false");
      return;
    }
    this.popup.replaceChildren(
      ...items.map((it, i) =>
        el(
          "li",
          { id: `mention-${i}`, role: "option", "data-index": i, "aria-selected": "false" },
          icon(it.skill ? "wand" : it.mention?.kind === "folder" ? "folder" : it.mention?.kind === "selection" ? "selection" : "file"),
          el("span", { class: "mention-label" }, it.label),
          el("span", { class: "muted" }, it.detail),
        ),
      ),
    );
    this.popup.hidden = false;
    this.input.setAttribute("aria-expanded", "true");
    this.setActive(Math.min(Math.max(this.active, 0), items.length - 1));
  }

  private setActive(i: number): void {
    this.active = i;
    for (const li of Array.from(this.popup.children)) li.setAttribute("aria-selected", String(li.id === `mention-${i}`));
    this.input.setAttribute("aria-activedescendant", `mention-${i}`);
    this.popup.children[i]?.scrollIntoView({ block: "nearest" });
  }

  private closePopup(): void {
    this.query = null;
    this.candidates = [];
    this.active = -1;
    this.renderPopup();
  }

  private accept(i: number): void {
    const it = this.items()[i];
    const q = this.query;
    if (!it || !q) return;
    if (it.skill) {
      this.input.setRangeText(`/${it.skill} `, q.start, q.start + 1 + q.text.length, "end");
      this.input.focus();
    } else if (it.mention) this.insertMention(it.mention, q.start, q.start + 1 + q.text.length);
    this.closePopup();
  }

  /** Puts a mention in the text (at the caret, or in place of "@query"). */
  insertMention(mention: Mention, start?: number, end?: number): void {
    if (this.mentions.length >= MAX_MENTIONS) {
      this.hint.textContent = `At most ${MAX_MENTIONS} mentions go with one prompt.`;
      return;
    }
    const token = "@" + mention.path + (mention.kind === "selection" ? `:${mention.startLine}-${mention.endLine}` : "");
    const v = this.input.value;
    const s = start ?? this.input.selectionStart ?? v.length;
    const e = end ?? this.input.selectionEnd ?? s;
    const pad = s > 0 && !/\s/.test(v[s - 1]!) ? " " : "";
    const ins = pad + token + " ";
    this.input.setRangeText(ins, s, e, "end");
    if (!this.mentions.some((m) => m.token === token)) this.mentions.push({ token, mention });
    this.renderChips();
    this.input.focus();
  }

  // ----- pastes and images

  private onPaste(e: ClipboardEvent): void {
    const dt = e.clipboardData;
    if (!dt) return;
    const files = Array.from(dt.files).filter((f) => f.type.startsWith("image/"));
    if (files.length) {
      e.preventDefault();
      void this.addFiles(files);
      return;
    }
    const text = dt.getData("text/plain");
    if (text.length > LARGE_PASTE_CHARS || countLines(text, LARGE_PASTE_LINES + 1) > LARGE_PASTE_LINES) {
      e.preventDefault();
      this.addPaste(text);
    }
  }

  /** Text dropped on the page: a large one is kept out of the box like a paste. */
  dropText(text: string): void {
    if (!text) return;
    if (text.length > LARGE_PASTE_CHARS || countLines(text, LARGE_PASTE_LINES + 1) > LARGE_PASTE_LINES) this.addPaste(text);
    else {
      const s = this.input.selectionStart ?? this.input.value.length;
      this.input.setRangeText(text, s, this.input.selectionEnd ?? s, "end");
    }
    this.input.focus();
  }

  /** Keeps a large text out of the box: a token stands for it until sending. */
  addPaste(text: string): void {
    this.pasteSeq++;
    const lines = countLines(text, Infinity);
    const token = `[Pasted text #${this.pasteSeq} · ${plural(lines, "line")} · ${bytes(text.length)}]`;
    this.pastes.push({ token, text });
    const s = this.input.selectionStart ?? this.input.value.length;
    const e = this.input.selectionEnd ?? s;
    this.input.setRangeText(token, s, e, "end");
    this.renderChips();
  }

  async addFiles(files: File[]): Promise<void> {
    for (const f of files) {
      if (!IMAGE_TYPES.includes(f.type)) {
        this.hint.textContent = `${f.name || "That file"} is not a PNG, JPEG, GIF or WebP image.`;
        continue;
      }
      if (this.images.length >= MAX_IMAGES) {
        this.hint.textContent = `At most ${MAX_IMAGES} images go with one prompt.`;
        break;
      }
      const data = await readBase64(f);
      if (data.length > MAX_IMAGE_DATA) {
        this.hint.textContent = `${f.name || "The image"} is too large (${bytes(f.size)}); the limit is about 5 MB.`;
        continue;
      }
      this.images.push({ data: { mediaType: f.type, data }, name: f.name || "image" });
    }
    if (this.images.length && !this.state.imagesSupported) this.hint.textContent = "The selected model may not read images.";
    this.renderChips();
  }

  private renderChips(): void {
    const chips: Node[] = [];
    this.images.forEach((im, i) => {
      chips.push(
        el(
          "span",
          { class: "chip image-chip" },
          el("img", { src: `data:${im.data.mediaType};base64,${im.data.data}`, alt: "" }),
          el("span", null, clip(im.name, 30)),
          el("button", { class: "chip-remove codicon codicon-close", type: "button", "aria-label": `Remove ${im.name}`, "data-remove": `i${i}` }),
        ),
      );
    });
    this.pastes.forEach((p, i) => {
      chips.push(
        el(
          "span",
          { class: "chip", title: clip(p.text, 400) },
          icon("clippy"),
          el("span", null, p.token.slice(1, -1)),
          el("button", { class: "chip-remove codicon codicon-close", type: "button", "aria-label": "Remove the pasted text", "data-remove": `p${i}` }),
        ),
      );
    });
    this.mentions.forEach((m, i) => {
      chips.push(
        el(
          "span",
          { class: "chip" },
          icon(m.mention.kind === "folder" ? "folder" : m.mention.kind === "selection" ? "selection" : "file"),
          el("span", null, m.token.slice(1)),
          el("button", { class: "chip-remove codicon codicon-close", type: "button", "aria-label": `Remove ${m.token}`, "data-remove": `m${i}` }),
        ),
      );
    });
    this.chips.replaceChildren(...chips);
  }

  private removeChip(id: string): void {
    const i = Number(id.slice(1));
    if (id[0] === "i") this.images.splice(i, 1);
    else if (id[0] === "p" || id[0] === "m") {
      const list = id[0] === "p" ? this.pastes : this.mentions;
      const tok = list[i]?.token;
      list.splice(i, 1);
      if (tok) {
        const at = this.input.value.indexOf(tok);
        if (at >= 0) this.input.setRangeText("", at, at + tok.length, "end");
      }
    }
    this.renderChips();
    this.input.focus();
  }

  // ----- sending

  /** The text with paste tokens expanded. */
  private expanded(): string {
    let v = this.input.value;
    for (const p of this.pastes) v = v.split(p.token).join(p.text);
    return v;
  }

  /** Asks the host to rewrite the prompt (prompt/refine); "refined" comes back. */
  refine(): void {
    const text = this.expanded().trim();
    if (!text) {
      this.hint.textContent = "Type a prompt first, then refine it.";
      return;
    }
    this.refineReq++;
    this.refineButton.disabled = true;
    this.hint.textContent = "Refining the prompt…";
    this.post({ type: "refine", requestId: this.refineReq, text });
  }

  /** The rewritten prompt (or why there is none); the old text can be put back. */
  refined(requestId: number, text: string | null, note: string): void {
    if (requestId !== this.refineReq) return;
    this.refineButton.disabled = false;
    if (text) {
      this.beforeRefine = this.input.value;
      this.input.value = text;
      this.pastes = [];
      this.renderChips();
      this.hint.replaceChildren(note, " ", el("button", { class: "link-button", type: "button", "data-action": "undo-refine", "data-testid": "undo-refine" }, "Undo"));
      this.saveDraft(text);
      this.input.focus();
    } else this.hint.textContent = note;
  }

  undoRefine(): void {
    if (this.beforeRefine === null) return;
    this.input.value = this.beforeRefine;
    this.beforeRefine = null;
    this.hint.textContent = "";
    this.input.focus();
  }

  submit(): void {
    const text = this.expanded().trim();
    const st = this.state;
    if (st.running && st.taskId) {
      if (!text) return;
      this.post({ type: "steer", taskId: st.taskId, text });
      this.reset(false);
      return;
    }
    if (!text && this.images.length === 0) return;
    if (st.runtime && st.runtime.state !== "ready") {
      this.hint.textContent = "The runtime is not ready yet.";
      return;
    }
    const v = this.input.value;
    this.post({
      type: "send",
      taskId: st.taskId,
      text,
      mode: st.mode,
      model: st.model,
      mentions: this.mentions.filter((m) => v.includes(m.token)).map((m) => m.mention),
      images: this.images.map((i) => i.data),
      includeEditorContext: st.includeEditorContext,
    });
    this.reset(true);
  }

  private reset(images: boolean): void {
    this.input.value = "";
    this.pastes = [];
    this.mentions = [];
    if (images) this.images = [];
    this.hint.textContent = "";
    this.renderChips();
    this.closePopup();
    this.saveDraft("");
  }

  stop(): void {
    if (this.state.taskId) this.post({ type: "stop", taskId: this.state.taskId });
  }

  toggleContext(): void {
    const enabled = !this.state.includeEditorContext;
    this.update({ includeEditorContext: enabled });
    this.post({ type: "setIncludeEditorContext", enabled });
  }

  pickImages(): void {
    this.fileInput.click();
  }

  restoreDraft(text: string): void {
    this.input.value = text;
    this.setHuge(this.input.textLength > HUGE_INPUT);
  }

  private setHuge(huge: boolean): void {
    if (huge === this.input.classList.contains("huge")) return;
    this.input.classList.toggle("huge", huge);
    this.input.spellcheck = !huge; // spell checking a huge text costs more than the typing
  }
}

function basename(p: string): string {
  const i = p.lastIndexOf("/");
  return i >= 0 ? p.slice(i + 1) : p;
}

/** Counts lines up to `stop` (fast for a large text when stop is small). */
function countLines(s: string, stop: number): number {
  let n = 1;
  for (let i = s.indexOf("\n"); i >= 0 && n < stop; i = s.indexOf("\n", i + 1)) n++;
  return n;
}

function readBase64(f: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => {
      const url = String(r.result);
      resolve(url.slice(url.indexOf(",") + 1));
    };
    r.onerror = () => reject(r.error);
    r.readAsDataURL(f);
  });
}

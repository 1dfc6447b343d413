// Markdown for model output: markdown-it with raw HTML off, the result
// sanitized by DOMPurify to a short list of tags, code highlighted by
// highlight.js (classes only, no inline styles). Links are left as <a> with
// their href; the transcript intercepts clicks and posts them to the host.
//
// StreamingMarkdown renders a growing text incrementally: the text up to the
// last blank line outside a code fence is rendered once into frozen blocks,
// and only the open tail is rendered again on each paint.

import MarkdownIt from "markdown-it";
import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import csharp from "highlight.js/lib/languages/csharp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import dockerfile from "highlight.js/lib/languages/dockerfile";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import kotlin from "highlight.js/lib/languages/kotlin";
import makefile from "highlight.js/lib/languages/makefile";
import markdown from "highlight.js/lib/languages/markdown";
import php from "highlight.js/lib/languages/php";
import python from "highlight.js/lib/languages/python";
import ruby from "highlight.js/lib/languages/ruby";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import swift from "highlight.js/lib/languages/swift";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

const languages: Record<string, Parameters<typeof hljs.registerLanguage>[1]> = {
  bash, c, cpp, csharp, css, diff, dockerfile, go, ini, java, javascript, json, kotlin, makefile,
  markdown, php, python, ruby, rust, shell, sql, swift, typescript, xml, yaml,
};
for (const [name, lang] of Object.entries(languages)) hljs.registerLanguage(name, lang);
hljs.registerAliases(["toml"], { languageName: "ini" });
hljs.registerAliases(["sh", "zsh", "console"], { languageName: "bash" });
hljs.registerAliases(["tsx", "mts", "cts"], { languageName: "typescript" });
hljs.registerAliases(["jsx", "mjs", "cjs"], { languageName: "javascript" });

/** Code longer than this is shown without highlighting (it stays fast). */
const HIGHLIGHT_LIMIT = 100_000;

let highlightOn = true;

const md = new MarkdownIt({
  html: false,
  linkify: true,
  typographer: false,
  highlight(code, lang) {
    const name = lang.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
    if (!highlightOn || code.length > HIGHLIGHT_LIMIT || !name || !hljs.getLanguage(name)) return "";
    try {
      return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
    } catch {
      return "";
    }
  },
});

// Images in model output would load remote content (the CSP blocks it anyway):
// show them as links to their source instead.
md.renderer.rules.image = (tokens, idx) => {
  const t = tokens[idx]!;
  const src = md.utils.escapeHtml(String(t.attrGet("src") ?? ""));
  const alt = md.utils.escapeHtml(t.content || "image");
  return `<a href="${src}">${alt}</a>`;
};

const ALLOWED_TAGS = [
  "a", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
  "li", "ol", "p", "pre", "s", "span", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
];
const purifyConfig = {
  ALLOWED_TAGS,
  ALLOWED_ATTR: ["href", "class", "start", "title"],
  ALLOW_DATA_ATTR: false,
  RETURN_DOM_FRAGMENT: true as const,
};

DOMPurify.addHook("uponSanitizeAttribute", (_node, data) => {
  // Only highlight.js and language classes.
  if (data.attrName === "class" && !/^(hljs[\w-]*|language-[\w+#.-]*)( (hljs[\w-]*|language-[\w+#.-]*))*$/.test(data.attrValue)) {
    data.keepAttr = false;
  }
});

/** Renders markdown to a sanitized fragment. */
export function renderMarkdown(text: string, highlight = true): DocumentFragment {
  highlightOn = highlight;
  const html = md.render(text);
  highlightOn = true;
  const frag = DOMPurify.sanitize(html, purifyConfig);
  decorateCode(frag);
  return frag;
}

/** Wraps each <pre> with a copy button (handled by delegation in the transcript). */
function decorateCode(frag: DocumentFragment): void {
  for (const pre of Array.from(frag.querySelectorAll("pre"))) {
    const wrap = document.createElement("div");
    wrap.className = "code-block";
    const btn = document.createElement("button");
    btn.className = "code-copy codicon codicon-copy";
    btn.type = "button";
    btn.title = "Copy";
    btn.setAttribute("aria-label", "Copy code");
    btn.dataset.action = "copy-code";
    pre.replaceWith(wrap);
    wrap.append(btn, pre);
  }
}

const fenceRe = /^ {0,3}(`{3,}|~{3,})/;
/** Closed blocks are rendered in chunks of about this many characters a paint. */
const CHUNK = 4096;
/** An open tail longer than this is shown as plain text while it streams. */
const TAIL_PLAIN = 16_384;
/**
 * A block (between blank lines outside a fence) longer than this is never
 * rendered as markdown: it is shown as plain text, in pieces of at most
 * PLAIN_PIECE characters, one or more a paint. Parsing and sanitizing a
 * 1.7 MB block in one go blocked the page (and, in VS Code, the workbench
 * that shares its thread) for seconds; highlight.js already skipped code
 * over 100 000 characters.
 */
export const BLOCK_MAX = 65_536;
const PLAIN_PIECE = 16_384;
/** The most characters one paint (one frame) commits, unless it paints `all`. */
const PAINT_CHARS = 32_768;

/**
 * Incremental rendering of a text that grows by appends. Nothing is ever
 * rendered in one piece larger than CHUNK (markdown) or PLAIN_PIECE (plain
 * text), and a paint stops at its deadline, so a huge answer, streamed or
 * replayed, is drawn over many frames without a long task.
 */
export class StreamingMarkdown {
  readonly el: HTMLElement;
  private text = "";
  private readonly frozen: HTMLElement;
  private readonly tail: HTMLElement;
  private committed = 0; // text[0:committed] is in frozen
  private scanned = 0; // text[0:scanned] was scanned line by line
  private fence: string | null = null; // the open fence marker, if any
  private safe = 0; // end of the last blank line outside a fence
  private bounds: number[] = []; // block boundaries after committed, in order
  private dirty = false;
  private ended = false; // the message ended: paint the rest, highlighted, then stop
  private plainBlock = false; // committed is inside a block too long for markdown (BLOCK_MAX)
  private tailPlain = false; // the tail was painted without highlighting
  private tailCostMs = 0;
  private lastTailPaint = 0;

  constructor(className = "md") {
    this.el = document.createElement("div");
    this.el.className = className;
    this.frozen = document.createElement("div");
    this.frozen.className = "md-frozen";
    this.tail = document.createElement("div");
    this.tail.className = "md-tail";
    this.el.append(this.frozen, this.tail);
  }

  /** True while something is left to paint. */
  get isDirty(): boolean {
    return this.dirty;
  }

  /** True once the message ended and everything is painted. */
  get isDone(): boolean {
    return this.ended && !this.dirty;
  }

  get value(): string {
    return this.text;
  }

  append(s: string): void {
    if (!s) return;
    this.text += s;
    if (!this.dirty) this.el.setAttribute("aria-busy", "true"); // screen readers wait for the whole answer
    this.dirty = true;
  }

  /** Replaces the whole text (for a final message that differs from the stream). */
  reset(text: string): void {
    this.text = text;
    this.committed = this.scanned = this.safe = 0;
    this.bounds = [];
    this.fence = null;
    this.plainBlock = false;
    this.frozen.replaceChildren();
    this.tail.replaceChildren();
    this.dirty = true;
  }

  /**
   * The message ended: later paints render the rest (the tail highlighted),
   * still in pieces and within each paint's deadline.
   */
  finish(): void {
    this.ended = true;
    if (this.tailPlain || this.text.length > this.committed) this.dirty = true;
    if (!this.dirty) this.el.removeAttribute("aria-busy");
  }

  /**
   * Paints what changed since the last paint, within `deadline` (a
   * performance.now() time), at least one piece a paint so a busy frame
   * still moves on: closed blocks are rendered once, in chunks of about
   * CHUNK characters, oldest first (a block over BLOCK_MAX as plain text);
   * the open tail is rendered again only when no closed block waits, without
   * highlighting, and less often when it is slow to render. A tail over
   * TAIL_PLAIN characters (a long code block still open) is shown as plain
   * text until it closes, one over BLOCK_MAX is committed as plain text.
   * After finish() the tail is rendered highlighted. `all` ignores the
   * deadline (a page search wants everything now).
   */
  paint(all = false, now = performance.now(), deadline = Infinity): void {
    if (!this.dirty) return;
    if (all) deadline = Infinity;
    const limit = all ? Infinity : PAINT_CHARS;
    this.scan();
    let first = true;
    // Besides the deadline, at most PAINT_CHARS characters a paint: the layout
    // of what a paint adds comes after it and is not on the clock.
    const start = this.committed;
    const more = () => first || (performance.now() < deadline && this.committed - start < limit);
    for (;;) {
      if (!more()) return; // stay dirty: the next frame goes on
      first = false;
      if (this.plainBlock) {
        if (!this.commitPlain()) break;
        continue;
      }
      if (this.safe > this.committed) {
        let end = this.safe;
        if (end - this.committed > CHUNK) {
          // The first boundary past CHUNK characters, else the last one.
          const i = this.bounds.findIndex((b) => b - this.committed > CHUNK);
          end = i > 0 ? this.bounds[i - 1]! : i === 0 ? this.bounds[0]! : this.safe;
        }
        if (end - this.committed > BLOCK_MAX) {
          this.plainBlock = true;
          continue;
        }
        // Each committed chunk is its own box, so layout skips the ones off screen.
        const chunk = document.createElement("div");
        chunk.className = "md-chunk";
        chunk.append(renderMarkdown(this.text.slice(this.committed, end)));
        this.frozen.append(chunk);
        this.committed = end;
        this.bounds = this.bounds.filter((b) => b > end);
        continue;
      }
      if (this.text.length - this.committed > BLOCK_MAX) {
        this.plainBlock = true;
        continue;
      }
      break;
    }
    // The open tail.
    const rest = this.text.slice(this.committed);
    if (!this.ended && this.tailCostMs > 4 && now - this.lastTailPaint < this.tailCostMs * 6) return; // stay dirty
    const t0 = performance.now();
    if (this.plainBlock || (!this.ended && rest.length > TAIL_PLAIN)) {
      // A partial line of a plain block, or a long open block while it streams.
      const pre = document.createElement("pre");
      pre.className = "md-plain";
      pre.textContent = rest;
      this.tail.replaceChildren(rest ? pre : "");
    } else {
      this.tail.replaceChildren(rest ? renderMarkdown(rest, this.ended) : "");
    }
    this.tailCostMs = performance.now() - t0;
    this.lastTailPaint = now;
    this.dirty = false;
    this.tailPlain = !this.ended && rest !== "";
    if (this.ended) {
      this.tailPlain = false;
      this.el.removeAttribute("aria-busy");
    }
  }

  /**
   * Commits the next piece of a block too long for markdown as plain text:
   * up to the block's end (its blank line), else up to the last full line
   * (all of it once the message ended), at most PLAIN_PIECE characters cut
   * at a line end when there is one. False when nothing can be committed.
   */
  private commitPlain(): boolean {
    const blockEnd = this.bounds.find((b) => b > this.committed);
    let end = blockEnd ?? (this.ended ? this.text.length : this.scanned);
    if (end <= this.committed) return false;
    if (end - this.committed > PLAIN_PIECE) {
      const nl = this.text.lastIndexOf("\n", this.committed + PLAIN_PIECE - 1);
      end = nl >= this.committed ? nl + 1 : this.committed + PLAIN_PIECE;
    }
    const pre = document.createElement("pre");
    pre.className = "md-plain md-chunk";
    pre.textContent = this.text.slice(this.committed, end);
    this.frozen.append(pre);
    this.committed = end;
    this.bounds = this.bounds.filter((b) => b > end);
    if (end === blockEnd) this.plainBlock = false;
    return true;
  }

  private scan(): void {
    const t = this.text;
    for (;;) {
      const nl = t.indexOf("\n", this.scanned);
      if (nl < 0) return;
      const line = t.slice(this.scanned, nl);
      this.scanned = nl + 1;
      const m = fenceRe.exec(line);
      if (this.fence === null) {
        if (m) this.fence = m[1]!;
        else if (line.trim() === "") {
          this.safe = this.scanned;
          this.bounds.push(this.scanned);
        }
      } else if (m && m[1]![0] === this.fence[0] && m[1]!.length >= this.fence.length && line.trim() === m[1]) {
        this.fence = null;
      }
    }
  }
}

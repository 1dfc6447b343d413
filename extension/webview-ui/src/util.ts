// Small DOM and formatting helpers. Every text that reaches the page goes in
// through textContent (el's string children), never through innerHTML.

type Child = Node | string | null | undefined | false;

/** Creates an element with attributes and children; strings become text nodes. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Record<string, string | boolean | number | undefined> | null,
  ...children: Child[]
): HTMLElementTagNameMap[K];
export function el(tag: string, attrs?: Record<string, string | boolean | number | undefined> | null, ...children: Child[]): HTMLElement;
export function el(tag: string, attrs?: Record<string, string | boolean | number | undefined> | null, ...children: Child[]): HTMLElement {
  const e = document.createElement(tag);
  if (attrs) {
    for (const k in attrs) {
      const v = attrs[k];
      if (v === undefined || v === false) continue;
      e.setAttribute(k, v === true ? "" : String(v));
    }
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c);
  }
  return e;
}

/** A codicon (light DOM, from codicon.css). */
export function icon(name: string, extra = ""): HTMLElement {
  return el("span", { class: `codicon codicon-${name}${extra ? " " + extra : ""}`, "aria-hidden": "true" });
}

// Reading fields of untrusted events: wrong types read as empty.
export const str = (v: unknown): string => (typeof v === "string" ? v : "");
export const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
export const bool = (v: unknown): boolean => v === true;
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const obj = (v: unknown): Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

export function tokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 100_000) return (n / 1000).toFixed(1).replace(/\.0$/, "") + "k";
  if (n < 1_000_000) return Math.round(n / 1000) + "k";
  return (n / 1_000_000).toFixed(2).replace(/\.?0+$/, "") + "M";
}

export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return `${m} min ${s} s`;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function cost(usd: number): string {
  if (usd === 0) return "$0";
  if (usd < 0.01) return "<$0.01";
  return "$" + usd.toFixed(2);
}

export function plural(n: number, one: string, many = one + "s"): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

/** Cuts a one-line label to n characters. */
export function clip(s: string, n: number): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > n ? one.slice(0, n - 1) + "…" : one;
}

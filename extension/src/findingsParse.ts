// Review findings (protocol.md "Review findings"): a review answer can end with
// a fenced code block whose language is `task-x-findings`, holding a JSON array
// of { path, line, severity: "error"|"warning"|"info", message }. The runtime
// parses them for team mode's review subagents (subagentFinished.findings,
// summary.findings); an answer of any other task (the Review command's, a chat
// answer) is parsed here, with the same rules as the runtime's team.ParseFindings.
// No vscode import: the unit tests run this in Node.
import type { Finding } from './protocol';

export type { Finding };

export const FINDINGS_LANG = 'task-x-findings';
export const MAX_FINDINGS = 200;
export const MAX_FINDING_MESSAGE = 2000;
const MAX_PATH = 1024;
const SEVERITIES = ['error', 'warning', 'info'] as const;

/** The bodies of the fenced blocks (``` or ~~~, indented at most 3 spaces) whose language is `lang`. */
export function fencedBlocks(text: string, lang: string): string[] {
  const out: string[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]);
    if (!open) continue;
    const fence = open[1];
    let j = i + 1;
    const body: string[] = [];
    for (; j < lines.length; j++) {
      const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(lines[j]);
      if (close && close[1][0] === fence[0] && close[1].length >= fence.length) break;
      body.push(lines[j]);
    }
    if (open[2].toLowerCase() === lang) out.push(body.join('\n'));
    i = j;
  }
  return out;
}

/** A finding from one untrusted JSON value, or undefined when it is not usable. */
export function toFinding(raw: unknown): Finding | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const o = raw as Record<string, unknown>;
  const p = cleanPath(o.path);
  if (!p) return undefined;
  const line = typeof o.line === 'number' ? o.line : typeof o.line === 'string' && /^\d+$/.test(o.line) ? Number(o.line) : NaN;
  if (!Number.isInteger(line) || line < 1) return undefined;
  const sev = typeof o.severity === 'string' ? o.severity.toLowerCase() : '';
  if (!(SEVERITIES as readonly string[]).includes(sev)) return undefined;
  if (typeof o.message !== 'string' || o.message.trim() === '') return undefined;
  let message = o.message.trim();
  if (message.length > MAX_FINDING_MESSAGE) message = `${message.slice(0, MAX_FINDING_MESSAGE - 1)}…`;
  return { path: p, line, severity: sev as Finding['severity'], message };
}

/** A relative path with "/", "./" dropped and cleaned; undefined when absolute, leaving its root, or with control characters. */
export function cleanPath(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  let p = v.trim().replace(/\\/g, '/');
  if (p === '' || p.length > MAX_PATH || /[\u0000-\u001f\u007f]/.test(p)) return undefined;
  if (p.startsWith('/') || /^[a-zA-Z]:\//.test(p)) return undefined;
  const parts: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') return undefined;
    parts.push(seg);
  }
  p = parts.join('/');
  return p === '' ? undefined : p;
}

/** Every finding of every task-x-findings block of `text`, in order, without duplicates, at most MAX_FINDINGS. Never throws. */
export function parseFindings(text: string): Finding[] {
  const out: Finding[] = [];
  const seen = new Set<string>();
  for (const body of fencedBlocks(text, FINDINGS_LANG)) {
    let arr: unknown;
    try {
      arr = JSON.parse(body);
    } catch {
      continue;
    }
    if (!Array.isArray(arr)) continue;
    for (const raw of arr) {
      const f = toFinding(raw);
      if (!f) continue;
      const key = JSON.stringify([f.path, f.line, f.severity, f.message]);
      if (seen.has(key)) continue;
      if (out.length === MAX_FINDINGS) return out;
      seen.add(key);
      out.push(f);
    }
  }
  return out;
}

/** The largest 0-based line a diagnostic gets when the file's length is unknown. */
export const MAX_DIAGNOSTIC_LINE = 2 ** 31 - 1;

/**
 * Where a finding of 1-based `line` goes in a file of `lineLengths` (the length of each
 * line; undefined when the file could not be read): a line past the end is clamped to the
 * last line with text (a model's line numbers can be off, and a diagnostic past the end
 * was dropped or misplaced), the range covers the line's text. 0-based.
 */
export function clampLine(line: number, lineLengths: readonly number[] | undefined): { line: number; end: number } {
  let l = Number.isFinite(line) ? Math.max(0, Math.floor(line) - 1) : 0;
  if (!lineLengths || lineLengths.length === 0) return { line: Math.min(l, MAX_DIAGNOSTIC_LINE), end: 0 };
  // The empty line after a final newline holds nothing to point at.
  let last = lineLengths.length - 1;
  if (last > 0 && lineLengths[last] === 0) last--;
  if (l > last) l = last;
  return { line: l, end: lineLengths[l] ?? 0 };
}

/** The length of each line of `text` ("\n", "\r\n" or "\r" ends a line), as VS Code counts lines. */
export function lineLengths(text: string): number[] {
  return text.split(/\r\n|\r|\n/).map((l) => l.length);
}

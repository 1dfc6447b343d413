// Unified diffs (approval previews, apply_patch input) parsed and applied in
// memory, to show a preview in VS Code's diff editor. Pure, unit-tested in Node.

/** One file of a unified diff. */
export interface FilePatch {
  oldPath: string | null;
  newPath: string | null;
  hunks: { oldStart: number; lines: string[] }[];
}

/** Parses a unified diff (git style, as previews and apply_patch carry it). */
export function parseUnifiedDiff(text: string): FilePatch[] {
  const files: FilePatch[] = [];
  let cur: FilePatch | undefined;
  let hunk: { oldStart: number; lines: string[] } | undefined;
  let oldLeft = 0;
  let newLeft = 0;
  const strip = (p: string): string | null => {
    const t = p.trim().split('\t')[0];
    if (t === '/dev/null') return null;
    return t.replace(/^[ab]\//, '');
  };
  for (const line of text.split('\n')) {
    if (line.startsWith('--- ')) {
      cur = { oldPath: strip(line.slice(4)), newPath: null, hunks: [] };
      files.push(cur);
      hunk = undefined;
    } else if (line.startsWith('+++ ') && cur && !hunk) {
      cur.newPath = strip(line.slice(4));
    } else if (line.startsWith('@@') && cur) {
      const m = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
      if (!m) continue;
      hunk = { oldStart: Number(m[1]), lines: [] };
      oldLeft = m[2] === undefined ? 1 : Number(m[2]);
      newLeft = m[3] === undefined ? 1 : Number(m[3]);
      cur.hunks.push(hunk);
    } else if (hunk && line.startsWith('\\')) {
      hunk.lines.push(line);
    } else if (hunk && (oldLeft > 0 || newLeft > 0)) {
      // A context line whose single space was trimmed arrives empty.
      const l = line === '' ? ' ' : line;
      if (l.startsWith(' ')) {
        oldLeft--;
        newLeft--;
      } else if (l.startsWith('-')) oldLeft--;
      else if (l.startsWith('+')) newLeft--;
      else continue;
      hunk.lines.push(l);
    }
  }
  return files;
}

/** Applies one file's hunks to `original`; undefined when a hunk does not match (the file moved on). */
export function applyPatch(original: string, patch: FilePatch): string | undefined {
  const eol = original.includes('\r\n') ? '\r\n' : '\n';
  const src = original === '' ? [] : original.split(/\r?\n/);
  const endsWithNewline = original.endsWith('\n');
  if (endsWithNewline) src.pop();
  const out: string[] = [];
  let pos = 0;
  let noNewlineAtEnd = false;
  for (const h of patch.hunks) {
    const start = Math.max(0, h.oldStart - 1);
    if (start < pos) return undefined;
    while (pos < start && pos < src.length) out.push(src[pos++]);
    let lastWasAdd = false;
    for (const l of h.lines) {
      const body = l.slice(1);
      if (l.startsWith('\\')) {
        if (lastWasAdd) noNewlineAtEnd = true;
        continue;
      }
      if (l.startsWith(' ')) {
        if (src[pos] !== body) return undefined;
        out.push(src[pos++]);
        lastWasAdd = false;
      } else if (l.startsWith('-')) {
        if (src[pos] !== body) return undefined;
        pos++;
        lastWasAdd = false;
      } else {
        out.push(body);
        lastWasAdd = true;
      }
    }
  }
  while (pos < src.length) out.push(src[pos++]);
  if (out.length === 0) return '';
  return out.join(eol) + (noNewlineAtEnd ? '' : eol);
}

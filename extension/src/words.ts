// Small wording helpers for labels the user reads (no vscode import: unit-tested in Node).

/** "1 file", "2 files", "0 files". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

const TOOL_WORDS: Record<string, string> = {
  write_file: 'Wrote the file',
  replace_text: 'Replaced text',
  delete_path: 'Deleted',
  apply_patch: 'Applied a patch',
  move_path: 'Moved',
  worktree_apply: 'Applied a best-of-N candidate',
};

/**
 * A Changes-view row for one edit operation: what it did and when, not its id
 * ("Replaced text · 20:41:07" rather than "#op-b36911-5 replace_text"); `n` counts
 * the file's operations from 1. The id stays in the tooltip.
 */
export function operationLabel(n: number, op: { tool?: string; time?: string } | undefined): string {
  const tool = op?.tool ?? '';
  const what = TOOL_WORDS[tool] ?? (tool ? tool.replace(/[_/]+/g, ' ').replace(/^./, (c) => c.toUpperCase()) : 'Edit');
  const t = op?.time ? new Date(op.time) : undefined;
  const when = t && !Number.isNaN(t.getTime()) ? ` · ${[t.getHours(), t.getMinutes(), t.getSeconds()].map((x) => String(x).padStart(2, '0')).join(':')}` : '';
  return `${n}. ${what}${when}`;
}

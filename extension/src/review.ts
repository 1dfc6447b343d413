// The Review command (issue 36 item 13, like Codex's /review): reviews the
// uncommitted changes, or the branch against a base the user picks, as a
// read-only (ask mode) task with the review role's instructions; the answer's
// task-x-findings block lands in the Problems panel (findings.ts).
//
// The diff comes from VS Code's own Git extension (its API): this extension
// runs no git itself, so nothing a repository plants (.git/config drivers,
// hooks, fsmonitor) runs on our account, and in an untrusted workspace, where
// VS Code's Git is off, there is nothing to review.
import * as vscode from 'vscode';

/** The part of the vscode.git API (extensions/git/src/api/git.d.ts, version 1) used here. */
interface GitChange {
  uri: vscode.Uri;
}
interface GitRef {
  name?: string;
  type: number;
}
interface GitRepository {
  rootUri: vscode.Uri;
  state: { HEAD?: { name?: string; commit?: string }; refs?: GitRef[] };
  diff(cached?: boolean): Promise<string>;
  diffWithHEAD(): Promise<GitChange[]>;
  diffBetween(ref1: string, ref2: string): Promise<GitChange[]>;
  diffBetween(ref1: string, ref2: string, path: string): Promise<string>;
  getRefs?(query: { pattern?: string }): Promise<GitRef[]>;
}
interface GitApi {
  repositories: GitRepository[];
  getRepository(uri: vscode.Uri): GitRepository | null;
  openRepository?(root: vscode.Uri): Promise<GitRepository | null>;
}

/** The diff is cut here: the model gets the rest through its read tools. */
export const MAX_REVIEW_DIFF = 200_000;

export type ReviewTarget = { kind: 'uncommitted' } | { kind: 'branch'; base: string };

async function gitApi(): Promise<GitApi | undefined> {
  const ext = vscode.extensions.getExtension<{ getAPI(v: 1): GitApi }>('vscode.git');
  if (!ext) return undefined;
  const exp = ext.isActive ? ext.exports : await ext.activate();
  return exp?.getAPI(1);
}

/** The repository of the workspace folder, opened through VS Code's Git when it has not found it yet. */
export async function repositoryOf(folder: vscode.Uri): Promise<GitRepository | undefined> {
  const api = await gitApi();
  if (!api) return undefined;
  return api.getRepository(folder) ?? (await api.openRepository?.(folder)) ?? undefined;
}

/** The diff under review as unified diff text, cut at MAX_REVIEW_DIFF. */
export async function reviewDiff(repo: GitRepository, target: ReviewTarget): Promise<{ diff: string; files: number; cut: boolean }> {
  let diff = '';
  let files = 0;
  if (target.kind === 'uncommitted') {
    const staged = await repo.diff(true);
    const unstaged = await repo.diff(false);
    diff = [staged, unstaged].filter((d) => d.trim() !== '').join('\n');
    files = (await repo.diffWithHEAD()).length;
  } else {
    const changes = await repo.diffBetween(target.base, 'HEAD');
    files = changes.length;
    for (const c of changes) {
      if (diff.length > MAX_REVIEW_DIFF) break;
      diff += await repo.diffBetween(target.base, 'HEAD', c.uri.fsPath);
      diff += '\n';
    }
  }
  const cut = diff.length > MAX_REVIEW_DIFF;
  return { diff: cut ? diff.slice(0, MAX_REVIEW_DIFF) : diff, files, cut };
}

/** The review prompt: what to review, the diff, and the findings block to end with (protocol.md "Review findings"). */
export function reviewPrompt(target: ReviewTarget, diff: string, cut: boolean): string {
  const what = target.kind === 'uncommitted' ? 'the uncommitted changes in this repository' : `the changes of this branch against ${target.base}`;
  return [
    `Review ${what}. Act as a careful code reviewer: look for bugs, security problems, missing error handling, missing tests and unclear code. Read the surrounding code with your tools where the diff alone is not enough. Do not change any file.`,
    '',
    'End your answer with a fenced code block whose language is `task-x-findings`, holding a JSON array of findings, one per problem: `{ "path": "relative/path", "line": <1-based line in the new file>, "severity": "error" | "warning" | "info", "message": "what is wrong and how to fix it" }`. Use an empty array when you found nothing.',
    '',
    cut ? `The diff (cut at ${MAX_REVIEW_DIFF} characters; read the files for the rest):` : 'The diff:',
    '```diff',
    diff.replace(/```/g, '`\u200b``'),
    '```',
  ].join('\n');
}

/** Asks what to review: the uncommitted changes, or the branch against a base picked from the repository's branches. */
export async function pickReviewTarget(repo: GitRepository): Promise<ReviewTarget | undefined> {
  const pick = await vscode.window.showQuickPick(
    [
      { label: 'Uncommitted changes', description: 'staged and unstaged', target: 'uncommitted' as const },
      { label: 'This branch against a base…', description: repo.state.HEAD?.name ?? '', target: 'branch' as const },
    ],
    { placeHolder: 'Review what?' },
  );
  if (!pick) return undefined;
  if (pick.target === 'uncommitted') return { kind: 'uncommitted' };
  const refs = (await repo.getRefs?.({})) ?? repo.state.refs ?? [];
  const names = refs.map((r) => r.name).filter((n): n is string => !!n && n !== repo.state.HEAD?.name);
  const base = await vscode.window.showQuickPick(names.length > 0 ? names : ['main'], { placeHolder: 'Against which base branch?' });
  return base ? { kind: 'branch', base } : undefined;
}

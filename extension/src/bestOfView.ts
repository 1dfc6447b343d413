// The comparison of best-of-N candidates (issue 36 item 2), rendered as HTML
// text by the host. No vscode import: the unit tests render it in Node.
// Everything a candidate carries (its report, errors, validation output, paths)
// is model or tool output, so it is escaped; the page's only script is the
// host's own (a nonce), and its messages name a candidate the host checks.
import type { Candidate, FinishedCandidate, ValidationResult } from './protocol';

export function escapeHtml(s: unknown): string {
  return String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The files a unified diff touches (its +++ lines, else its --- lines), in order. */
export function patchFiles(patch: string): string[] {
  const out: string[] = [];
  let minus: string | null = null;
  for (const line of patch.split('\n')) {
    if (line.startsWith('--- ')) minus = line.slice(4).replace(/^a\//, '').trim();
    else if (line.startsWith('+++ ')) {
      const plus = line.slice(4).replace(/^b\//, '').trim();
      const p = plus === '/dev/null' ? minus : plus;
      if (p && p !== '/dev/null' && !out.includes(p)) out.push(p);
    }
  }
  return out;
}

export type CandidateState = 'open' | 'applied' | 'discarded';

/** A provider a best-of-N run was asked to use, by the name the user gave it. */
export interface AskedProvider {
  name: string;
  kind: string;
  model: string;
}

export interface ViewState {
  prompt: string;
  running: boolean;
  /** The providers asked, in order: candidate i of the result is asked[i]'s. */
  asked: AskedProvider[];
  /** While running: each candidate's state by its index in `asked` (waiting, running, completed, failed…), from its subagent's events. */
  progress?: Record<number, string>;
  /** While running: the open approval or question of a candidate, by its index in `asked`. */
  waiting?: Record<number, { id: string; kind: string }>;
  candidates: Candidate[];
  costUsd: number;
  states: Record<string, CandidateState>;
  /** The edit-log operation of the applied candidate (for Undo). */
  appliedOperation: string | null;
  message: string | null;
}

function finished(c: Candidate): c is FinishedCandidate {
  return 'patch' in c;
}

function money(usd: number): string {
  return usd > 0 && usd < 0.01 ? '<$0.01' : `$${usd.toFixed(2)}`;
}

function validations(list: ValidationResult[]): string {
  if (list.length === 0) return '<div class="muted">No checks ran.</div>';
  return list
    .map((v) => {
      const why = v.timedOut ? 'timed out' : v.passed ? 'passed' : `failed (exit ${v.exitCode})`;
      return `<details class="check ${v.passed ? 'ok' : 'fail'}" data-testid="candidate-check"><summary>${v.passed ? '✓' : '✗'} ${escapeHtml(v.name)} <code>${escapeHtml(v.command)}</code> ${why}</summary><pre>${escapeHtml(v.output)}</pre></details>`;
    })
    .join('');
}

function column(c: Candidate, st: ViewState, index: number): string {
  const name = c.name ?? '';
  const state = name ? (st.states[name] ?? 'open') : 'open';
  const provider = st.asked[index]?.name;
  const head = `<div class="head" data-testid="candidate-provider">${provider ? `<strong>${escapeHtml(provider)}</strong> <span class="muted">${escapeHtml(c.model)} · ${escapeHtml(c.kind)}</span>` : `<strong>${escapeHtml(c.model)}</strong> <span class="muted">${escapeHtml(c.kind)}</span>`}</div>`;
  const status = `<div class="status status-${escapeHtml(c.status)}" data-testid="candidate-status">${escapeHtml(c.status)}${state !== 'open' ? ` · ${state}` : ''}</div>`;
  if (!finished(c)) {
    return `<section class="candidate failed" data-testid="candidate" data-index="${index}">${head}${status}<div class="error">${escapeHtml(c.error ?? 'failed')}</div></section>`;
  }
  const files = patchFiles(c.patch);
  const fileRows = files
    .map((f) => `<li><button class="link" data-action="openFile" data-name="${escapeHtml(name)}" data-path="${escapeHtml(f)}" data-testid="candidate-file">${escapeHtml(f)}</button></li>`)
    .join('');
  const canAct = name !== '' && state === 'open' && !st.running;
  const applied = Object.values(st.states).includes('applied');
  const buttons = [
    `<button data-action="openPatch" data-name="${escapeHtml(name)}" data-testid="candidate-patch" ${name ? '' : 'disabled'}>Open patch</button>`,
    canAct && !applied ? `<button class="primary" data-action="apply" data-name="${escapeHtml(name)}" data-testid="candidate-apply">Apply</button>` : '',
    canAct ? `<button data-action="discard" data-name="${escapeHtml(name)}" data-testid="candidate-discard">Discard</button>` : '',
    state === 'applied' && st.appliedOperation ? `<button data-action="undo" data-name="${escapeHtml(name)}" data-testid="candidate-undo">Undo apply</button>` : '',
  ].join(' ');
  return `<section class="candidate" data-testid="candidate" data-index="${index}" data-name="${escapeHtml(name)}">
${head}${status}
<div class="meta" data-testid="candidate-meta">${c.files} file${c.files === 1 ? '' : 's'} <span class="add">+${c.added}</span> <span class="del">−${c.removed}</span> · ${c.tokens} tokens · ${money(c.costUsd)}</div>
<ul class="files">${fileRows}</ul>
${c.patchTruncated ? '<div class="muted">The patch is cut; the worktree holds all of it.</div>' : ''}
<div class="checks">${validations(c.validations ?? [])}</div>
<details class="report" open><summary>Report</summary><pre data-testid="candidate-report">${escapeHtml(c.report ?? '')}</pre></details>
<div class="actions">${buttons}</div>
</section>`;
}

/** The panel's whole document. */
export function renderBestOf(st: ViewState, nonce: string, cspSource: string): string {
  const csp = `default-src 'none'; script-src 'nonce-${nonce}'; style-src ${cspSource} 'nonce-${nonce}';`;
  const open = st.candidates.filter((c) => c.name && (st.states[c.name] ?? 'open') === 'open').length;
  const applied = Object.values(st.states).includes('applied');
  const body = st.running
    ? `<div class="running" data-testid="bestof-running">Running ${st.asked.length} candidates… <button data-action="stop" data-testid="bestof-stop">Stop</button></div><ul>${st.asked
        .map((a, i) => {
          const w = st.waiting?.[i];
          const asks = w
            ? ` · <strong class="asks">${w.kind === 'approval' ? 'waits for your approval' : 'has a question for you'}</strong> <button class="primary" data-action="showRequest" data-index="${i}" data-testid="bestof-show-request">${w.kind === 'approval' ? 'Show approval' : 'Show question'}</button>`
            : '';
          return `<li data-testid="bestof-progress" data-index="${i}"><strong>${escapeHtml(a.name)}</strong> <span class="muted">${escapeHtml(a.model)} · ${escapeHtml(a.kind)}</span>: ${escapeHtml(st.progress?.[i] ?? 'waiting')}${asks}</li>`;
        })
        .join('')}</ul>`
    : `<div class="bar">${st.candidates.length} candidates · ${money(st.costUsd)} in all${applied && open > 0 ? ` <button data-action="discardOthers" data-testid="discard-others">Discard the other ${open}</button>` : ''}</div>
<div class="grid">${st.candidates.map((c, i) => column(c, st, i)).join('')}</div>`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<title>Best of ${st.candidates.length || st.asked.length}</title>
<style nonce="${nonce}">
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 8px 12px; }
.prompt { white-space: pre-wrap; margin-bottom: 8px; }
.grid { display: grid; gap: 10px; align-items: start; grid-template-columns: repeat(${Math.max(1, st.candidates.length)}, minmax(220px, 1fr)); overflow-x: auto; }
.candidate { border: 1px solid var(--vscode-panel-border, #8884); border-radius: 4px; padding: 8px; min-width: 0; }
.candidate.failed { opacity: 0.8; }
.muted { color: var(--vscode-descriptionForeground); }
.status-completed { color: var(--vscode-charts-green, inherit); } .status-failed { color: var(--vscode-errorForeground); }
.error { color: var(--vscode-errorForeground); white-space: pre-wrap; }
.add { color: var(--vscode-gitDecoration-addedResourceForeground, green); } .del { color: var(--vscode-gitDecoration-deletedResourceForeground, red); }
pre { white-space: pre-wrap; word-break: break-word; max-height: 240px; overflow: auto; background: var(--vscode-textCodeBlock-background); padding: 4px; }
.files { padding-left: 16px; margin: 4px 0; }
button { font: inherit; color: var(--vscode-button-secondaryForeground); background: var(--vscode-button-secondaryBackground); border: none; padding: 3px 8px; cursor: pointer; }
button.primary { color: var(--vscode-button-foreground); background: var(--vscode-button-background); }
button.link { background: none; color: var(--vscode-textLink-foreground); padding: 0; }
.message { margin: 6px 0; }
.asks { color: var(--vscode-notificationsWarningIcon-foreground, inherit); }
</style></head>
<body data-testid="bestof-root">
<div class="prompt"><strong>Best of ${st.candidates.length || st.asked.length}:</strong> ${escapeHtml(st.prompt)}</div>
${st.message ? `<div class="message" data-testid="bestof-message">${escapeHtml(st.message)}</div>` : ''}
${body}
<script nonce="${nonce}">
const vscode = acquireVsCodeApi();
document.addEventListener('click', (e) => {
  const b = e.target.closest('button[data-action]');
  if (!b || b.disabled) return;
  vscode.postMessage({ type: b.dataset.action, name: b.dataset.name || null, path: b.dataset.path || null, index: b.dataset.index === undefined ? null : Number(b.dataset.index) });
});
</script>
</body></html>`;
}

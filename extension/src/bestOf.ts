// Best of N (issue 36 item 2): one prompt on 2 to 4 providers at once
// (agent/bestOf, each candidate an implementation subagent in its own
// worktree), then the candidates side by side in a panel: status, checks,
// cost, tokens, files and line counts, the report. A candidate's files open in
// the diff editor (the working tree against its worktree), its patch as a
// document; Apply merges it through the edit log (worktrees/apply: pending in
// Changes, undoable), Discard removes a worktree (worktrees/discard), and the
// Clean Up Worktrees command lists leftovers (worktrees/list).
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { patchFiles, renderBestOf, type ViewState } from './bestOfView';
import type { ChangesView } from './changes';
import type { PreviewDocuments } from './diffs';
import { describeError } from './errors';
import type { BestOfResult, FinishedCandidate, GitInfo } from './protocol';
import type { Providers } from './providers';
import type { RuntimeClient } from './runtimeClient';
import type { TaskService } from './taskService';

const ACTIONS = ['apply', 'discard', 'discardOthers', 'undo', 'openPatch', 'openFile', 'stop', 'showRequest'] as const;
type Action = (typeof ACTIONS)[number];

export class BestOf implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  state: ViewState | undefined;
  taskId: string | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  /** The comparison changed (a run ended, a candidate applied, discarded or undone). */
  readonly onDidChange = this.changed.event;
  /** Opens a task's open approvals and questions (the chat, set by activate). */
  showTask: ((taskId: string) => Promise<void>) | undefined;
  /** Shows a starting run in the chat too (set by activate): its candidates' progress. */
  showInChat: ((taskId: string, prompt: string, providers: string[]) => Promise<void>) | undefined;

  constructor(
    private readonly runtime: RuntimeClient,
    private readonly tasks: TaskService,
    private readonly providers: Providers,
    private readonly changes: ChangesView,
    private readonly previews: PreviewDocuments,
    private readonly root: () => string | undefined,
    /** The open workspace's git state (workspace/open's project.git): null outside a git
     * repository, undefined while unknown (not opened yet). */
    private readonly git: () => GitInfo | null | undefined = () => undefined,
  ) {
    // Each candidate's progress while the run goes, by its index among the providers asked
    // (two providers of the same kind and model are two rows): its subagent's start and end.
    // subagentStarted's `candidate` is that index; from a runtime without it, a subagent takes
    // the first row of its kind and model not yet taken. The result's candidates are in the
    // order asked.
    this.disposables.push(
      tasks.onEvent(({ taskId, event, replay }) => {
        const st = this.state;
        if (replay || !st?.running || taskId !== this.taskId) return;
        const ev = event as unknown as { type: string; kind?: unknown; model?: unknown; status?: unknown; taskId?: unknown; candidate?: unknown };
        if (ev.type === 'subagentStarted' && typeof ev.kind === 'string' && typeof ev.model === 'string' && typeof ev.taskId === 'string') {
          const taken = new Set(this.subs.values());
          const c = ev.candidate;
          const i =
            typeof c === 'number' && Number.isInteger(c) && c >= 0 && c < st.asked.length && !taken.has(c)
              ? c
              : st.asked.findIndex((a, j) => !taken.has(j) && a.kind === ev.kind && a.model === ev.model);
          if (i < 0) return;
          this.subs.set(ev.taskId, i);
          const a = st.asked[i];
          this.tasks.labels.set(ev.taskId, `Best of N candidate ${i + 1} (${a.name}, ${a.model})`);
          st.progress = { ...st.progress, [i]: 'running' };
          this.render();
        } else if (ev.type === 'subagentFinished' && typeof ev.taskId === 'string' && this.subs.has(ev.taskId)) {
          const i = this.subs.get(ev.taskId)!;
          st.progress = { ...st.progress, [i]: typeof ev.status === 'string' ? ev.status : 'ended' };
          this.render();
        }
      }),
      // A candidate's approval or question: the panel says so and opens it (the chat shows none of them).
      tasks.onRequest((p) => {
        const st = this.state;
        const i = this.subs.get(p.taskId);
        if (!st?.running || i === undefined) return;
        st.waiting = { ...st.waiting, [i]: { id: p.id, kind: p.kind } };
        this.render();
      }),
      tasks.onRequestClosed((id) => this.requestDone(id)),
      tasks.onDidAnswer((id) => this.requestDone(id)),
    );
  }

  private requestDone(id: string): void {
    const st = this.state;
    if (!st?.waiting) return;
    const i = Object.keys(st.waiting).find((k) => st.waiting![Number(k)]?.id === id);
    if (i === undefined) return;
    const { [Number(i)]: _gone, ...rest } = st.waiting;
    st.waiting = rest;
    this.render();
  }

  private readonly disposables: vscode.Disposable[] = [];
  /** A candidate's subagent task id → its index among the providers asked. */
  private readonly subs = new Map<string, number>();

  /** The Best of N command: asks for 2-4 providers and the prompt when not given. */
  async command(prompt?: string, names?: string[]): Promise<BestOfResult | undefined> {
    if (!this.gitReady()) return undefined;
    if (!names) {
      const picks = await vscode.window.showQuickPick(
        this.providers.list().map((p) => ({ label: p.name, description: `${p.kind} · ${p.model}` })),
        { canPickMany: true, placeHolder: 'Run the prompt on which providers? (2 to 4)' },
      );
      if (!picks) return undefined;
      names = picks.map((p) => p.label);
    }
    if (names.length < 2 || names.length > 4) {
      void vscode.window.showWarningMessage('task-x: Best of N runs on 2 to 4 providers.');
      return undefined;
    }
    prompt ??= await vscode.window.showInputBox({ prompt: 'The task every candidate does', placeHolder: 'Add a --verbose flag to the CLI' });
    if (!prompt) return undefined;
    return this.run(prompt, names);
  }

  /**
   * Each candidate works in a git worktree of the workspace, so a folder that is not a git
   * repository, or one without a commit, is told so before anything is asked (QA: the run
   * failed after the providers and the prompt, with the runtime's "agent/bestOf needs ...").
   */
  private gitReady(): boolean {
    const g = this.git();
    if (g === undefined || (g && g.head)) return true; // unknown: the runtime decides
    const why = g === null ? 'this folder is not a git repository' : 'its git repository has no commit yet';
    void vscode.window.showErrorMessage(
      `task-x: Best of N runs each candidate in its own git worktree, and ${why}. Make a commit (git init, git add, git commit) and run it again.`,
    );
    return false;
  }

  async run(prompt: string, names: string[]): Promise<BestOfResult | undefined> {
    if (!this.gitReady()) return undefined;
    // Every provider that needs a key has one, before anything starts: the runtime would
    // refuse the whole run with "providers[0].apiKey is required", naming no provider.
    for (const n of await this.providers.missingKeys(names)) {
      if (!(await this.providers.offerKey(n, 'Best of N did not start. '))) return undefined;
    }
    const wired = [];
    const asked = [];
    for (const n of names) {
      const p = this.providers.list().find((x) => x.name === n);
      if (!p) throw new Error(`No provider named ${n}.`);
      wired.push(await this.providers.wire(p));
      asked.push({ name: p.name, kind: p.kind, model: p.model });
    }
    this.subs.clear();
    this.state = { prompt, running: true, asked, candidates: [], costUsd: 0, states: {}, appliedOperation: null, message: null };
    this.show();
    const run = this.tasks.startBestOf(prompt, wired);
    this.taskId = run.taskId;
    void this.showInChat?.(run.taskId, prompt, names).catch(() => undefined);
    try {
      const r = await run.done;
      this.state.candidates = Array.isArray(r.candidates) ? r.candidates : [];
      this.state.costUsd = typeof r.costUsd === 'number' ? r.costUsd : 0;
      return r;
    } catch (err) {
      this.state.message = `Best of N failed: ${describeError(err)}`;
      return undefined;
    } finally {
      this.state.running = false;
      this.render();
    }
  }

  private show(): void {
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel('taskX.bestOf', 'task-x: Best of N', vscode.ViewColumn.Active, { enableScripts: true, localResourceRoots: [] });
      this.panel.webview.onDidReceiveMessage((m) => void this.receive(m));
      this.panel.onDidDispose(() => (this.panel = undefined));
    } else this.panel.reveal();
    this.render();
  }

  private render(): void {
    if (this.panel && this.state) this.panel.webview.html = renderBestOf(this.state, randomBytes(18).toString('base64'), this.panel.webview.cspSource);
    this.changed.fire();
  }

  private candidate(name: unknown): FinishedCandidate | undefined {
    if (typeof name !== 'string' || !name) return undefined;
    return this.state?.candidates.find((c): c is FinishedCandidate => c.name === name && 'patch' in c);
  }

  /** A message from the panel: untrusted; it must name a candidate of the shown run. */
  async receive(raw: unknown): Promise<void> {
    const m = raw as { type?: unknown; name?: unknown; path?: unknown; index?: unknown } | null;
    if (!m || typeof m.type !== 'string' || !(ACTIONS as readonly string[]).includes(m.type) || !this.state) return;
    const action = m.type as Action;
    if (this.state.running) {
      if (action === 'stop' && this.taskId) this.tasks.stop(this.taskId);
      if (action === 'showRequest') await this.showRequest(Number(m.index));
      return;
    }
    try {
      if (action === 'discardOthers') {
        for (const c of this.state.candidates) if (c.name && (this.state.states[c.name] ?? 'open') === 'open') await this.discard(c.name);
        return;
      }
      const c = this.candidate(m.name);
      if (!c || !c.name) return;
      switch (action) {
        case 'apply':
          await this.apply(c.name);
          return;
        case 'discard':
          await this.discard(c.name);
          return;
        case 'undo':
          await this.undo(c.name);
          return;
        case 'openPatch': {
          const doc = await vscode.workspace.openTextDocument({ content: c.patch, language: 'diff' });
          await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Beside });
          return;
        }
        case 'openFile':
          if (typeof m.path === 'string') await this.openFile(c.name, m.path);
          return;
      }
    } catch (err) {
      this.state.message = describeError(err);
      this.render();
    }
  }

  /** Opens the open approval or question of the candidate at `index` (only one the panel shows). */
  async showRequest(index: number): Promise<boolean> {
    const w = Number.isInteger(index) ? this.state?.waiting?.[index] : undefined;
    const p = w ? this.tasks.pending.get(w.id) : undefined;
    if (!p || !this.showTask) return false;
    await this.showTask(p.taskId);
    return true;
  }

  /** The working tree's file against the candidate's, in the diff editor; only a file its patch names. */
  async openFile(name: string, rel: string): Promise<boolean> {
    const c = this.candidate(name);
    const root = this.root();
    if (!c?.dir || !root || !patchFiles(c.patch).includes(rel)) return false;
    const mine = path.resolve(root, rel);
    const theirs = path.resolve(c.dir, rel);
    if (!mine.startsWith(root + path.sep) || !theirs.startsWith(path.resolve(c.dir) + path.sep)) return false;
    const left = existsSync(mine) ? vscode.Uri.file(mine) : this.previews.put('original', rel, '');
    const right = existsSync(theirs) ? vscode.Uri.file(theirs) : this.previews.put('deleted', rel, '');
    await vscode.commands.executeCommand('vscode.diff', left, right, `${path.basename(rel)}: working tree ↔ ${c.model}`, { preview: true, viewColumn: vscode.ViewColumn.Beside });
    return true;
  }

  async apply(name: string): Promise<boolean> {
    const st = this.state!;
    const r = await this.runtime.request('worktrees/apply', { name });
    if (r.applied) {
      st.states[name] = 'applied';
      st.appliedOperation = r.operation;
      st.message = `Applied ${name}: ${r.files} file${r.files === 1 ? '' : 's'} changed (${r.changed.join(', ')}). They are pending in Changes; Undo apply takes them back.`;
    } else {
      st.message = `Could not apply ${name}: ${r.error ?? ''}${r.conflicts?.length ? ` (changed since: ${r.conflicts.join(', ')})` : ''}. Nothing was changed.`;
    }
    await this.changes.refresh();
    this.render();
    return r.applied;
  }

  async undo(name: string): Promise<boolean> {
    const st = this.state!;
    if (st.states[name] !== 'applied' || !st.appliedOperation) return false;
    const r = await this.changes.undo(st.appliedOperation);
    if (r.conflicts.length > 0) {
      st.message = `Not undone: ${r.conflicts.join(', ')} changed since the apply.`;
    } else {
      st.states[name] = 'open';
      st.appliedOperation = null;
      st.message = `Undid the apply of ${name}.`;
    }
    this.render();
    return r.conflicts.length === 0;
  }

  async discard(name: string): Promise<boolean> {
    const st = this.state!;
    const r = await this.runtime.request('worktrees/discard', { name });
    if (r.discarded) st.states[name] = 'discarded';
    st.message = r.discarded ? `Discarded ${name}.` : `${name} was already gone.`;
    this.render();
    return r.discarded;
  }

  /** Clean Up Worktrees: the task-x worktrees left (worktrees/list), the picked ones discarded. */
  async cleanUp(pickAll = false): Promise<string[]> {
    const { worktrees } = await this.runtime.request('worktrees/list');
    if (!worktrees || worktrees.length === 0) {
      if (!pickAll) void vscode.window.showInformationMessage('task-x: no worktrees are left.');
      return [];
    }
    const picks = pickAll
      ? worktrees.map((w) => ({ label: w.name }))
      : await vscode.window.showQuickPick(
          worktrees.map((w) => ({ label: w.name, description: `${w.role ?? ''} ${w.branch}`.trim(), detail: w.dir, picked: true })),
          { canPickMany: true, placeHolder: 'Discard which worktrees?' },
        );
    const out: string[] = [];
    for (const p of picks ?? []) {
      const r = await this.runtime.request('worktrees/discard', { name: p.label });
      if (r.discarded) out.push(p.label);
    }
    return out;
  }

  dispose(): void {
    this.panel?.dispose();
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
  }
}

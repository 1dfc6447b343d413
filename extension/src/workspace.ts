// The workspace the runtime works on: workspace/open for one folder (a
// multi-root workspace picks one and says so), indexing progress in the status
// bar, file changes fed to workspace/filesChanged (debounced), the exclude
// setting, and the summary for the Context view (context/inspect).
import * as vscode from 'vscode';
import { plural } from './words';
import { settings } from './config';
import { describeError } from './errors';
import type { ProgressPhase, WorkspaceOpenParams, WorkspaceProgressParams, WorkspaceSummary } from './protocol';
import type { RuntimeClient } from './runtimeClient';

export type IndexPhase = 'idle' | 'none' | ProgressPhase;

const DEBOUNCE_MS = 250;

export class WorkspaceManager implements vscode.Disposable {
  readonly statusBar: vscode.StatusBarItem;
  private watcher: vscode.FileSystemWatcher | undefined;
  private pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private opened = false;
  private openSeq = 0;
  summary: WorkspaceSummary | undefined;
  phase: IndexPhase = 'idle';
  /** The folder the runtime works on. */
  folder: vscode.WorkspaceFolder | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  /** Each phase reached, with its time since the open began (the tests and the speed figures read it). */
  readonly phases: { phase: IndexPhase; atMs: number; files?: number }[] = [];
  private openStarted = 0;

  constructor(private readonly runtime: RuntimeClient) {
    this.statusBar = vscode.window.createStatusBarItem('taskX.status', vscode.StatusBarAlignment.Left, 50);
    this.statusBar.name = 'task-x';
    this.statusBar.command = 'taskX.showContext';
    this.setStatus('$(loading~spin) task-x', 'task-x: starting the runtime');
    this.statusBar.show();
    runtime.onNotification('workspace/progress', (p) => this.progress(p));
    this.disposables.push(
      runtime.onDidBecomeReady(() => void this.open()),
      runtime.onDidChangeState((s) => {
        if (s === 'restarting') this.setStatus('$(loading~spin) task-x: restarting', 'task-x: the runtime stopped and is being restarted');
        if (s === 'failed') this.setStatus('$(error) task-x', runtime.process.failure?.message ?? 'task-x: the runtime failed', true);
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => void this.open()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('taskX.workspace')) void this.open();
      }),
    );
  }

  private setStatus(text: string, tooltip: string, error = false): void {
    this.statusBar.text = text;
    this.statusBar.tooltip = tooltip;
    this.statusBar.backgroundColor = error ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  }

  /** The folder to open: the only one, or the taskX.workspace.folder one, or the first. */
  pickFolder(): { folder: vscode.WorkspaceFolder | undefined; note?: string } {
    const folders = vscode.workspace.workspaceFolders ?? [];
    if (folders.length === 0) return { folder: undefined };
    if (folders.length === 1) return { folder: folders[0] };
    const wanted = settings.workspaceFolder();
    const chosen = folders.find((f) => f.name === wanted) ?? folders[0];
    return {
      folder: chosen,
      note: `task-x works on one folder at a time: "${chosen.name}" of the ${folders.length} in this workspace (change it with "task-x: Pick Workspace Folder").`,
    };
  }

  async open(): Promise<void> {
    if (this.runtime.state !== 'ready' && this.runtime.state !== 'starting' && this.runtime.state !== 'restarting') return;
    const { folder, note } = this.pickFolder();
    this.folder = folder;
    const seq = ++this.openSeq;
    if (!folder || folder.uri.scheme !== 'file') {
      this.phase = 'none';
      this.setStatus('$(circle-slash) task-x', 'task-x: open a folder to let the agent work on it');
      this.changed.fire();
      return;
    }
    if (note) void vscode.window.showInformationMessage(note);
    this.opened = false;
    this.phase = 'indexing';
    this.phases.length = 0;
    this.openStarted = Date.now();
    this.setStatus('$(loading~spin) task-x: indexing', `task-x: indexing ${folder.name}`);
    this.changed.fire();
    try {
      const params: WorkspaceOpenParams = { root: folder.uri.fsPath };
      const exclude = settings.exclude();
      if (exclude.length > 0) params.exclude = exclude;
      const summary = await this.runtime.request('workspace/open', params);
      if (seq !== this.openSeq) return;
      this.summary = summary;
      this.opened = true;
      this.watch(folder);
      this.changed.fire();
    } catch (err) {
      if (seq !== this.openSeq) return;
      this.phase = 'failed';
      this.setStatus('$(error) task-x', `task-x: indexing failed: ${describeError(err)}`, true);
      this.changed.fire();
    }
  }

  private progress(p: WorkspaceProgressParams): void {
    const phase = p.phase;
    const files = typeof p.files === 'number' ? p.files : undefined;
    this.phases.push({ phase, atMs: Date.now() - this.openStarted, files });
    switch (phase) {
      case 'indexing':
        this.phase = 'indexing';
        {
          const of = p.total ? ` of ${p.total}` : '';
          this.setStatus(`$(loading~spin) task-x: ${files ?? 0}${of} files`, `task-x: indexing, ${files ?? 0}${of} files seen, ${p.parsed ?? 0} parsed`);
        }
        break;
      case 'graph':
        this.phase = 'graph';
        this.setStatus(`$(loading~spin) task-x: graph`, `task-x: building the project graph of ${plural(files ?? 0, 'file')}`);
        break;
      case 'ready':
      case 'updated': {
        this.phase = phase;
        const stats = p.stats;
        if (this.summary && stats) this.summary.stats = stats;
        const n = stats?.indexedFiles ?? stats?.files ?? 0;
        this.setStatus(`$(check) task-x: ${plural(n, 'file')}`, `task-x: ready, ${plural(n, 'file')} indexed${stats?.symbols ? `, ${stats.symbols} symbols` : ''}`);
        break;
      }
      case 'failed':
        this.phase = 'failed';
        this.setStatus('$(error) task-x', `task-x: indexing failed: ${String(p.error ?? '')}`, true);
        break;
    }
    this.changed.fire();
  }

  private watch(folder: vscode.WorkspaceFolder): void {
    this.watcher?.dispose();
    const w = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, '**/*'));
    const add = (uri: vscode.Uri) => this.queue(uri);
    w.onDidCreate(add);
    w.onDidChange(add);
    w.onDidDelete(add);
    this.watcher = w;
  }

  private readonly filesEmitter = new vscode.EventEmitter<string[]>();
  /** Files of the workspace changed (absolute paths, after the debounce). */
  readonly onDidChangeFiles = this.filesEmitter.event;

  /** Collects changed paths and sends them in one workspace/filesChanged after a quiet moment. */
  queue(uri: vscode.Uri): void {
    if (!this.opened || uri.scheme !== 'file') return;
    const root = this.folder?.uri.fsPath;
    if (!root || !uri.fsPath.startsWith(root)) return;
    if (/[\\/]\.git[\\/]/.test(uri.fsPath)) return;
    this.pending.add(uri.fsPath);
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), DEBOUNCE_MS);
  }

  private flush(): void {
    this.timer = undefined;
    if (this.pending.size === 0) return;
    const paths = [...this.pending];
    this.pending.clear();
    this.runtime.notify('workspace/filesChanged', { paths });
    this.filesEmitter.fire(paths);
  }

  /** context/inspect, for the Context view. */
  async inspect(): Promise<WorkspaceSummary | undefined> {
    try {
      this.summary = await this.runtime.request('context/inspect');
    } catch {
      /* no workspace open: keep what we have */
    }
    return this.summary;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.watcher?.dispose();
    this.statusBar.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

/** The Context view: project, stats, instructions and excludes from the workspace summary. */
export class ContextTree implements vscode.TreeDataProvider<ContextNode> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly ws: WorkspaceManager) {
    ws.onDidChange(() => this.changed.fire());
  }

  getTreeItem(n: ContextNode): vscode.TreeItem {
    const item = new vscode.TreeItem(n.label, n.children && n.children.length > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
    item.description = n.description;
    if (n.icon) item.iconPath = new vscode.ThemeIcon(n.icon);
    if (n.open) item.command = { command: 'vscode.open', title: 'Open', arguments: [n.open] };
    return item;
  }

  getChildren(n?: ContextNode): ContextNode[] {
    if (n) return n.children ?? [];
    const s = this.ws.summary;
    if (!s) return [{ label: this.ws.phase === 'none' ? 'No folder is open' : 'Indexing…', icon: 'info' }];
    const p = s.project ?? {};
    const root = this.ws.folder?.uri;
    const project: ContextNode = {
      label: p.name ?? 'Project',
      description: (p.kinds ?? []).join(', '),
      icon: 'project',
      children: [
        ...(p.languages ?? []).slice(0, 8).map((l) => ({ label: l.language, description: plural(l.files, 'file'), icon: 'symbol-file' })),
        ...Object.entries(p.commands ?? {}).map(([k, v]) => ({ label: k, description: v, icon: 'terminal' })),
        ...(p.git ? [{ label: 'git', description: `${p.git.branch ?? ''} ${p.git.head?.slice(0, 8) ?? ''}${p.git.dirty ? `, ${p.git.dirty} changed` : ''}`, icon: 'git-branch' }] : []),
      ],
    };
    const st = s.stats ?? {};
    const stats: ContextNode = {
      label: 'Index',
      description: `${plural(st.indexedFiles ?? st.files ?? 0, 'file')}, ${plural(st.symbols ?? 0, 'symbol')}${st.truncated ? ' (truncated)' : ''}`,
      icon: 'database',
      children: Object.entries(st.skipped ?? {}).map(([k, v]) => ({ label: `skipped: ${k}`, description: String(v) })),
    };
    const instr: ContextNode = {
      label: 'Instructions',
      description: `${(s.instructions ?? []).length}`,
      icon: 'book',
      children: (s.instructions ?? []).map((i) => ({
        label: i.source,
        description: `${i.scope}${i.dir ? ` (${i.dir})` : ''}${i.truncated ? ', cut at 32 KiB' : ''}`,
        icon: 'file-text',
        open: root && i.scope !== 'user' ? vscode.Uri.joinPath(root, i.dir ?? '', i.source) : undefined,
      })),
    };
    const ex: ContextNode = { label: 'Excluded', description: `${(s.excludes ?? []).length} patterns`, icon: 'exclude', children: (s.excludes ?? []).map((e) => ({ label: e })) };
    return [project, stats, instr, ex];
  }
}

interface ContextNode {
  label: string;
  description?: string;
  icon?: string;
  open?: vscode.Uri;
  children?: ContextNode[];
}

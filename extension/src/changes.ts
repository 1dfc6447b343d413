// The Changes view: the task's pending edits (edits/pending), refreshed on the
// runtime's diff and fileChanged events. Per file: open the diff (the original
// against the file on disk), keep, revert; keep all / revert all; under each
// file its operations, each one undoable (edits/undo). Changed files carry a
// badge in the explorer. A file the user changed after the agent's edit is never
// reverted: the runtime reports it as a conflict and the view says why.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { operationLabel } from './words';
import type { PreviewDocuments } from './diffs';
import type { EditOperation, PendingFile } from './protocol';
import { describeError } from './errors';
import type { RuntimeClient } from './runtimeClient';
import type { TaskService } from './taskService';
import type { WorkspaceManager } from './workspace';

export type { PendingFile };

type Node = { kind: 'file'; file: PendingFile } | { kind: 'op'; file: PendingFile; op: string; label: string };

export class ChangesView implements vscode.TreeDataProvider<Node>, vscode.FileDecorationProvider, vscode.Disposable {
  private files: PendingFile[] = [];
  private ops = new Map<string, EditOperation>();
  private readonly treeChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.treeChanged.event;
  private readonly decoChanged = new vscode.EventEmitter<vscode.Uri[]>();
  readonly onDidChangeFileDecorations = this.decoChanged.event;
  private timer: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  /** The last conflicts a revert or undo reported, explained (the tests read it). */
  lastConflicts: string[] = [];
  private refreshing: Promise<void> | undefined;
  private readonly refreshedEmitter = new vscode.EventEmitter<void>();
  readonly onDidRefresh = this.refreshedEmitter.event;

  constructor(
    private readonly runtime: RuntimeClient,
    tasks: TaskService,
    private readonly workspace: WorkspaceManager,
    private readonly previews: PreviewDocuments,
  ) {
    this.disposables.push(
      tasks.onEvent((e) => {
        if (e.replay) return;
        const t = e.event.type;
        if (t === 'diff' || t === 'fileChanged' || t === 'done' || t === 'merged') this.scheduleRefresh();
      }),
      workspace.onDidChange(() => {
        if (workspace.phase === 'ready') this.scheduleRefresh();
      }),
      runtime.onDidBecomeReady(() => this.scheduleRefresh()),
    );
  }

  get pendingFiles(): readonly PendingFile[] {
    return this.files;
  }

  private scheduleRefresh(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, 100);
  }

  /** edits/pending and edits/list, then the tree and the explorer badges. */
  refresh(): Promise<void> {
    const run = async () => {
      const before = this.files.map((f) => f.path);
      try {
        const r = await this.runtime.request('edits/pending');
        this.files = Array.isArray(r?.files) ? r.files : [];
      } catch {
        this.files = [];
      }
      try {
        const l = await this.runtime.request('edits/list');
        this.ops = new Map((Array.isArray(l?.operations) ? l.operations : []).map((o) => [o.id, o]));
      } catch {
        this.ops.clear();
      }
      void vscode.commands.executeCommand('setContext', 'taskX.hasPendingEdits', this.files.length > 0);
      this.treeChanged.fire();
      const changed = new Set([...before, ...this.files.map((f) => f.path)]);
      const uris = [...changed].map((p) => this.uri(p)).filter((u): u is vscode.Uri => !!u);
      this.decoChanged.fire(uris);
      this.refreshedEmitter.fire();
    };
    const p = (this.refreshing ?? Promise.resolve()).then(run, run);
    this.refreshing = p;
    return p;
  }

  private uri(rel: string): vscode.Uri | undefined {
    const root = this.workspace.folder?.uri;
    return root ? vscode.Uri.joinPath(root, rel) : undefined;
  }

  // ---- tree --------------------------------------------------------------------------

  getChildren(n?: Node): Node[] {
    if (!n) return this.files.map((file) => ({ kind: 'file', file }));
    if (n.kind === 'file') {
      return n.file.operations.map((op, i) => ({ kind: 'op' as const, file: n.file, op, label: operationLabel(i + 1, this.ops.get(String(op))) }));
    }
    return [];
  }

  getTreeItem(n: Node): vscode.TreeItem {
    if (n.kind === 'op') {
      const item = new vscode.TreeItem(n.label, vscode.TreeItemCollapsibleState.None);
      item.contextValue = 'taskX.operation';
      item.iconPath = new vscode.ThemeIcon('history');
      item.id = `op:${n.file.path}:${n.op}`;
      item.tooltip = `Operation ${n.op} of ${n.file.path}: Undo This Operation restores what it replaced, unless the file changed since.`;
      return item;
    }
    const f = n.file;
    const item = new vscode.TreeItem(path.posix.basename(f.path), f.operations.length > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    item.id = `file:${f.path}`;
    const dir = path.posix.dirname(f.path);
    const state = f.original === null ? 'created' : f.current === null ? 'deleted' : 'modified';
    item.description = `${dir === '.' ? '' : dir + ' '}+${f.added} −${f.removed}`;
    item.tooltip = f.changedOutside
      ? `${f.path}: ${state} by the agent, then changed outside it. Revert will not overwrite the later change.`
      : `${f.path}: ${state} by the agent (+${f.added} −${f.removed}). Keep accepts it, Revert restores the original.`;
    item.resourceUri = this.uri(f.path);
    item.contextValue = 'taskX.pendingFile';
    item.command = { command: 'taskX.changes.openDiff', title: 'Open Diff', arguments: [f.path] };
    return item;
  }

  provideFileDecoration(uri: vscode.Uri): vscode.FileDecoration | undefined {
    const root = this.workspace.folder?.uri.fsPath;
    if (!root || uri.scheme !== 'file') return undefined;
    const rel = path.relative(root, uri.fsPath).split(path.sep).join('/');
    const f = this.files.find((x) => x.path === rel);
    if (!f) return undefined;
    return new vscode.FileDecoration('TX', `Changed by task-x, pending review (+${f.added} −${f.removed})`, new vscode.ThemeColor('gitDecoration.modifiedResourceForeground'));
  }

  // ---- actions -----------------------------------------------------------------------

  async openDiff(rel: string): Promise<void> {
    const f = this.files.find((x) => x.path === rel);
    const uri = this.uri(rel);
    if (!f || !uri) {
      if (uri) await vscode.window.showTextDocument(uri);
      return;
    }
    const left = this.previews.put('original', rel, f.original ?? '');
    const right = f.current === null ? this.previews.put('deleted', rel, '') : uri;
    await vscode.commands.executeCommand('vscode.diff', left, right, `${path.posix.basename(rel)}: task-x's change`, { preview: true });
  }

  async keep(paths?: string[]): Promise<string[]> {
    const r = await this.runtime.request('edits/keep', paths ? { paths } : {});
    await this.refresh();
    return r?.kept ?? [];
  }

  async revert(paths?: string[]): Promise<{ reverted: string[]; conflicts: string[] }> {
    const r = await this.runtime.request('edits/revert', paths ? { paths } : {});
    await this.refresh();
    const out = { reverted: r?.reverted ?? [], conflicts: r?.conflicts ?? [] };
    this.explainConflicts(out.conflicts, 'reverted');
    return out;
  }

  async undo(operation: string): Promise<{ restored: string[]; conflicts: string[] }> {
    const r = await this.runtime.request('edits/undo', { operation });
    await this.refresh();
    const out = { restored: r?.restored ?? [], conflicts: r?.conflicts ?? [] };
    this.explainConflicts(out.conflicts, 'undone');
    return out;
  }

  private explainConflicts(conflicts: string[], what: string): void {
    this.lastConflicts = conflicts.map((c) => `${c} changed since the agent's edit, so it was not ${what}: your later change is kept. Undo or save over your change first if you still want the agent's version gone.`);
    if (conflicts.length > 0) {
      void vscode.window.showWarningMessage(`task-x: ${conflicts.length === 1 ? this.lastConflicts[0] : `${conflicts.length} files changed since the agent's edit and were not ${what} (${conflicts.join(', ')}); your later changes are kept.`}`);
    }
  }

  register(): vscode.Disposable[] {
    const pathOf = (n?: Node | string): string | undefined => (typeof n === 'string' ? n : n?.file.path);
    const guard = (fn: () => Promise<unknown>) => fn().catch((err) => vscode.window.showErrorMessage(`task-x: ${describeError(err)}`));
    return [
      vscode.window.registerFileDecorationProvider(this),
      vscode.commands.registerCommand('taskX.changes.openDiff', (n?: Node | string) => {
        const p = pathOf(n);
        return p ? this.openDiff(p) : undefined;
      }),
      vscode.commands.registerCommand('taskX.changes.keep', (n?: Node | string) => {
        const p = pathOf(n);
        return p ? guard(() => this.keep([p])) : undefined;
      }),
      vscode.commands.registerCommand('taskX.changes.revert', async (n?: Node | string) => {
        const p = pathOf(n);
        if (!p) return undefined;
        const f = this.files.find((x) => x.path === p);
        // Changed after the agent's edit: the runtime keeps the later change and reverts
        // nothing, so say that at once instead of asking to delete the file first (QA: a
        // created, then edited, file asked "Delete File?" and was then refused).
        if (f?.changedOutside) {
          this.explainConflicts([p], 'reverted');
          return undefined;
        }
        // Reverting a file the agent created deletes it: ask first.
        if (f?.original === null) {
          const a = await vscode.window.showWarningMessage(`Revert ${p}? task-x created it, so reverting deletes the file.`, { modal: true }, 'Delete File');
          if (a !== 'Delete File') return undefined;
        }
        return guard(() => this.revert([p]));
      }),
      vscode.commands.registerCommand('taskX.changes.keepAll', () => guard(() => this.keep())),
      vscode.commands.registerCommand('taskX.changes.revertAll', async () => {
        const a = await vscode.window.showWarningMessage(`Revert all ${this.files.length} files task-x changed?`, { modal: true }, 'Revert All');
        if (a === 'Revert All') await guard(() => this.revert());
      }),
      vscode.commands.registerCommand('taskX.changes.undo', (n?: Node) => (n && n.kind === 'op' ? guard(() => this.undo(n.op)) : undefined)),
      vscode.commands.registerCommand('taskX.changes.refresh', () => this.refresh()),
    ];
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}

// The Tasks view: the saved task list (agent/tasks), newest first. Open shows a
// task in the chat (agent/replay; a running task's live events follow), resume
// opens it and puts the focus in the input for a follow-up, delete removes it.
import * as vscode from 'vscode';
import type { ChatViewProvider } from './chatView';
import { describeError } from './errors';
import type { RuntimeClient } from './runtimeClient';
import type { SavedTask, TaskService } from './taskService';

const STATUS_ICON: Record<string, string> = {
  running: 'loading~spin',
  completed: 'pass',
  failed: 'error',
  cancelled: 'circle-slash',
};

export class TasksView implements vscode.TreeDataProvider<SavedTask>, vscode.Disposable {
  private tasksList: SavedTask[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly refreshedEmitter = new vscode.EventEmitter<void>();
  readonly onDidRefresh = this.refreshedEmitter.event;
  private readonly disposables: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    runtime: RuntimeClient,
    private readonly tasks: TaskService,
    private readonly chat: ChatViewProvider,
  ) {
    this.disposables.push(
      runtime.onDidBecomeReady(() => this.schedule()),
      tasks.onDidChangeRunning(() => this.schedule()),
      tasks.onEvent((e) => {
        if (!e.replay && (e.event.type === 'started' || e.event.type === 'done')) this.schedule();
      }),
    );
  }

  get list(): readonly SavedTask[] {
    return this.tasksList;
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, 200);
  }

  async refresh(): Promise<void> {
    try {
      this.tasksList = await this.tasks.list();
    } catch {
      /* the runtime restarts: keep the last list */
    }
    this.changed.fire();
    this.refreshedEmitter.fire();
  }

  getChildren(t?: SavedTask): SavedTask[] {
    return t ? [] : this.tasksList;
  }

  getTreeItem(t: SavedTask): vscode.TreeItem {
    const item = new vscode.TreeItem(t.title || t.taskId, vscode.TreeItemCollapsibleState.None);
    const running = this.tasks.isRunning(t.taskId);
    const status = running ? 'running' : t.status;
    item.id = t.taskId;
    item.iconPath = new vscode.ThemeIcon(STATUS_ICON[status] ?? 'circle-outline');
    const when = t.updatedAt ? new Date(t.updatedAt).toLocaleString() : '';
    item.description = `${status}${t.chatMode ? ` · ${t.chatMode}` : ''}${when ? ` · ${when}` : ''}`;
    item.tooltip = `${t.title}\n${status}${t.model ? `, ${t.model}` : ''}\n${t.taskId}`;
    item.contextValue = running ? 'taskX.task.running' : 'taskX.task';
    item.command = { command: 'taskX.tasks.open', title: 'Open', arguments: [t] };
    return item;
  }

  register(): vscode.Disposable[] {
    const idOf = (t?: SavedTask | string) => (typeof t === 'string' ? t : t?.taskId);
    const titleOf = (id: string) => this.tasksList.find((x) => x.taskId === id)?.title ?? null;
    return [
      vscode.commands.registerCommand('taskX.tasks.open', async (t?: SavedTask | string) => {
        const id = idOf(t);
        if (!id) return;
        await vscode.commands.executeCommand(`${'taskX.chat'}.focus`);
        await this.chat.openTask(id, titleOf(id));
      }),
      vscode.commands.registerCommand('taskX.tasks.resume', async (t?: SavedTask | string) => {
        const id = idOf(t);
        if (!id) return;
        await vscode.commands.executeCommand(`${'taskX.chat'}.focus`);
        await this.chat.openTask(id, titleOf(id));
        this.chat.post({ type: 'focusInput' });
      }),
      vscode.commands.registerCommand('taskX.tasks.delete', async (t?: SavedTask | string, confirmed?: boolean) => {
        const id = idOf(t);
        if (!id) return false;
        if (this.tasks.isRunning(id)) {
          void vscode.window.showWarningMessage('task-x: stop the task before deleting it.');
          return false;
        }
        if (!confirmed) {
          const a = await vscode.window.showWarningMessage(`Delete the task "${titleOf(id) ?? id}"? Its transcript is removed; its file changes stay.`, { modal: true }, 'Delete');
          if (a !== 'Delete') return false;
        }
        try {
          const ok = await this.tasks.deleteTask(id);
          await this.refresh();
          return ok;
        } catch (err) {
          void vscode.window.showErrorMessage(`task-x: ${describeError(err)}`);
          return false;
        }
      }),
      vscode.commands.registerCommand('taskX.tasks.refresh', () => this.refresh()),
    ];
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}

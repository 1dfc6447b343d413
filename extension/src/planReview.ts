// Plan review (issue 36 item 12, as Claude Code lets users review plans): when
// a plan-mode task ends, its plan opens as a markdown document the user can
// edit; "Run this plan" (the editor's title bar, or the command) continues the
// same task in agent mode with the plan as edited, shown in the chat.
import * as vscode from 'vscode';
import type { ChatViewProvider } from './chatView';
import type { TaskService } from './taskService';

export class PlanReview implements vscode.Disposable {
  /** Each open plan document (its URI) → the plan task it came from. */
  private readonly plans = new Map<string, string>();
  private readonly modes = new Map<string, string>();
  private readonly openedEmitter = new vscode.EventEmitter<{ taskId: string; doc: vscode.TextDocument }>();
  /** A plan opened for review (tests). */
  readonly onDidOpenPlan = this.openedEmitter.event;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly tasks: TaskService,
    private readonly chat: ChatViewProvider,
  ) {
    this.disposables.push(
      tasks.onDidStart((s) => this.modes.set(s.taskId, s.mode)),
      tasks.onDidFinish(({ taskId, summary }) => {
        if (this.modes.get(taskId) !== 'plan' || summary?.status !== 'completed' || !summary.text?.trim()) return;
        void this.open(taskId, summary.text);
      }),
      vscode.window.onDidChangeActiveTextEditor((e) => this.setContext(e)),
      vscode.workspace.onDidCloseTextDocument((d) => this.plans.delete(d.uri.toString())),
    );
  }

  private setContext(e: vscode.TextEditor | undefined): void {
    void vscode.commands.executeCommand('setContext', 'taskX.planDocument', !!e && this.plans.has(e.document.uri.toString()));
  }

  async open(taskId: string, text: string): Promise<vscode.TextDocument> {
    const body = `<!-- The plan of task-x task ${taskId}. Edit it, then press "Run this plan" in the title bar: the task continues in agent mode with this plan. -->\n\n${text.trim()}\n`;
    const doc = await vscode.workspace.openTextDocument({ content: body, language: 'markdown' });
    this.plans.set(doc.uri.toString(), taskId);
    const ed = await vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.Active });
    this.setContext(ed);
    this.openedEmitter.fire({ taskId, doc });
    return doc;
  }

  /** Run this plan: the plan task continues in agent mode with the document's text. */
  async run(uri?: vscode.Uri): Promise<string | undefined> {
    const doc = uri ? vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString()) : vscode.window.activeTextEditor?.document;
    const taskId = doc ? this.plans.get(doc.uri.toString()) : undefined;
    if (!doc || !taskId) {
      void vscode.window.showInformationMessage('task-x: open a plan from a plan-mode task first.');
      return undefined;
    }
    const plan = doc.getText().replace(/^<!--[\s\S]*?-->\s*/, '').trim();
    if (!plan) return undefined;
    if (this.tasks.isRunning(taskId)) {
      void vscode.window.showWarningMessage('task-x: the plan task is still running.');
      return undefined;
    }
    const prompt = `Carry out this plan now. The user reviewed it and may have changed it; follow it as written:\n\n${plan}`;
    await this.chat.continueTask(taskId, prompt, 'agent', 'Run this plan');
    return taskId;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

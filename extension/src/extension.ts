// task-x for VS Code: the extension host half. It spawns task-x-runtime and
// speaks protocol.md to it (runtimeClient.ts), opens the workspace (workspace.ts),
// sets up providers (providers.ts), and shows the chat (chatView.ts), the pending
// changes (changes.ts) and the task history (tasksView.ts).
import * as vscode from 'vscode';
import { RuntimeClient } from './runtimeClient';
import { ContextTree, WorkspaceManager } from './workspace';

export interface TaskXApi {
  runtime: RuntimeClient;
  workspace: WorkspaceManager;
  activatedAtMs: number;
}

let runtime: RuntimeClient | undefined;

export function activate(context: vscode.ExtensionContext): TaskXApi {
  const started = Date.now();
  const output = vscode.window.createOutputChannel('task-x');
  context.subscriptions.push(output);
  runtime = new RuntimeClient(context, output);
  const workspace = new WorkspaceManager(runtime);
  context.subscriptions.push(workspace);
  context.subscriptions.push(
    vscode.window.registerTreeDataProvider('taskX.context', new ContextTree(workspace)),
    vscode.commands.registerCommand('taskX.restartRuntime', () => runtime?.restart()),
    vscode.commands.registerCommand('taskX.showLog', () => output.show()),
    vscode.commands.registerCommand('taskX.showContext', () => vscode.commands.executeCommand('taskX.context.focus')),
    vscode.commands.registerCommand('taskX.newTask', () => undefined),
    vscode.commands.registerCommand('taskX.pickWorkspaceFolder', async () => {
      const folders = vscode.workspace.workspaceFolders ?? [];
      const pick = await vscode.window.showQuickPick(folders.map((f) => f.name), { placeHolder: 'Which folder should task-x work on?' });
      if (pick) await vscode.workspace.getConfiguration('taskX').update('workspace.folder', pick, vscode.ConfigurationTarget.Workspace);
    }),
  );
  // The runtime starts now; the workspace opens in the background once it is ready.
  runtime.start().catch((err: Error) => {
    output.appendLine(`[task-x] ${err.message}`);
    void vscode.window.showErrorMessage(err.message);
  });
  return { runtime, workspace, activatedAtMs: started };
}

export async function deactivate(): Promise<void> {
  await runtime?.stop();
  runtime = undefined;
}

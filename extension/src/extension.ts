// task-x for VS Code: the extension host half. It spawns task-x-runtime and
// speaks protocol.md to it (runtimeClient.ts), opens the workspace
// (workspace.ts), sets up providers (providers.ts), runs tasks
// (taskService.ts), and shows the chat (chatView.ts), the pending changes
// (changes.ts) and the task history (tasksView.ts).
import * as vscode from 'vscode';
import { ChangesView } from './changes';
import { ChatViewProvider } from './chatView';
import { PREVIEW_SCHEME, PreviewDocuments } from './diffs';
import { createApi, type TaskXExtensionApi } from './api';
import { BestOf } from './bestOf';
import { describeError } from './errors';
import { DependenciesTree, GraphPanel } from './graphView';
import { FindingsDiagnostics } from './findings';
import { settings } from './config';
import { findClaude, Integrations, McpTree } from './integrations';
import { CostsView } from './costs';
import { PlanReview } from './planReview';
import { findCode } from './retrieve';
import { pickReviewTarget, repositoryOf, reviewDiff, reviewPrompt, type ReviewTarget } from './review';
import { Providers } from './providers';
import { RuntimeClient } from './runtimeClient';
import { TaskService } from './taskService';
import { TasksView } from './tasksView';
import { ContextTree, WorkspaceManager } from './workspace';

/**
 * What activate returns. `api` is the documented API for other extensions
 * (src/api.ts, docs/extension.md); the rest is internal (the tests drive the
 * extension through it, as a user would through the UI) and may change.
 */
export interface TaskXApi {
  api: TaskXExtensionApi;
  runtime: RuntimeClient;
  workspace: WorkspaceManager;
  providers: Providers;
  tasks: TaskService;
  chat: ChatViewProvider;
  changes: ChangesView;
  history: TasksView;
  findings: FindingsDiagnostics;
  integrations: Integrations;
  bestOf: BestOf;
  graph: GraphPanel;
  dependencies: DependenciesTree;
  plans: PlanReview;
  costs: CostsView;
  output: vscode.OutputChannel;
  /** Date.now() when activate began. */
  activatedAtMs: number;
}

let runtime: RuntimeClient | undefined;

export function activate(context: vscode.ExtensionContext): TaskXApi {
  const started = Date.now();
  const output = vscode.window.createOutputChannel('task-x');
  context.subscriptions.push(output);
  const log = (line: string) => output.appendLine(line);
  runtime = new RuntimeClient(context, output);
  const rt = runtime;
  context.subscriptions.push(rt);
  const workspace = new WorkspaceManager(rt);
  const providers = new Providers(context.secrets, rt);
  const tasks = new TaskService(rt, providers);
  tasks.log = log;
  const previews = new PreviewDocuments();
  const changes = new ChangesView(rt, tasks, workspace, previews);
  const chat = new ChatViewProvider(context, rt, tasks, providers, workspace, previews, (p) => changes.openDiff(p), log);
  const history = new TasksView(rt, tasks, chat);
  const findings = new FindingsDiagnostics(tasks, workspace);
  const integrations = new Integrations(rt, workspace, log);
  const costs = new CostsView(context.globalState, tasks);
  context.subscriptions.push(costs);
  const plans = new PlanReview(tasks, chat);
  context.subscriptions.push(plans);
  const graph = new GraphPanel(context, rt, workspace);
  const dependencies = new DependenciesTree(rt, workspace);
  context.subscriptions.push(graph, dependencies);
  const bestOf = new BestOf(rt, tasks, providers, changes, previews, () => workspace.folder?.uri.fsPath, () => workspace.summary?.project?.git);
  bestOf.showTask = (taskId) => chat.showTaskRequests(taskId);
  bestOf.showInChat = (taskId, prompt, names) => chat.showBestOf(taskId, prompt, names);
  // The Claude Code engine: offered in the chat when its CLI is found.
  let claudePath = findClaude(settings.claudePath());
  tasks.claudePath = () => claudePath;
  tasks.skillAllowed = (source) => integrations.trusted || source !== 'workspace';
  const syncChat = () => {
    for (const c of ChatViewProvider.all) {
      c.claudeCode = claudePath !== '';
      c.skills = integrations.skills.map((s) => ({ name: s.name, description: s.description }));
      c.postState();
    }
  };
  // Several conversations at once: a chat in an editor tab, with its own task.
  let tabs = 0;
  const openChatInTab = async (taskId?: string): Promise<ChatViewProvider> => {
    const n = ++tabs;
    const title = taskId ? (history.list.find((t) => t.taskId === taskId)?.title ?? taskId) : 'New task';
    const panel = vscode.window.createWebviewPanel('taskX.chatTab', `task-x: ${title.slice(0, 40)}`, vscode.ViewColumn.Active, { enableScripts: true });
    const tab = new ChatViewProvider(context, rt, tasks, providers, workspace, previews, (p) => changes.openDiff(p), log);
    tab.attachPanel(panel, `tab-${n}`);
    syncChat();
    if (taskId) await tab.openTask(taskId, title);
    return tab;
  };
  syncChat();
  integrations.onDidChange(syncChat);
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('taskX.claude.path')) {
        claudePath = findClaude(settings.claudePath());
        syncChat();
      }
    }),
  );
  context.subscriptions.push(workspace, tasks, changes, chat, history, findings, integrations);
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, previews),
    vscode.window.registerWebviewViewProvider(ChatViewProvider.viewId, chat, { webviewOptions: { retainContextWhenHidden: false } }),
    vscode.window.registerTreeDataProvider('taskX.changes', changes),
    vscode.window.registerTreeDataProvider('taskX.tasks', history),
    vscode.window.registerTreeDataProvider('taskX.context', new ContextTree(workspace)),
    vscode.window.registerTreeDataProvider('taskX.mcp', new McpTree(integrations)),
    bestOf,
    vscode.commands.registerCommand('taskX.bestOf', async (prompt?: string, names?: string[]) => {
      try {
        return await bestOf.command(prompt, names);
      } catch (err) {
        void vscode.window.showErrorMessage(`task-x: ${describeError(err)}`);
        return undefined;
      }
    }),
    vscode.window.registerTreeDataProvider('taskX.costs', costs),
    vscode.commands.registerCommand('taskX.editPrices', () => vscode.commands.executeCommand('workbench.action.openSettings', 'taskX.prices')),
    vscode.commands.registerCommand('taskX.openChatInTab', (t?: string | { taskId: string }) => openChatInTab(typeof t === 'string' ? t : t?.taskId)),
    vscode.commands.registerCommand('taskX.runPlan', (uri?: vscode.Uri) => plans.run(uri)),
    vscode.commands.registerCommand('taskX.findCode', async (query?: string) => {
      try {
        return await findCode(rt, workspace.folder?.uri.fsPath, query);
      } catch (err) {
        void vscode.window.showErrorMessage(`task-x: ${describeError(err)}`);
        return undefined;
      }
    }),
    vscode.commands.registerCommand('taskX.showGraph', () => graph.show()),
    vscode.window.registerTreeDataProvider('taskX.dependencies', dependencies),
    vscode.commands.registerCommand('taskX.dependencies.refresh', () => dependencies.refresh()),
    vscode.commands.registerCommand('taskX.worktrees.cleanUp', () => bestOf.cleanUp()),
    vscode.commands.registerCommand('taskX.mcp.refresh', () => integrations.refreshStatus()),
    vscode.commands.registerCommand('taskX.mcp.reconfigure', () => integrations.sync()),
    ...changes.register(),
    ...history.register(),
    vscode.commands.registerCommand('taskX.newTask', async () => {
      await vscode.commands.executeCommand('taskX.chat.focus');
      chat.newTask();
      chat.post({ type: 'focusInput' });
    }),
    vscode.commands.registerCommand('taskX.approval.allowFromDiff', (uri?: vscode.Uri) => chat.answerFromDiff(uri, 'allow')),
    vscode.commands.registerCommand('taskX.approval.denyFromDiff', (uri?: vscode.Uri) => chat.answerFromDiff(uri, 'deny')),
    vscode.commands.registerCommand('taskX.focusChat', () => vscode.commands.executeCommand('taskX.chat.focus')),
    vscode.commands.registerCommand('taskX.addSelectionToChat', async () => {
      const e = vscode.window.activeTextEditor;
      const root = workspace.folder?.uri.fsPath;
      if (!e || !root || e.selection.isEmpty) return;
      const rel = vscode.workspace.asRelativePath(e.document.uri, false);
      await vscode.commands.executeCommand('taskX.chat.focus');
      chat.post({ type: 'insertMention', mention: { kind: 'selection', path: rel, startLine: e.selection.start.line + 1, endLine: e.selection.end.line + 1 } });
    }),
    vscode.commands.registerCommand('taskX.review', async (given?: ReviewTarget) => {
      const folder = workspace.folder?.uri;
      if (!folder) return undefined;
      try {
        const repo = await repositoryOf(folder);
        if (!repo) {
          void vscode.window.showWarningMessage('task-x: Review needs a Git repository that VS Code\'s Git sees (in a trusted workspace).');
          return undefined;
        }
        const target = given ?? (await pickReviewTarget(repo));
        if (!target) return undefined;
        const { diff, files, cut } = await reviewDiff(repo, target);
        if (diff.trim() === '') {
          void vscode.window.showInformationMessage('task-x: there are no changes to review.');
          return undefined;
        }
        const what = target.kind === 'uncommitted' ? 'the uncommitted changes' : `this branch against ${target.base}`;
        const run = await chat.runPrompt(reviewPrompt(target, diff, cut), 'ask', `Review ${what} (${files} file${files === 1 ? '' : 's'})`);
        return run.taskId;
      } catch (err) {
        void vscode.window.showErrorMessage(`task-x: ${describeError(err)}`);
        return undefined;
      }
    }),
    vscode.commands.registerCommand('taskX.addProvider', () => providers.setupFlow()),
    vscode.commands.registerCommand('taskX.testProvider', async () => {
      const all = providers.list();
      if (all.length === 0) return vscode.commands.executeCommand('taskX.addProvider');
      const pick = all.length === 1 ? all[0] : (await vscode.window.showQuickPick(all.map((p) => ({ label: p.name, description: `${p.kind} · ${p.model}`, p })), { placeHolder: 'Test which provider?' }))?.p;
      return pick ? providers.testAndReport(pick) : undefined;
    }),
    vscode.commands.registerCommand('taskX.selectProvider', async () => {
      const pick = await vscode.window.showQuickPick(providers.list().map((p) => ({ label: p.name, description: `${p.kind} · ${p.model}`, name: p.name })), { placeHolder: 'Run tasks with which provider?' });
      if (pick) await providers.setActive(pick.name);
    }),
    vscode.commands.registerCommand('taskX.removeProvider', async () => {
      const pick = await vscode.window.showQuickPick(providers.list().map((p) => ({ label: p.name, description: `${p.kind} · ${p.model}`, name: p.name })), { placeHolder: 'Remove which provider (and its key)?' });
      if (pick) await providers.remove(pick.name);
    }),
    vscode.commands.registerCommand('taskX.restartRuntime', () => rt.restart()),
    vscode.commands.registerCommand('taskX.showLog', () => output.show()),
    vscode.commands.registerCommand('taskX.showContext', () => vscode.commands.executeCommand('taskX.context.focus')),
    vscode.commands.registerCommand('taskX.refreshIndex', () => rt.request('workspace/refresh').catch(() => undefined)),
    vscode.commands.registerCommand('taskX.pickWorkspaceFolder', async () => {
      const folders = vscode.workspace.workspaceFolders ?? [];
      const pick = await vscode.window.showQuickPick(folders.map((f) => f.name), { placeHolder: 'Which folder should task-x work on?' });
      if (pick) await vscode.workspace.getConfiguration('taskX').update('workspace.folder', pick, vscode.ConfigurationTarget.Workspace);
    }),
    vscode.commands.registerCommand('taskX.stopTask', () => {
      for (const id of tasks.runningTasks()) tasks.stop(id);
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('taskX.runtime')) {
        void vscode.window.showInformationMessage('task-x: the runtime settings changed; restart the runtime to use them.', 'Restart Runtime').then((a) => {
          if (a) void rt.restart();
        });
      }
    }),
  );
  void vscode.commands.executeCommand('setContext', 'taskX.hasProvider', providers.list().length > 0);
  providers.onDidChange(() => void vscode.commands.executeCommand('setContext', 'taskX.hasProvider', providers.list().length > 0));
  // The runtime starts now; the workspace opens in the background once it is ready.
  rt.start().catch((err: Error) => {
    log(`[task-x] ${err.message}`);
    void vscode.window.showErrorMessage(err.message);
  });
  const publicApi = createApi(tasks, (prompt, mode) => chat.runPrompt(prompt, mode));
  context.subscriptions.push(publicApi);
  return { api: publicApi, runtime: rt, workspace, providers, tasks, chat, changes, history, findings, integrations, bestOf, graph, dependencies, plans, costs, output, activatedAtMs: started };
}

export async function deactivate(): Promise<void> {
  await runtime?.stop();
  runtime = undefined;
}

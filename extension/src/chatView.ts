// The chat view: a webview (extension/webview-ui builds its page into
// media/webview/) under a strict Content-Security-Policy with a nonce, and the
// bridge between it and the runtime. Every message from the page is untrusted:
// it is checked by parseWebviewMessage, and an approval or question answer
// counts only for an id this window issued and still holds (approvals.ts).
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { settings } from './config';
import { PreviewDocuments } from './diffs';
import { describeError, isCancelled } from './errors';
import { applyPatch, parseUnifiedDiff } from './patch';
import { MissingKeyError, type Providers } from './providers';
import type { RuntimeClient } from './runtimeClient';
import type { TaskEvent, TaskService } from './taskService';
import type { WorkspaceManager } from './workspace';
import type { AgentSummary, Diagnostic, EditorContext, AgentEvent as WireEvent, ModelInfo as WireModelInfo, RequestApprovalParams as WireApproval } from './protocol';
import {
  parseWebviewMessage,
  type AgentEvent,
  type ChatMode,
  type ChatStateSnapshot,
  type EditorContextInfo,
  type HostToWebview,
  type Mention,
  type ModelInfo,
  type RequestApprovalParams,
  type WebviewToHost,
} from '../webview-ui/src/messages';

const REPLAY_BATCH = 500;

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = 'taskX.chat';
  /** The sidebar view, or an editor tab's panel (openInTab). */
  private view: { readonly webview: vscode.Webview; readonly visible: boolean } | undefined;
  /** Every chat open: the sidebar's and each tab's; each shows its own task. */
  static readonly all = new Set<ChatViewProvider>();
  /** The sidebar's chat (the one that tells about a task no chat shows). */
  primary = true;
  /** Brings this chat to the front. */
  private reveal: () => Promise<void> = async () => {
    await vscode.commands.executeCommand(`${ChatViewProvider.viewId}.focus`);
  };
  /** A name the page's body carries (an editor tab's chat), for the tests' page driver. */
  private instance = 'sidebar';
  private shownTask: string | null = null;
  /** The best-of run this chat shows, with its events (at most 20 000) for a page that loads late. */
  private bestOfShown: { taskId: string; prompt: HostToWebview; names: HostToWebview; events: AgentEvent[] } | undefined;
  private title: string | null = null;
  private mode: ChatMode;
  private model: string | null = null;
  private includeEditor: boolean;
  private replayId = 0;
  private replaying: { taskId: string; id: number; batch: AgentEvent[] } | undefined;
  private live: AgentEvent[] = [];
  private liveTimer: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  /** Messages posted to the page, counted by type (tests and figures). */
  readonly posted = new Map<string, number>();
  /** Messages from the page that did not pass the checks. */
  readonly rejected: string[] = [];
  private readonly readyEmitter = new vscode.EventEmitter<void>();
  /** The page said "ready" (after each load). */
  readonly onDidBecomeReady = this.readyEmitter.event;
  /** The latest editor info sent to the page. */
  private editorInfo: EditorContextInfo = { activeFile: null, selection: null, openFiles: 0, diagnostics: 0 };
  private editorTimer: NodeJS.Timeout | undefined;
  /** Whether the Claude Code CLI was found, and the skills for "/" completion (set by the extension). */
  claudeCode = false;
  skills: { name: string; description: string }[] = [];
  /** Worktree folders the runtime named in subagentStarted/subagentFinished: the only folders openWorktree opens. */
  private readonly worktrees = new Set<string>();
  /** A subagent's task id → the task that started it (from subagentStarted). */
  private readonly parents = new Map<string, string>();
  /** The approval each open "proposed" preview belongs to (its URI → the approval id). */
  /** The reason typed so far in each open approval's box (any chat's page), for a Deny from the diff editor. */
  private static readonly denyReasonsAll = new Map<string, string>();
  private get denyReasons(): Map<string, string> {
    return ChatViewProvider.denyReasonsAll;
  }
  private static readonly diffApprovals = new Map<string, string>();
  private get diffApprovals(): Map<string, string> {
    return ChatViewProvider.diffApprovals;
  }

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly runtime: RuntimeClient,
    private readonly tasks: TaskService,
    private readonly providers: Providers,
    private readonly workspace: WorkspaceManager,
    private readonly previews: PreviewDocuments,
    private readonly openFileDiff: (path: string) => Promise<void>,
    private readonly log: (line: string) => void,
  ) {
    const m = context.globalState.get<string>('taskX.chat.mode') ?? settings.chatMode();
    this.mode = (['ask', 'plan', 'agent', 'team', 'claudeCode'].includes(m) ? m : 'agent') as ChatMode;
    this.includeEditor = context.globalState.get<boolean>('taskX.chat.includeEditorContext') ?? settings.includeEditorContext();
    ChatViewProvider.all.add(this);
    this.disposables.push(
      tasks.onEvent((e) => this.onTaskEvent(e)),
      tasks.onRequest((p) => {
        if (this.shows(p.taskId)) this.postRequest(p.id);
        else if (this.primary && ![...ChatViewProvider.all].some((c) => c.shows(p.taskId))) this.notifyElsewhere(p.taskId, p.kind);
      }),
      tasks.onRequestClosed((id) => {
        this.denyReasons.delete(id);
        this.post({ type: 'requestClosed', id });
      }),
      tasks.onDidChangeRunning(() => this.postState()),
      tasks.onDidFinish(({ taskId, summary, error }) => {
        if (summary) this.summaries.set(taskId, summary);
        if (taskId !== this.shownTask) return;
        this.flushLive();
        if (summary) this.post({ type: 'runResult', taskId, summary: toPage(summary) });
        else if (error && !isCancelled(error)) {
          this.post({ type: 'runFailed', taskId, message: describeError(error), code: (error as { code?: number }).code });
          if (error instanceof MissingKeyError) void providers.offerKey(error.provider);
        }
      }),
      runtime.onDidChangeState((s) => this.postState(s)),
      runtime.onDidCrash((info) => this.post({ type: 'notice', message: info.restarting ? `The runtime stopped (${info.reason}) and was restarted. A task it was running is marked failed; send a message to continue it.` : `The runtime stopped (${info.reason}) and was not restarted again.` })),
      providers.onDidChange(() => {
        this.postState();
        void this.postModels();
      }),
      vscode.window.onDidChangeActiveTextEditor(() => this.editorChanged()),
      vscode.window.onDidChangeTextEditorSelection(() => this.editorChanged()),
      vscode.languages.onDidChangeDiagnostics(() => this.editorChanged()),
    );
  }

  // ---- the page ---------------------------------------------------------------------

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.context.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    view.webview.html = this.html(view.webview);
    this.disposables.push(
      view.webview.onDidReceiveMessage((m) => void this.receive(m)),
      view.onDidDispose(() => {
        if (this.view === view) this.view = undefined;
      }),
    );
  }

  /** Opens this chat in an editor tab (a panel of its own, beside the sidebar's). */
  attachPanel(panel: vscode.WebviewPanel, instance: string): void {
    this.primary = false;
    this.instance = instance;
    this.view = panel;
    this.reveal = async () => panel.reveal();
    const media = vscode.Uri.joinPath(this.context.extensionUri, 'media');
    panel.webview.options = { enableScripts: true, localResourceRoots: [media] };
    panel.webview.html = this.html(panel.webview);
    this.disposables.push(panel.webview.onDidReceiveMessage((m) => void this.receive(m)));
    panel.onDidDispose(() => this.dispose());
  }

  /** Whether this chat shows a task (or the subagent of the task it shows: its questions belong there). */
  shows(taskId: string): boolean {
    return !!this.shownTask && (taskId === this.shownTask || this.parents.get(taskId) === this.shownTask);
  }

  get instanceName(): string {
    return this.instance;
  }

  get taskShown(): string | null {
    return this.shownTask;
  }

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  private html(webview: vscode.Webview): string {
    const nonce = randomBytes(18).toString('base64');
    const uri = (f: string) => webview.asWebviewUri(vscode.Uri.joinPath(this.context.extensionUri, 'media', 'webview', f)).toString();
    const csp = [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      `style-src ${webview.cspSource} 'nonce-${nonce}'`,
      `img-src ${webview.cspSource} data:`,
      `font-src ${webview.cspSource}`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${uri('codicon.css')}" id="vscode-codicon-stylesheet">
<link rel="stylesheet" href="${uri('chat.css')}">
<title>task-x</title>
</head>
<body data-instance="${this.instance}">
<div id="root"></div>
<script type="module" nonce="${nonce}" src="${uri('chat.js')}"></script>
</body>
</html>`;
  }

  post(msg: HostToWebview): void {
    this.posted.set(msg.type, (this.posted.get(msg.type) ?? 0) + 1);
    void this.view?.webview.postMessage(msg);
  }

  private state(): ChatStateSnapshot {
    const p = this.providers.active();
    const rs = this.runtime.state;
    return {
      runtime:
        rs === 'ready'
          ? { state: 'ready' }
          : rs === 'restarting'
            ? { state: 'restarting', reason: 'the runtime stopped' }
            : rs === 'failed'
              ? { state: 'failed', reason: this.runtime.process.failure?.message ?? 'the runtime failed' }
              : { state: 'starting' },
      taskId: this.shownTask,
      title: this.title,
      running: this.shownTask ? this.tasks.isRunning(this.shownTask) : false,
      mode: this.mode,
      model: this.model ?? p?.model ?? null,
      provider: p?.name ?? null,
      includeEditorContext: this.includeEditor,
      editor: this.editorInfo,
      claudeCode: this.claudeCode,
      skills: this.skills,
    };
  }

  postState(_?: unknown): void {
    this.post({ type: 'state', state: this.state() });
  }

  private async postModels(): Promise<void> {
    const p = this.providers.active();
    if (!p) {
      this.post({ type: 'models', models: [], selected: null });
      return;
    }
    try {
      const models = await this.providers.models(await this.providers.wire(p));
      this.post({ type: 'models', models: toPage<WireModelInfo[], ModelInfo[]>(models), selected: this.model ?? p.model });
    } catch (err) {
      this.post({ type: 'models', models: toPage<WireModelInfo[], ModelInfo[]>([{ id: p.model, capabilities: [] }]), selected: this.model ?? p.model });
      this.log(`[task-x] provider/models for ${p.name}: ${describeError(err)}`);
    }
  }

  // ---- messages from the page --------------------------------------------------------

  /** The page's onDidReceiveMessage handler: everything that reaches the host from the webview comes here. */
  async receive(raw: unknown): Promise<void> {
    const m = parseWebviewMessage(raw);
    if (!m) {
      const t = raw && typeof raw === 'object' && typeof (raw as { type?: unknown }).type === 'string' ? (raw as { type: string }).type : typeof raw;
      this.rejected.push(t);
      this.log(`[task-x] ignored a malformed message from the chat page (${t.slice(0, 40)})`);
      return;
    }
    try {
      await this.handle(m);
    } catch (err) {
      this.post({ type: 'error', message: describeError(err) });
    }
  }

  private async handle(m: WebviewToHost): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.readyEmitter.fire();
        this.postState();
        void this.postModels();
        if (this.shownTask && this.bestOfShown?.taskId === this.shownTask) {
          // A best-of run is not a saved task to replay: what it sent so far, again.
          const b = this.bestOfShown;
          this.post({ type: 'clear' });
          this.post(b.prompt);
          this.post(b.names);
          if (b.events.length) this.post({ type: 'events', taskId: b.taskId, events: b.events });
        } else if (this.shownTask) await this.openTask(this.shownTask, this.title);
        return;
      case 'send':
        await this.send(m);
        return;
      case 'steer': {
        const ok = await this.tasks.steer(m.taskId, m.text);
        if (!ok) this.post({ type: 'notice', message: 'The task is not running any more (or has 10 messages waiting); send the message again to continue it.' });
        return;
      }
      case 'stop':
        this.tasks.stop(m.taskId);
        return;
      case 'cancelTool':
        await this.tasks.cancelTool(m.taskId, m.callId);
        return;
      case 'cancelSubagent':
        await this.tasks.cancelSubagent(m.taskId);
        return;
      case 'openWorktree':
        await this.openWorktree(m.path);
        return;
      case 'refine': {
        try {
          const p = this.providers.active();
          const r = await this.runtime.request('prompt/refine', { prompt: m.text, ...(p ? { provider: await this.providers.wire(p, this.model ?? undefined) } : {}) });
          this.post({ type: 'refined', requestId: m.requestId, text: r.text, note: `Rewritten by ${r.model} as a ${r.kind} task.` });
        } catch (err) {
          this.post({ type: 'refined', requestId: m.requestId, text: null, note: `Could not refine the prompt: ${describeError(err)}` });
        }
        return;
      }
      case 'openCheckOutput':
        await this.openCheckOutput(m.taskId, m.name);
        return;
      case 'approvalReason': {
        // Kept for a Deny from the diff editor (answerFromDiff); only for an open approval.
        const reason = m.message.trim();
        if (this.tasks.pending.get(m.id)?.kind !== 'approval' || reason === '') this.denyReasons.delete(m.id);
        else this.denyReasons.set(m.id, reason);
        return;
      }
      case 'approvalAnswer': {
        this.denyReasons.delete(m.id);
        const decision = m.decision === 'allowOnce' ? 'allow' : m.decision === 'allowTask' ? 'allowSession' : 'deny';
        if (!this.tasks.answerApproval(m.id, decision, m.message)) {
          this.post({ type: 'notice', message: 'That approval is no longer open; nothing was changed.' });
        }
        return;
      }
      case 'askUserAnswer':
        if (!this.tasks.answerAskUser(m.id, m.answers)) this.post({ type: 'notice', message: 'Those questions are no longer open; nothing was changed.' });
        return;
      case 'openApprovalDiff':
        await this.openApprovalDiff(m.id);
        return;
      case 'openFileDiff':
        await this.openFileDiff(m.path);
        return;
      case 'openLink': {
        // Only after a click in the page. Web and mail links go through VS Code's
        // openExternal (which asks the user); a workspace-relative path (with an
        // optional #L<line>) opens the file; anything else is ignored.
        if (/^(https?|mailto):/i.test(m.url)) {
          await vscode.env.openExternal(vscode.Uri.parse(m.url, true));
          return;
        }
        if (/^[a-z][a-z0-9+.-]*:/i.test(m.url)) return;
        const hash = /#L(\d+)(?:-L?\d+)?$/.exec(m.url);
        const rel = decodeURIComponent(hash ? m.url.slice(0, hash.index) : m.url.split('#')[0]);
        const uri = this.resolveInRoot(rel);
        if (!uri) return;
        const line = hash ? Math.max(0, Number(hash[1]) - 1) : 0;
        await vscode.window.showTextDocument(uri, { selection: new vscode.Range(line, 0, line, 0), preview: true });
        return;
      }
      case 'openFile': {
        const uri = this.resolveInRoot(m.path);
        if (!uri) return;
        const line = m.line ? m.line - 1 : 0;
        await vscode.window.showTextDocument(uri, { selection: new vscode.Range(line, 0, line, 0), preview: true });
        return;
      }
      case 'mentionQuery':
        this.post({ type: 'mentionResults', requestId: m.requestId, items: await this.mentionCandidates(m.query) });
        return;
      case 'setMode':
        this.mode = m.mode;
        await this.context.globalState.update('taskX.chat.mode', m.mode);
        this.postState();
        return;
      case 'setModel': {
        this.model = m.model;
        const p = this.providers.active();
        if (p) await this.providers.setActive(p.name, m.model);
        this.postState();
        return;
      }
      case 'setIncludeEditorContext':
        this.includeEditor = m.enabled;
        await this.context.globalState.update('taskX.chat.includeEditorContext', m.enabled);
        this.postState();
        return;
      case 'newTask':
        this.newTask();
        return;
    }
  }

  newTask(): void {
    this.leaving(null);
    this.shownTask = null;
    this.bestOfShown = undefined;
    this.title = null;
    this.replaying = undefined;
    this.live = [];
    this.post({ type: 'clear' });
    this.postState();
  }

  /** Sends a prompt: a new task, or a follow-up of the shown one. */
  async send(m: Extract<WebviewToHost, { type: 'send' }>): Promise<string> {
    if (this.workspace.phase === 'none') throw new Error('Open a folder first: task-x works on a workspace folder.');
    const editor = await this.editorContext(m.mentions, m.includeEditorContext);
    if (m.mode !== this.mode) this.mode = m.mode;
    if (m.taskId && this.tasks.isRunning(m.taskId)) {
      await this.tasks.steer(m.taskId, m.text);
      return m.taskId;
    }
    const run = this.tasks.start({ prompt: m.text, taskId: m.taskId ?? undefined, mode: m.mode, model: m.model, images: m.images, editor });
    if (this.shownTask !== run.taskId) {
      this.shownTask = run.taskId;
      this.title = m.text.split('\n')[0].slice(0, 80);
      this.replaying = undefined;
    }
    this.post({
      type: 'userPrompt',
      taskId: run.taskId,
      text: m.text,
      images: m.images.length,
      mentions: m.mentions.map((x) => (x.kind === 'selection' ? `${x.path}:${x.startLine}-${x.endLine}` : x.path)),
    });
    this.postState();
    return run.taskId;
  }

  /**
   * Starts a new task from a command (Review, Run this plan, the API) and shows
   * it in the chat: `prompt` goes to the model, `shown` is the user's turn on the page.
   */
  async runPrompt(prompt: string, mode: ChatMode, shown = prompt): Promise<{ taskId: string; done: Promise<unknown> }> {
    if (this.workspace.phase === 'none') throw new Error('Open a folder first: task-x works on a workspace folder.');
    await this.reveal();
    this.newTask();
    const run = this.tasks.start({ prompt, mode });
    this.shownTask = run.taskId;
    this.title = shown.split('\n')[0].slice(0, 80);
    this.post({ type: 'userPrompt', taskId: run.taskId, text: shown, images: 0, mentions: [] });
    this.postState();
    return run;
  }

  /**
   * Shows a best-of-N run in the chat (QA: its progress was only in the Best of N panel):
   * the run's own events (each candidate's subagentStarted with its `candidate` index, its
   * transcript, subagentFinished, bestOfDone) render like a team's subagents.
   */
  async showBestOf(taskId: string, prompt: string, providers: string[]): Promise<void> {
    // Shown before anything is awaited: the run's first events may come right away.
    this.newTask();
    this.shownTask = taskId;
    this.title = `Best of ${providers.length}: ${prompt.split('\n')[0]}`.slice(0, 80);
    const shown: HostToWebview = { type: 'userPrompt', taskId, text: prompt, images: 0, mentions: [`best of ${providers.length}: ${providers.join(', ')}`] };
    const names: HostToWebview = { type: 'bestOfProviders', taskId, providers };
    this.bestOfShown = { taskId, prompt: shown, names, events: [] };
    this.post(shown);
    this.post(names);
    this.postState();
    await this.reveal();
  }

  /** Continues a saved task with a prompt in a mode (Run this plan), shown in the chat. */
  async continueTask(taskId: string, prompt: string, mode: ChatMode, shown: string): Promise<void> {
    await this.reveal();
    if (this.shownTask !== taskId) await this.openTask(taskId, this.title);
    this.mode = mode;
    this.tasks.start({ prompt, taskId, mode });
    this.post({ type: 'userPrompt', taskId, text: shown, images: 0, mentions: [] });
    this.postState();
  }

  // ---- events ------------------------------------------------------------------------

  /** Shows a saved (or running) task: agent/replay rebuilds its transcript, live events follow. */
  async openTask(taskId: string, title: string | null): Promise<void> {
    this.leaving(taskId);
    this.shownTask = taskId;
    this.title = title;
    this.live = [];
    const id = ++this.replayId;
    this.replaying = { taskId, id, batch: [] };
    this.postState();
    try {
      await this.tasks.replay(taskId);
    } catch (err) {
      if (this.replaying?.id === id) this.replaying = undefined;
      this.post({ type: 'error', message: `Could not open the task: ${describeError(err)}` });
    }
    // Its open approvals and questions show even when its history could not be read.
    for (const p of this.tasks.pending.forTask(taskId)) this.postRequest(p.id);
  }

  /** The last summary of each task this window ran (its validations open from the page). */
  private readonly summaries = new Map<string, AgentSummary>();

  /** Opens a check of a task's summary (its command, result and whole output) in an editor. */
  async openCheckOutput(taskId: string, name: string): Promise<boolean> {
    const v = this.summaries.get(taskId)?.validations?.find((c) => c.name === name);
    if (!v) return false;
    const head = `# ${v.name}: ${v.command}\n# ${v.timedOut ? 'timed out' : v.passed ? 'passed' : `failed (exit ${v.exitCode})`} in ${v.durationMs} ms\n\n`;
    const doc = await vscode.workspace.openTextDocument({ content: head + v.output, language: 'log' });
    await vscode.window.showTextDocument(doc, { preview: true });
    return true;
  }

  /** Opens a subagent's worktree in a new window: only a folder a runtime event named. */
  async openWorktree(dir: string): Promise<boolean> {
    if (!this.worktrees.has(dir)) {
      this.log('[task-x] refused to open a folder no subagent event named');
      return false;
    }
    await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(dir), { forceNewWindow: true });
    return true;
  }

  private onTaskEvent(e: TaskEvent): void {
    const w = e.event as unknown as { type: string; dir?: unknown; worktree?: unknown; taskId?: unknown };
    if (w.type === 'subagentStarted' && typeof w.dir === 'string' && w.dir) this.worktrees.add(w.dir);
    if (w.type === 'subagentStarted' && typeof w.taskId === 'string') this.parents.set(w.taskId, e.taskId);
    if (w.type === 'subagentFinished' && typeof w.worktree === 'string' && w.worktree) this.worktrees.add(w.worktree);
    const event = toPage<WireEvent, AgentEvent>(e.event);
    if (e.taskId !== this.shownTask) return;
    if (e.replay) {
      const r = this.replaying;
      if (!r || r.taskId !== e.taskId) return;
      const last = event.type === 'replayed';
      r.batch.push(event);
      if (last || r.batch.length >= REPLAY_BATCH) {
        this.post({ type: 'replay', replayId: r.id, taskId: r.taskId, title: this.title, events: r.batch, last });
        r.batch = [];
      }
      if (last) this.replaying = undefined;
      return;
    }
    this.live.push(event);
    if (this.bestOfShown?.taskId === e.taskId && this.bestOfShown.events.length < 20_000) this.bestOfShown.events.push(event);
    // Deltas come fast: one message per 16 ms (the page paints once a frame anyway);
    // anything else goes at once so approvals and tool rows are never late.
    if (e.event.type === 'textDelta' || e.event.type === 'toolOutput') {
      if (!this.liveTimer) this.liveTimer = setTimeout(() => this.flushLive(), 16);
    } else {
      this.flushLive();
    }
  }

  private flushLive(): void {
    if (this.liveTimer) {
      clearTimeout(this.liveTimer);
      this.liveTimer = undefined;
    }
    if (this.live.length === 0 || !this.shownTask) return;
    const events = this.live;
    this.live = [];
    this.post({ type: 'events', taskId: this.shownTask, events });
  }

  private postRequest(id: string): void {
    const p = this.tasks.pending.get(id);
    if (!p) return;
    this.flushLive();
    if (p.kind === 'approval') this.post({ type: 'approval', id, params: toPage<unknown, RequestApprovalParams>(p.params) });
    else this.post({ type: 'askUser', id, params: toPage<unknown, Extract<HostToWebview, { type: 'askUser' }>['params']>(p.params) });
    if (!this.visible) void this.reveal();
  }

  /**
   * A request for a task no chat shows: a notification naming the task when it has a label
   * (a best-of-N candidate names its provider), so two candidates' notices are not one
   * merged toast that hides the second.
   */
  private notifyElsewhere(taskId: string, kind: string, title?: string | null): void {
    const what = kind === 'approval' ? 'waits for your approval' : 'has a question for you';
    const label = this.tasks.labels.get(taskId) ?? (title ? `"${title.length > 60 ? `${title.slice(0, 59)}…` : title}"` : undefined);
    void vscode.window.showInformationMessage(`task-x: ${label ?? 'a task'} ${what}.`, 'Show').then((a) => {
      if (a === 'Show') void this.showTaskRequests(taskId);
    });
  }

  /**
   * The chat is about to show `next` instead of its task: when that task still waits for an
   * approval or an answer and no other chat shows it, say so, or it would wait unseen (its
   * row says "running") until the request times out as a deny.
   */
  private leaving(next: string | null): void {
    const prev = this.shownTask;
    if (!prev || prev === next) return;
    const open = this.tasks.pending.forTask(prev);
    if (open.length === 0 || [...ChatViewProvider.all].some((c) => c !== this && c.shows(prev))) return;
    this.notifyElsewhere(prev, open[0].kind, this.title);
  }

  /** Focuses the chat on a task, so its open approvals and questions show there. */
  async showTaskRequests(taskId: string): Promise<void> {
    void vscode.commands.executeCommand(`${ChatViewProvider.viewId}.focus`);
    await this.openTask(taskId, this.tasks.labels.get(taskId) ?? null);
  }

  // ---- approval previews ---------------------------------------------------------------

  /** Opens an approval's change in the diff editor: the file now, and as the call would leave it. */
  async openApprovalDiff(id: string): Promise<boolean> {
    const p = this.tasks.pending.get(id);
    if (!p || p.kind !== 'approval') return false;
    const params = p.params as WireApproval;
    const input = (params.input && typeof params.input === 'object' ? params.input : {}) as Record<string, unknown>;
    const preview = typeof params.preview === 'string' ? params.preview : '';
    let rel = typeof input.path === 'string' ? input.path : undefined;
    let after: string | undefined;
    let before = '';
    const patches = parseUnifiedDiff(preview);
    if (!rel && patches.length > 0) rel = patches[0].newPath ?? patches[0].oldPath ?? undefined;
    const uri = rel ? this.resolveInRoot(rel) : undefined;
    if (uri) {
      try {
        before = await readFile(uri.fsPath, 'utf8');
      } catch {
        before = '';
      }
      if (params.tool === 'write_file' && typeof input.content === 'string') after = input.content;
      else if (params.tool === 'replace_text' && typeof input.oldText === 'string' && typeof input.newText === 'string') {
        after = input.replaceAll === true ? before.split(input.oldText).join(input.newText) : before.replace(input.oldText, () => input.newText as string);
      } else if (params.tool === 'delete_path') after = '';
      else {
        const fp = patches.find((x) => x.newPath === rel || x.oldPath === rel) ?? patches[0];
        if (fp) after = applyPatch(before, fp);
      }
    }
    if (uri && rel && after !== undefined) {
      const left = this.previews.put('current', rel, before);
      const right = this.previews.put('proposed', rel, after);
      this.diffApprovals.set(right.toString(), id);
      await vscode.commands.executeCommand('vscode.diff', left, right, `${path.basename(rel)}: proposed by task-x (${String(params.tool)})`, { preview: true });
      return true;
    }
    // A command, or a preview cut short: show the preview itself.
    const doc = await vscode.workspace.openTextDocument({ content: preview || JSON.stringify(input, null, 2), language: preview.startsWith('---') ? 'diff' : 'plaintext' });
    await vscode.window.showTextDocument(doc, { preview: true });
    return true;
  }

  /**
   * Allow or deny from the diff editor's title bar (a VS Code button, so a user
   * action outside the page): the preview names its approval; an approval no
   * longer open changes nothing.
   */
  answerFromDiff(uri: vscode.Uri | undefined, decision: 'allow' | 'deny'): boolean {
    let key = uri?.toString();
    if (!key || !this.diffApprovals.has(key)) {
      const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
      if (input instanceof vscode.TabInputTextDiff) key = input.modified.toString();
    }
    const id = key ? this.diffApprovals.get(key) : undefined;
    if (!id) return false;
    this.diffApprovals.delete(key!);
    // A reason typed in the page's card goes with a Deny from here too.
    const message = decision === 'deny' ? this.denyReasons.get(id) : undefined;
    this.denyReasons.delete(id);
    if (!this.tasks.answerApproval(id, decision, message)) {
      void vscode.window.showInformationMessage('task-x: that approval is no longer open; nothing was changed.');
      return false;
    }
    this.post({ type: 'requestClosed', id, decision, ...(message ? { message } : {}) });
    void vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    return true;
  }

  // ---- the editor ---------------------------------------------------------------------

  private resolveInRoot(rel: string): vscode.Uri | undefined {
    const root = this.workspace.folder?.uri;
    if (!root) return undefined;
    const abs = path.resolve(root.fsPath, rel);
    if (abs !== root.fsPath && !abs.startsWith(root.fsPath + path.sep)) return undefined;
    return vscode.Uri.file(abs);
  }

  private relative(uri: vscode.Uri): string | undefined {
    const root = this.workspace.folder?.uri.fsPath;
    if (!root || uri.scheme !== 'file') return undefined;
    const r = path.relative(root, uri.fsPath);
    if (r.startsWith('..') || path.isAbsolute(r)) return undefined;
    return r.split(path.sep).join('/');
  }

  private editorChanged(): void {
    if (this.editorTimer) return;
    this.editorTimer = setTimeout(() => {
      this.editorTimer = undefined;
      const e = vscode.window.activeTextEditor;
      const active = e ? this.relative(e.document.uri) : undefined;
      const sel = e && active && !e.selection.isEmpty ? { path: active, startLine: e.selection.start.line + 1, endLine: e.selection.end.line + 1 } : null;
      const diagnostics = e ? vscode.languages.getDiagnostics(e.document.uri).length : 0;
      this.editorInfo = { activeFile: active ?? null, selection: sel, openFiles: this.openFiles().length, diagnostics };
      this.postState();
    }, 150);
  }

  private openFiles(): string[] {
    const out: string[] = [];
    for (const g of vscode.window.tabGroups.all) {
      for (const t of g.tabs) {
        const input = t.input as { uri?: vscode.Uri } | undefined;
        const r = input?.uri ? this.relative(input.uri) : undefined;
        if (r && !out.includes(r)) out.push(r);
      }
    }
    return out.slice(0, 20);
  }

  /** EditorContext for agent/run: the mentions always; the editor state when the switch is on. */
  async editorContext(mentions: Mention[], include: boolean): Promise<EditorContext | undefined> {
    const ctx: EditorContext = {};
    const paths = mentions.filter((m) => m.kind !== 'selection').map((m) => m.path).slice(0, 10);
    if (paths.length > 0) ctx.mentions = paths;
    const selMention = mentions.find((m): m is Extract<Mention, { kind: 'selection' }> => m.kind === 'selection');
    if (selMention) {
      const uri = this.resolveInRoot(selMention.path);
      if (uri) {
        const doc = await vscode.workspace.openTextDocument(uri);
        const end = Math.min(selMention.endLine, doc.lineCount);
        const text = doc.getText(new vscode.Range(selMention.startLine - 1, 0, end - 1, doc.lineAt(end - 1).text.length));
        ctx.selection = { path: selMention.path, startLine: selMention.startLine, endLine: end, text };
      }
    }
    if (include) {
      const e = vscode.window.activeTextEditor;
      const active = e ? this.relative(e.document.uri) : undefined;
      if (active) ctx.activeFile = active;
      if (e && active && !e.selection.isEmpty && !ctx.selection) {
        ctx.selection = { path: active, startLine: e.selection.start.line + 1, endLine: e.selection.end.line + 1, text: e.document.getText(e.selection) };
      }
      ctx.openFiles = this.openFiles();
      const diags: Diagnostic[] = [];
      for (const [uri, list] of vscode.languages.getDiagnostics()) {
        const rel = this.relative(uri);
        if (!rel) continue;
        for (const d of list) {
          if (d.severity > vscode.DiagnosticSeverity.Warning) continue;
          diags.push({ path: rel, line: d.range.start.line + 1, severity: d.severity === vscode.DiagnosticSeverity.Error ? 'error' : 'warning', message: d.message, source: d.source ?? '' });
          if (diags.length >= 50) break;
        }
        if (diags.length >= 50) break;
      }
      ctx.diagnostics = diags;
    } else {
      ctx.openFiles = [];
      ctx.diagnostics = [];
    }
    return Object.keys(ctx).length > 0 ? ctx : undefined;
  }

  private async mentionCandidates(query: string): Promise<{ kind: 'file' | 'folder'; path: string }[]> {
    const folder = this.workspace.folder;
    if (!folder) return [];
    const q = query.replace(/[{}[\]*?]/g, '');
    const files = await vscode.workspace.findFiles(new vscode.RelativePattern(folder, `**/*${q}*`), '**/{node_modules,.git}/**', 50);
    const items: { kind: 'file' | 'folder'; path: string }[] = [];
    const folders = new Set<string>();
    for (const f of files) {
      const r = this.relative(f);
      if (!r) continue;
      items.push({ kind: 'file', path: r });
      const d = path.posix.dirname(r);
      if (d !== '.' && d.toLowerCase().includes(q.toLowerCase())) folders.add(d);
    }
    return [...[...folders].map((p) => ({ kind: 'folder' as const, path: p })), ...items].slice(0, 50);
  }

  dispose(): void {
    ChatViewProvider.all.delete(this);
    this.view = undefined;
    if (this.liveTimer) clearTimeout(this.liveTimer);
    if (this.editorTimer) clearTimeout(this.editorTimer);
    for (const d of this.disposables) d.dispose();
  }
}

/**
 * The page's message types (webview-ui/src/messages.ts) name the protocol's types
 * through webview-ui/src/protocol.ts, open records until extui points it at
 * schema/protocol.d.ts; this is the one place a wire value crosses to them.
 */
function toPage<From, To>(v: From): To {
  return v as unknown as To;
}

// Tasks as the extension runs them: agent/run with the active provider, routes,
// fallbacks and prices from settings; agent/event notifications fanned out by
// task; the runtime's questions (agent/requestApproval, agent/askUser) held as
// pending requests under ids this window issues; steer, stop, stop one tool call;
// the saved task list, replay and delete.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { PendingRequests, type PendingRequest } from './approvals';
import { settings } from './config';
import type { Providers, WireProvider } from './providers';
import type { RuntimeClient } from './runtimeClient';
import type { AgentEvent, AgentRunParams, AgentSummary, AskUserParams, BestOfParams, BestOfResult, AskUserResult, ChatMode, ClaudeRunParams, EditorContext, ImageInput, RequestApprovalParams, RequestApprovalResult, ReplayResult, RoleProvider, Route, TaskInfo } from './protocol';

export interface TaskEvent {
  taskId: string;
  event: AgentEvent;
  /** Sent again by agent/replay (not live). */
  replay: boolean;
}

export type SavedTask = TaskInfo;

export interface RunOptions {
  prompt: string;
  taskId?: string | null;
  mode: ChatMode;
  model?: string | null;
  images?: ImageInput[];
  editor?: EditorContext;
}

type Decision = 'allow' | 'allowSession' | 'deny';
/** What an approval's pending request resolves with: the decision and, with deny, the user's reason. */
type ApprovalAnswer = { decision: Decision; message?: string };

/** A task id like the runtime's own (task-<16 hex>), chosen here so the view knows it before any event. */
export function newTaskId(): string {
  return `task-${randomBytes(8).toString('hex')}`;
}

export class TaskService implements vscode.Disposable {
  readonly pending = new PendingRequests();
  /** What to call a task in a notification (e.g. a best-of-N candidate by its provider), by task id. */
  readonly labels = new Map<string, string>();
  private readonly running = new Map<string, AbortController>();
  private readonly eventEmitter = new vscode.EventEmitter<TaskEvent>();
  /** Every agent/event, live and replayed, in the order the runtime sent them. */
  readonly onEvent = this.eventEmitter.event;
  private readonly requestEmitter = new vscode.EventEmitter<PendingRequest>();
  /** A new approval or askUser request for the user. */
  readonly onRequest = this.requestEmitter.event;
  private readonly closedEmitter = new vscode.EventEmitter<string>();
  /** A pending request ended without the user (withdrawn, cancelled, the runtime restarted). */
  readonly onRequestClosed = this.closedEmitter.event;
  private readonly runningEmitter = new vscode.EventEmitter<void>();
  readonly onDidChangeRunning = this.runningEmitter.event;
  private readonly finishedEmitter = new vscode.EventEmitter<{ taskId: string; summary?: AgentSummary; error?: unknown }>();
  readonly onDidFinish = this.finishedEmitter.event;
  private readonly answeredEmitter = new vscode.EventEmitter<string>();
  /** The user answered a pending request (its id). */
  readonly onDidAnswer = this.answeredEmitter.event;
  private readonly refusedEmitter = new vscode.EventEmitter<string>();
  /** An answer from the page was refused (an id not issued here, or closed). */
  readonly onDidRefuse = this.refusedEmitter.event;
  private readonly startEmitter = new vscode.EventEmitter<{ taskId: string; prompt: string; mode: ChatMode; engine: 'agent' | 'claude' }>();
  /** A run of a task began (a new task or a follow-up: the task runs again). */
  readonly onDidStart = this.startEmitter.event;
  private readonly replayEmitter = new vscode.EventEmitter<string>();
  /** agent/replay of a task is about to send its events again. */
  readonly onWillReplay = this.replayEmitter.event;
  private readonly deleteEmitter = new vscode.EventEmitter<string>();
  /** A task was deleted. */
  readonly onDidDelete = this.deleteEmitter.event;
  /** Refused answers are logged here (never their content). */
  log: (line: string) => void = () => {};

  constructor(
    private readonly runtime: RuntimeClient,
    private readonly providers: Providers,
  ) {
    runtime.onNotification('agent/event', (p) => {
      // From the runtime: checked before use, unknown event types passed on (the page ignores them).
      const n = p as { taskId?: unknown; event?: unknown; replay?: unknown };
      if (typeof n?.taskId !== 'string' || !n.event || typeof n.event !== 'object') return;
      const event = n.event as AgentEvent;
      if (typeof event.type !== 'string') return;
      if (event.type === 'approvalWithdrawn' && typeof event.callId === 'string') {
        for (const id of this.pending.closeCall(n.taskId, event.callId, undefined)) this.closedEmitter.fire(id);
      }
      this.eventEmitter.fire({ taskId: n.taskId, event, replay: n.replay === true });
    });
    runtime.onRequest('agent/requestApproval', (params, signal) => this.approval(params, signal));
    runtime.onRequest('agent/askUser', (params, signal) => this.askUser(params, signal));
    runtime.onDidCrash(() => {
      // The process that asked is gone: close its questions, its runs failed.
      for (const id of this.pending.closeTask(undefined, undefined)) this.closedEmitter.fire(id);
    });
  }

  private async approval(params: RequestApprovalParams, signal: AbortSignal): Promise<RequestApprovalResult> {
    const { id, answer } = this.pending.issue<RequestApprovalParams, ApprovalAnswer>('approval', String(params.taskId), String(params.callId), params, signal, (cid) => this.closedEmitter.fire(cid));
    this.requestEmitter.fire(this.pending.get(id)!);
    const a = await answer;
    // A deny's reason goes back in the answer itself (RequestApprovalResult.message): the
    // model reads it with the denied call's result in the same turn, not a turn later as a
    // steering message that races the runtime's next request did.
    if (a?.decision === 'deny' && a.message) return { decision: 'deny', message: a.message };
    return { decision: a?.decision ?? 'deny' };
  }

  private async askUser(params: AskUserParams, signal: AbortSignal): Promise<AskUserResult> {
    const { id, answer } = this.pending.issue<AskUserParams, Record<string, string[]> | null>('askUser', String(params.taskId), String(params.callId), params, signal, (cid) => this.closedEmitter.fire(cid));
    this.requestEmitter.fire(this.pending.get(id)!);
    const a = await answer;
    // protocol.md: `answers: null` means dismissed.
    return { answers: a ?? null };
  }

  /** The user's answer to an approval this window issued; false (and logged) for any other id. */
  answerApproval(id: string, decision: Decision, message?: string): boolean {
    const reason = decision === 'deny' ? message?.trim() : undefined;
    const outcome = this.pending.answer(id, 'approval', reason ? { decision, message: reason } : { decision });
    if (outcome !== 'accepted') {
      this.log(`[task-x] refused an approval answer for an id this window did not issue or already closed (${outcome})`);
      this.refusedEmitter.fire(id);
    } else this.answeredEmitter.fire(id);
    return outcome === 'accepted';
  }

  answerAskUser(id: string, answers: Record<string, string[]> | null): boolean {
    const outcome = this.pending.answer(id, 'askUser', answers);
    if (outcome !== 'accepted') {
      this.log(`[task-x] refused a question answer for an id this window did not issue or already closed (${outcome})`);
      this.refusedEmitter.fire(id);
    } else this.answeredEmitter.fire(id);
    return outcome === 'accepted';
  }

  isRunning(taskId: string): boolean {
    return this.running.has(taskId);
  }

  runningTasks(): string[] {
    return [...this.running.keys()];
  }

  /** The provider config for a run: the active provider, with `model` when the user switched it. */
  async provider(model?: string | null): Promise<WireProvider> {
    const p = this.providers.active();
    if (!p) throw new Error('No model provider is set up: run "task-x: Add Provider" first.');
    return this.providers.wire(p, model ?? undefined);
  }

  /** Starts agent/run; resolves with its summary when the task ends (the run goes on in the background). */
  start(opts: RunOptions): { taskId: string; done: Promise<AgentSummary> } {
    const taskId = opts.taskId ?? newTaskId();
    if (this.running.has(taskId)) throw new Error('This task is already running; type to steer it or stop it first.');
    const ac = new AbortController();
    this.running.set(taskId, ac);
    this.runningEmitter.fire();
    this.startEmitter.fire({ taskId, prompt: opts.prompt, mode: opts.mode, engine: opts.mode === 'claudeCode' ? 'claude' : 'agent' });
    const done = (async (): Promise<AgentSummary> => {
      if (opts.mode === 'claudeCode') return this.runClaude(taskId, opts, ac.signal);
      const params: AgentRunParams = {
        prompt: opts.prompt,
        provider: await this.provider(opts.model),
        chatMode: opts.mode,
        taskId,
      };
      if (opts.images && opts.images.length > 0) params.images = opts.images;
      if (opts.editor) params.editor = opts.editor;
      const mode = settings.policyMode();
      if (mode === 'acceptEdits' || mode === 'readOnly') params.policy = { mode, allow: [], deny: [] };
      const routes: Route[] = [];
      for (const r of settings.routes()) {
        const prov = await this.providers.wireByName(r.provider);
        if (prov) routes.push({ kinds: r.kinds as Route['kinds'], provider: prov });
      }
      if (routes.length > 0) params.routes = routes;
      const fallbacks = [];
      for (const name of settings.fallbacks()) {
        const prov = await this.providers.wireByName(name);
        if (prov) fallbacks.push(prov);
      }
      if (fallbacks.length > 0) params.fallbacks = fallbacks;
      const prices = settings.prices();
      if (prices.length > 0) params.prices = prices;
      if (opts.mode === 'team') {
        const roleProviders: RoleProvider[] = [];
        for (const r of settings.roleProviders()) {
          const prov = await this.providers.wireByName(r.provider);
          if (prov) roleProviders.push({ role: r.role, provider: prov });
        }
        if (roleProviders.length > 0) params.roleProviders = roleProviders;
        const maxParallel = settings.maxParallel();
        if (maxParallel > 0) params.limits = { ...params.limits, maxParallel };
      }
      return this.runtime.request('agent/run', params, ac.signal);
    })();
    done.then(
      (summary) => this.finishedEmitter.fire({ taskId, summary }),
      (error) => this.finishedEmitter.fire({ taskId, error }),
    );
    const cleanup = () => {
      if (this.running.get(taskId) === ac) {
        this.running.delete(taskId);
        this.runningEmitter.fire();
      }
    };
    done.then(cleanup, cleanup);
    return { taskId, done };
  }

  /** agent/bestOf: the same prompt on each provider (2 to 4), as one task; resolves with the candidates. */
  startBestOf(prompt: string, providers: WireProvider[]): { taskId: string; done: Promise<BestOfResult> } {
    const taskId = newTaskId();
    const ac = new AbortController();
    this.running.set(taskId, ac);
    this.runningEmitter.fire();
    this.startEmitter.fire({ taskId, prompt, mode: 'agent', engine: 'agent' });
    const params: BestOfParams = { prompt, providers, taskId };
    const mode = settings.policyMode();
    if (mode === 'acceptEdits' || mode === 'readOnly') params.policy = { mode, allow: [], deny: [] };
    const prices = settings.prices();
    if (prices.length > 0) params.prices = prices;
    const done = this.runtime.request('agent/bestOf', params, ac.signal);
    const end = (error?: unknown) => {
      if (this.running.get(taskId) === ac) {
        this.running.delete(taskId);
        this.runningEmitter.fire();
      }
      this.finishedEmitter.fire(error === undefined ? { taskId } : { taskId, error });
    };
    done.then(() => end(), (err) => end(err ?? new Error('failed')));
    return { taskId, done };
  }

  /**
   * The Claude Code engine (claude/run): the claude CLI does the task through
   * task-x's tools, with the same approvals (agent/requestApproval), changes
   * (the edit log) and history. The skills that apply (skills/resolve) go with
   * the prompt, since Claude Code does not read task-x's skills itself.
   */
  private async runClaude(taskId: string, opts: RunOptions, signal: AbortSignal): Promise<AgentSummary> {
    const claudePath = this.claudePath();
    if (!claudePath) throw new Error('The Claude Code CLI (claude) was not found: install it, or set taskX.claude.path.');
    let prompt = opts.prompt;
    try {
      const paths = opts.editor?.activeFile ? [opts.editor.activeFile, ...(opts.editor.mentions ?? [])] : (opts.editor?.mentions ?? []);
      const { active } = await this.runtime.request('skills/resolve', { prompt, paths });
      const skills = (active ?? []).filter((s) => this.skillAllowed(s.source));
      if (skills.length > 0) {
        prompt = `${skills.map((s) => `<skill name="${s.name}" reason="${s.reason}">\n${s.text}\n</skill>`).join('\n\n')}\n\n${prompt}`;
      }
    } catch (err) {
      this.log(`[task-x] skills/resolve: ${err instanceof Error ? err.message : String(err)}`);
    }
    const params: ClaudeRunParams = { prompt, taskId, claudePath };
    if (opts.images && opts.images.length > 0) params.images = opts.images;
    if (opts.editor) params.editor = opts.editor;
    const mode = settings.policyMode();
    if (mode === 'acceptEdits' || mode === 'readOnly') params.policy = { mode, allow: [], deny: [] };
    return this.runtime.request('claude/run', params, signal);
  }

  /** The Claude Code CLI to run, or '' when there is none (set by the extension: the setting, else `claude` on PATH). */
  claudePath: () => string = () => '';
  /** Whether a skill from `source` may be used (workspace skills only in trusted workspaces). */
  skillAllowed: (source: string) => boolean = () => true;

  /** Stops a running task ($/cancelRequest of its agent/run). */
  stop(taskId: string): boolean {
    const ac = this.running.get(taskId);
    if (!ac) return false;
    ac.abort();
    for (const id of this.pending.closeTask(taskId, undefined)) this.closedEmitter.fire(id);
    return true;
  }

  steer(taskId: string, text: string): Promise<boolean> {
    return this.runtime.request('agent/steer', { taskId, text });
  }

  cancelTool(taskId: string, callId: string): Promise<boolean> {
    return this.runtime.request('agent/cancelTool', { taskId, callId });
  }

  cancelSubagent(taskId: string): Promise<boolean> {
    return this.runtime.request('agent/cancelSubagent', { taskId });
  }

  async list(): Promise<SavedTask[]> {
    const r = await this.runtime.request('agent/tasks');
    return Array.isArray(r?.tasks) ? r.tasks : [];
  }

  /** agent/replay: the task's events come again through onEvent with replay set, ending with "replayed". */
  replay(taskId: string): Promise<ReplayResult> {
    this.replayEmitter.fire(taskId);
    return this.runtime.request('agent/replay', { taskId });
  }

  async deleteTask(taskId: string): Promise<boolean> {
    const ok = await this.runtime.request('agent/deleteTask', { taskId });
    this.deleteEmitter.fire(taskId);
    return ok;
  }

  dispose(): void {
    for (const ac of this.running.values()) ac.abort();
  }
}

// The API other extensions use (issue 36 item 14), as Cline and Roo Code export
// theirs: `vscode.extensions.getExtension('task-x.task-x').activate()` resolves
// to an object whose `api` is a TaskXExtensionApi. Start a task (shown in the
// chat, so the user sees and approves what it does: the API cannot answer an
// approval), stop it, and observe its lifecycle: started, approval needed,
// finished, failed. Documented in docs/extension.md; apiVersion changes only
// when something here changes incompatibly.
import * as vscode from 'vscode';
import type { AgentSummary } from './protocol';
import type { TaskService } from './taskService';

export type ApiMode = 'ask' | 'plan' | 'agent' | 'team';

export interface ApiTaskStarted {
  taskId: string;
  prompt: string;
  mode: string;
}

export interface ApiApprovalNeeded {
  taskId: string;
  /** An approval of a tool call, or a question for the user (agent/askUser). */
  kind: 'approval' | 'question';
  /** The tool that waits for the approval (approvals only). */
  tool?: string;
}

export interface ApiTaskFinished {
  taskId: string;
  status: 'completed' | 'cancelled' | 'failed';
  /** The last answer's text. */
  text: string;
  changedFiles: string[];
  summary: AgentSummary;
}

export interface ApiTaskFailed {
  taskId: string;
  /** The request failed (the runtime stopped, a bad provider): the task did not end with a summary. */
  error: string;
}

export interface TaskXExtensionApi {
  readonly apiVersion: 1;
  /** Starts a task with the active provider and shows it in the chat; resolves once it started. `done` settles when it ends. */
  startTask(options: { prompt: string; mode?: ApiMode }): Promise<{ taskId: string; done: Promise<ApiTaskFinished> }>;
  /** Stops a running task; false when it is not running. */
  stopTask(taskId: string): boolean;
  readonly onDidStartTask: vscode.Event<ApiTaskStarted>;
  readonly onDidNeedApproval: vscode.Event<ApiApprovalNeeded>;
  readonly onDidFinishTask: vscode.Event<ApiTaskFinished>;
  readonly onDidFailTask: vscode.Event<ApiTaskFailed>;
}

const MODES: readonly ApiMode[] = ['ask', 'plan', 'agent', 'team'];

export function createApi(tasks: TaskService, run: (prompt: string, mode: ApiMode) => Promise<{ taskId: string; done: Promise<unknown> }>): TaskXExtensionApi & vscode.Disposable {
  const started = new vscode.EventEmitter<ApiTaskStarted>();
  const approval = new vscode.EventEmitter<ApiApprovalNeeded>();
  const finishedE = new vscode.EventEmitter<ApiTaskFinished>();
  const failed = new vscode.EventEmitter<ApiTaskFailed>();
  const toFinished = (taskId: string, s: AgentSummary): ApiTaskFinished => ({
    taskId,
    status: s.status === 'completed' || s.status === 'cancelled' ? s.status : 'failed',
    text: typeof s.text === 'string' ? s.text : '',
    changedFiles: (s.changedFiles ?? []).map((f) => f.path),
    summary: s,
  });
  const subs = [
    tasks.onDidStart((s) => started.fire({ taskId: s.taskId, prompt: s.prompt, mode: s.mode })),
    tasks.onRequest((p) => {
      const params = p.params as { tool?: unknown };
      approval.fire({ taskId: p.taskId, kind: p.kind === 'approval' ? 'approval' : 'question', ...(p.kind === 'approval' && typeof params.tool === 'string' ? { tool: params.tool } : {}) });
    }),
    tasks.onDidFinish(({ taskId, summary, error }) => {
      if (summary) finishedE.fire(toFinished(taskId, summary));
      else if (error) failed.fire({ taskId, error: error instanceof Error ? error.message : String((error as { message?: unknown })?.message ?? error) });
    }),
  ];
  return {
    apiVersion: 1,
    async startTask(options) {
      if (!options || typeof options.prompt !== 'string' || options.prompt.trim() === '') throw new Error('startTask needs a prompt.');
      const mode = options.mode ?? 'agent';
      if (!MODES.includes(mode)) throw new Error(`startTask: mode is one of ${MODES.join(', ')}.`);
      const r = await run(options.prompt, mode);
      const done = r.done.then((s) => toFinished(r.taskId, s as AgentSummary));
      done.catch(() => undefined);
      return { taskId: r.taskId, done };
    },
    stopTask: (taskId) => tasks.stop(taskId),
    onDidStartTask: started.event,
    onDidNeedApproval: approval.event,
    onDidFinishTask: finishedE.event,
    onDidFailTask: failed.event,
    dispose() {
      for (const s of subs) s.dispose();
      for (const e of [started, approval, finishedE, failed]) e.dispose();
    },
  };
}

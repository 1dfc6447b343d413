// The requests the runtime sends for the user to answer (agent/requestApproval,
// agent/askUser), held under ids this window issues. The webview is hostile
// input (it shows model and file text): an answer counts only when it names an
// id issued here that is still open, and only once. Everything else is refused
// and changes nothing. Pure logic, unit-tested in Node.
import { randomBytes } from 'node:crypto';

export type PendingKind = 'approval' | 'askUser';

export interface PendingRequest<P = unknown, A = unknown> {
  id: string;
  kind: PendingKind;
  taskId: string;
  callId: string;
  params: P;
  resolve(answer: A): void;
}

export type AnswerOutcome = 'accepted' | 'unknown' | 'wrongKind';

export class PendingRequests {
  private readonly open = new Map<string, PendingRequest>();
  /** Every refused answer, for the log and the tests. */
  readonly refused: { id: string; kind: PendingKind; reason: AnswerOutcome }[] = [];

  /**
   * Holds a request until it is answered or closed. The id is 128 random bits:
   * a page cannot guess one it was not shown.
   */
  issue<P, A>(kind: PendingKind, taskId: string, callId: string, params: P, signal?: AbortSignal, onClose?: (id: string) => void): { id: string; answer: Promise<A | undefined> } {
    const id = `${kind}-${randomBytes(16).toString('hex')}`;
    const answer = new Promise<A | undefined>((resolve) => {
      const entry: PendingRequest<P, A> = {
        id,
        kind,
        taskId,
        callId,
        params,
        resolve: (a: A) => {
          if (!this.open.delete(id)) return;
          resolve(a);
        },
      };
      this.open.set(id, entry as PendingRequest);
      signal?.addEventListener(
        'abort',
        () => {
          if (this.open.delete(id)) {
            resolve(undefined);
            onClose?.(id);
          }
        },
        { once: true },
      );
    });
    return { id, answer };
  }

  /** An answer from the user: accepted only for an open id of the same kind. */
  answer(id: string, kind: PendingKind, value: unknown): AnswerOutcome {
    const p = this.open.get(id);
    if (!p) {
      this.refused.push({ id, kind, reason: 'unknown' });
      return 'unknown';
    }
    if (p.kind !== kind) {
      this.refused.push({ id, kind, reason: 'wrongKind' });
      return 'wrongKind';
    }
    p.resolve(value);
    return 'accepted';
  }

  get(id: string): PendingRequest | undefined {
    return this.open.get(id);
  }

  /** Closes the request of one tool call (approvalWithdrawn), resolving it with `value`; returns its id. */
  closeCall(taskId: string, callId: string, value: unknown): string[] {
    const ids: string[] = [];
    for (const p of [...this.open.values()]) {
      if (p.taskId === taskId && p.callId === callId) {
        ids.push(p.id);
        p.resolve(value);
      }
    }
    return ids;
  }

  /** Closes every request of a task (it ended, or the runtime restarted). */
  closeTask(taskId: string | undefined, value: unknown): string[] {
    const ids: string[] = [];
    for (const p of [...this.open.values()]) {
      if (taskId === undefined || p.taskId === taskId) {
        ids.push(p.id);
        p.resolve(value);
      }
    }
    return ids;
  }

  forTask(taskId: string): PendingRequest[] {
    return [...this.open.values()].filter((p) => p.taskId === taskId);
  }

  all(): PendingRequest[] {
    return [...this.open.values()];
  }
}

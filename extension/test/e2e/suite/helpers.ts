// Shared by the e2e tests: the extension's API, waiting on its events (never
// on sleeps), and the fake provider.
import * as vscode from 'vscode';
import type { TaskXApi } from '../../../src/extension';

export async function api(): Promise<TaskXApi> {
  const ext = vscode.extensions.getExtension<TaskXApi>('task-x.task-x');
  if (!ext) throw new Error('the extension under test is not loaded');
  return ext.activate();
}

/** Resolves when `check` holds, re-checked on each `event`; fails after `timeoutMs` with `what`. */
export function until<T>(event: vscode.Event<unknown>, check: () => T | undefined | false, what: string, timeoutMs = 30_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const first = check();
    if (first) {
      resolve(first);
      return;
    }
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`timed out waiting for ${what}`));
    }, timeoutMs);
    const sub = event(() => {
      const v = check();
      if (v) {
        clearTimeout(timer);
        sub.dispose();
        resolve(v);
      }
    });
  });
}

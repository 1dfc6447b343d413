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

import { FakeProvider } from './fakeProvider';
import { CHAT_FRAME, page } from './driver';

let fake: FakeProvider | undefined;

/** The fake model server, set up once as the active provider "fake" (its key in SecretStorage). */
export async function fakeModel(): Promise<FakeProvider> {
  const x = await api();
  if (!fake) {
    fake = new FakeProvider();
    await fake.start();
    await x.providers.save({ name: 'fake', kind: 'openaiCompatible', model: 'fake-model', baseUrl: fake.url }, 'sk-test-not-a-real-key');
  }
  await until(x.workspace.onDidChange, () => x.workspace.phase === 'ready' || x.workspace.phase === 'updated', 'the workspace index');
  return fake;
}

export const tid = (id: string) => `[data-testid="${id}"]`;

/** Opens the chat view and waits for its page. */
export async function openChat(): Promise<void> {
  await vscode.commands.executeCommand('taskX.chat.focus');
  await page.waitFor(tid('chat-input'), CHAT_FRAME);
}

/** Types a prompt in the chat page and presses its send button. */
export async function sendFromPage(text: string): Promise<void> {
  await openChat();
  await page.fill(tid('chat-input'), text, CHAT_FRAME);
  await page.click(tid('send'), CHAT_FRAME);
}

/** The next agent/run result or failure of a task. */
export function finished(taskId?: string): Promise<{ taskId: string; summary?: { status: string; [k: string]: unknown }; error?: unknown }> {
  return new Promise((resolve) => {
    void api().then((x) => {
      const sub = x.tasks.onDidFinish((f) => {
        if (taskId && f.taskId !== taskId) return;
        sub.dispose();
        resolve(f as never);
      });
    });
  });
}

/** The id of the task the next run starts. */
export async function nextStartedTask(): Promise<string> {
  const x = await api();
  return until(x.tasks.onDidChangeRunning, () => x.tasks.runningTasks()[0], 'a running task');
}

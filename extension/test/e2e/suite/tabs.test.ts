import * as assert from 'node:assert';
import * as vscode from 'vscode';
import type { ChatViewProvider } from '../../../src/chatView';
import { page } from './driver';
import { api, fakeModel, tid, until } from './helpers';

const frameOf = (instance: string) => `[data-instance="${instance}"] [data-testid="chat-root"]`;

describe('chats in editor tabs', () => {
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('runs two tasks at once in two tabs beside the sidebar, each with its own task and answer', async () => {
    const x = await api();
    const fake = await fakeModel();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const a = await vscode.commands.executeCommand<ChatViewProvider>('taskX.openChatInTab');
    const b = await vscode.commands.executeCommand<ChatViewProvider>('taskX.openChatInTab');
    const [fa, fb] = [frameOf(a.instanceName), frameOf(b.instanceName)];
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    fake.play({ gate, text: 'Answer for tab one.' }, { text: 'Answer for tab two.' });
    const before = fake.requests.length;
    await vscode.commands.executeCommand('workbench.action.openEditorAtIndex1');
    await page.fill(tid('chat-input'), 'The first task', fa);
    await page.click(tid('send'), fa);
    await fake.requestCount(before + 1);
    const taskA = a.taskShown!;
    await vscode.commands.executeCommand('workbench.action.openEditorAtIndex2');
    await page.fill(tid('chat-input'), 'The second task', fb);
    await page.click(tid('send'), fb);
    const taskB = await until(x.tasks.onDidChangeRunning, () => b.taskShown ?? undefined, 'the second task');
    assert.notStrictEqual(taskA, taskB);
    await until(x.tasks.onDidChangeRunning, () => !x.tasks.isRunning(taskB) || undefined, 'the second task done', 60_000);
    assert.ok(x.tasks.isRunning(taskA), 'the first task still runs while the second one finished');
    await page.waitFor(`${tid('message-assistant')} >> text=/Answer for tab two/`, fb);
    release();
    await until(x.tasks.onDidChangeRunning, () => !x.tasks.isRunning(taskA) || undefined, 'the first task done', 60_000);
    await vscode.commands.executeCommand('workbench.action.openEditorAtIndex1');
    await page.waitFor(`${tid('message-assistant')} >> text=/Answer for tab one/`, fa);
    assert.ok(!(await page.text(tid('message-assistant'), fa)).join(' ').includes('tab two'), 'each tab shows its own task');
    assert.strictEqual(x.chat.taskShown === taskA || x.chat.taskShown === taskB, false, 'the sidebar chat was left alone');
  });
});

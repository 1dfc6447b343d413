import * as assert from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { CHAT_FRAME, page } from './driver';
import { FakeAnthropic } from './fakeAnthropic';
import { api, fakeModel, finished, sendFromPage, tid, until } from './helpers';

const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
const cfg = () => vscode.workspace.getConfiguration('taskX');
const G = vscode.ConfigurationTarget.Global;

describe('Claude Code engine', () => {
  let anthropic: FakeAnthropic | undefined;

  after(async () => {
    const x = await api();
    await x.chat.receive({ type: 'setMode', mode: 'agent' });
    await cfg().update('claude.path', undefined, G);
    await anthropic?.close();
  });

  it('runs a task with the real claude CLI from the same chat: its edit asked and allowed in the page, pending in Changes, in the history', async function () {
    const bin = process.env.TASK_X_CLAUDE_BIN;
    const port = Number(process.env.TASK_X_E2E_ANTHROPIC_PORT);
    if (!bin || !existsSync(bin) || !port) this.skip();
    const x = await api();
    await fakeModel();
    x.chat.newTask();
    anthropic = new FakeAnthropic();
    await anthropic.start(port);
    await cfg().update('claude.path', bin, G);
    // The mode appears once the CLI is found.
    await openChatMode();
    anthropic.play(
      { text: 'I will write the file.', calls: [{ name: 'mcp__task-x__write_file', input: { path: 'claude.txt', content: 'written by Claude Code\n' } }] },
      { text: 'Claude wrote claude.txt.' },
    );
    const done = finished();
    await sendFromPage('Write claude.txt');
    await page.waitFor(tid('approval'), CHAT_FRAME, 'visible', 180_000);
    assert.match((await page.text(tid('approval'), CHAT_FRAME)).join(' '), /write_file/);
    await page.click(tid('approval-allow'), CHAT_FRAME);
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
    assert.strictEqual(readFileSync(join(root(), 'claude.txt'), 'utf8'), 'written by Claude Code\n');
    await page.waitFor(`${tid('message-assistant')} >> text=/Claude wrote claude\\.txt/`, CHAT_FRAME);
    await until(x.changes.onDidRefresh, () => x.changes.pendingFiles.some((p) => p.path === 'claude.txt'), 'claude.txt pending in Changes');
    const saved = await until(x.history.onDidRefresh, () => x.history.list.find((t) => t.taskId === f.taskId), 'the task in the history');
    assert.strictEqual(saved.chatMode, 'claudeCode');
    await x.changes.revert(['claude.txt']);
  });

  async function openChatMode(): Promise<void> {
    const x = await api();
    await vscode.commands.executeCommand('taskX.chat.focus');
    await page.waitFor(`${tid('mode-claudeCode')}`, CHAT_FRAME, 'attached');
    await x.chat.receive({ type: 'setMode', mode: 'claudeCode' });
  }
});

import * as assert from 'node:assert';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { CHAT_FRAME, page } from './driver';
import { FakeAnthropic } from './fakeAnthropic';
import { api, fakeModel, finished, tid, until } from './helpers';

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
    rmSync(join(root(), '.task-x'), { recursive: true, force: true });
  });

  it('runs a task with the real claude CLI from the same chat: a /skill completed and given to Claude, its edit asked and allowed in the page, pending in Changes, in the history', async function () {
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
    // A workspace skill: listed as it appears (skills/list), completed after "/", resolved for Claude (skills/resolve).
    mkdirSync(join(root(), '.task-x/skills/french'), { recursive: true });
    writeFileSync(join(root(), '.task-x/skills/french/SKILL.md'), '---\nname: french\ndescription: Answer in French\n---\nAlways answer the user in French.\n');
    await until(x.integrations.onDidChange, () => x.integrations.skills.some((k) => k.name === 'french'), 'the skill listed').catch(async (e) => {
      throw new Error(`${e}: ${JSON.stringify(x.integrations.skills)} / ${JSON.stringify(await x.runtime.request('skills/list'))}`);
    });
    const done = finished();
    await page.fill(tid('chat-input'), '', CHAT_FRAME);
    await page.press(tid('chat-input'), '/', CHAT_FRAME);
    await page.press(tid('chat-input'), 'f', CHAT_FRAME);
    await page.waitFor(`.mention-list li >> text=/\/french/`, CHAT_FRAME);
    await page.press(tid('chat-input'), 'Enter', CHAT_FRAME);
    assert.strictEqual(await page.evaluate<string>(`document.querySelector('[data-testid="chat-input"]').value`, CHAT_FRAME), '/french ');
    await page.fill(tid('chat-input'), '/french Write claude.txt', CHAT_FRAME);
    await page.click(tid('send'), CHAT_FRAME);
    await page.waitFor(tid('approval'), CHAT_FRAME, 'visible', 180_000);
    assert.match((await page.text(tid('approval'), CHAT_FRAME)).join(' '), /write_file/);
    await page.click(tid('approval-allow'), CHAT_FRAME);
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
    assert.match(JSON.stringify(anthropic.requests[0]?.messages ?? []), /Always answer the user in French/, 'Claude got the skill');
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

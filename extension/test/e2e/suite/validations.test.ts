import * as assert from 'node:assert';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { CHAT_FRAME, page } from './driver';
import { api, fakeModel, finished, sendFromPage, tid, until } from './helpers';

const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
const cfg = () => vscode.workspace.getConfiguration('taskX');
const G = vscode.ConfigurationTarget.Global;

describe('validations', () => {
  after(async () => {
    rmSync(join(root(), 'Makefile'), { force: true });
    await cfg().update('policy.mode', undefined, G);
  });

  it("shows the project's checks after an edit with their result and output, and a failed one opens in an editor", async () => {
    const x = await api();
    const fake = await fakeModel();
    x.chat.newTask();
    // The project's test command (a Makefile's test target) fails with a message.
    writeFileSync(join(root(), 'Makefile'), 'test:\n\t@echo "expected port 3000, got 4000" >&2; exit 1\n');
    await cfg().update('policy.mode', 'acceptEdits', G);
    fake.play(
      { calls: [{ name: 'replace_text', input: { path: 'src/app.ts', oldText: 'export const port', newText: 'export const appPort' } }] },
      { text: 'Renamed the port.' },
      // The fix round after the failed check, and after.
      { text: 'The test still fails; it expects the old port.' },
      { text: 'Done.' },
      { text: 'Done.' },
    );
    const done = finished();
    await sendFromPage('Rename port to appPort');
    // Running the project's check is a command: it is asked like any other.
    await page.waitFor(`${tid('approval')} >> text=/make test/`, CHAT_FRAME);
    await page.click(tid('approval-allow-task'), CHAT_FRAME);
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
    const checks = (f.summary as { validations?: { name: string; passed: boolean; output: string }[] }).validations ?? [];
    const test = checks.find((c) => c.name === 'test');
    assert.ok(test && !test.passed, `the test check failed: ${JSON.stringify(checks)}`);
    assert.match(test.output, /expected port 3000, got 4000/);
    await page.waitFor(`${tid('check')} >> text=/test .* failed \\(exit \\d+\\)/`, CHAT_FRAME);
    await page.click(`${tid('check')} summary`, CHAT_FRAME);
    await page.click(tid('open-check'), CHAT_FRAME);
    const ed = await until(vscode.window.onDidChangeActiveTextEditor, () => (vscode.window.activeTextEditor?.document.getText().includes('expected port 3000') ? vscode.window.activeTextEditor : undefined), 'the check output in an editor');
    assert.match(ed.document.getText(), /^# test: make test/);
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    await x.changes.revert(['src/app.ts']);
  });

  it('shows the same "no checks ran" and skipped-check lines when the task is reopened from history', async () => {
    const x = await api();
    const fake = await fakeModel();
    x.chat.newTask();
    rmSync(join(root(), 'Makefile'), { force: true });
    await cfg().update('policy.mode', 'acceptEdits', G);
    fake.play({ calls: [{ name: 'write_file', input: { path: 'notes.txt', content: 'no checks for this\n' } }] }, { text: 'Written.' });
    const done = finished();
    await sendFromPage('Write notes.txt');
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
    const lines = `${tid('run-result')} ${tid('no-checks')}, ${tid('run-result')} ${tid('check-skipped')}`;
    await page.waitFor(lines, CHAT_FRAME, 'attached');
    const live = await page.text(lines, CHAT_FRAME);
    assert.ok(live.length > 0 && live.some((l) => /No checks ran|skipped:/.test(l)), JSON.stringify(live));
    x.chat.newTask();
    await x.chat.openTask(f.taskId, null);
    await page.waitFor(lines, CHAT_FRAME, 'attached', 30000).catch(() => undefined);
    const replayed = await page.text(lines, CHAT_FRAME);
    assert.deepStrictEqual(replayed, live, 'the replay shows what the live run showed');
    await x.changes.keep();
    rmSync(join(root(), 'notes.txt'), { force: true });
  });
});

import * as assert from 'node:assert';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { CHAT_FRAME, page } from './driver';
import { transcript } from './fakeProvider';
import { api, fakeModel, finished, sendFromPage, tid, until } from './helpers';

const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
const appUri = () => vscode.Uri.file(join(root(), 'src/app.ts'));
const ours = (uri: vscode.Uri) => vscode.languages.getDiagnostics(uri).filter((d) => d.source?.startsWith('task-x review'));
const block = (findings: unknown[]) => '```task-x-findings\n' + JSON.stringify(findings) + '\n```';

describe('review findings', () => {
  beforeEach(async () => {
    const x = await api();
    await fakeModel();
    x.chat.newTask();
  });

  it('puts the findings of an answer in the Problems panel, and clears them when the task runs again or is deleted', async () => {
    const x = await api();
    const fake = await fakeModel();
    fake.play({ text: `One problem.\n\n${block([{ path: 'src/app.ts', line: 3, severity: 'error', message: 'the port is hard-coded' }, { path: 'src/greet.ts', line: 1, severity: 'info', message: 'greet has no test' }])}` });
    const done = finished();
    await sendFromPage('Review src/app.ts');
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
    const diags = await until(x.findings.onDidChange, () => (ours(appUri()).length > 0 ? ours(appUri()) : undefined), 'the finding as a diagnostic');
    assert.strictEqual(diags.length, 1);
    assert.strictEqual(diags[0].message, 'the port is hard-coded');
    assert.strictEqual(diags[0].severity, vscode.DiagnosticSeverity.Error);
    assert.strictEqual(diags[0].range.start.line, 2, 'line 3 is the third line');
    assert.strictEqual(diags[0].code, f.taskId);
    assert.strictEqual(ours(vscode.Uri.file(join(root(), 'src/greet.ts')))[0]?.severity, vscode.DiagnosticSeverity.Information);
    // The real Problems panel lists it.
    await vscode.commands.executeCommand('workbench.actions.view.problems');
    await page.waitFor('.markers-panel >> text=/the port is hard-coded/');

    // A follow-up runs the task again: its old findings go.
    fake.play({ text: 'Nothing else to report.' });
    const again = finished(f.taskId);
    await page.fill(tid('chat-input'), 'Anything else?', CHAT_FRAME);
    await page.click(tid('send'), CHAT_FRAME);
    assert.strictEqual((await again).summary?.status, 'completed');
    assert.strictEqual(ours(appUri()).length, 0, 'cleared when the task ran again');

    // Reopened from the history (agent/replay), the task's findings come back; deleted, they go.
    await x.chat.openTask(f.taskId, null);
    await until(x.findings.onDidChange, () => ours(appUri()).length === 1, 'findings rebuilt by the replay');
    await vscode.commands.executeCommand('taskX.tasks.delete', f.taskId, true);
    assert.strictEqual(ours(appUri()).length, 0, 'cleared when the task was deleted');
    assert.strictEqual(x.findings.forTask(f.taskId).length, 0);
  });

  it('clamps a finding past the end of its file to the last line, in the Problems panel', async () => {
    const x = await api();
    const fake = await fakeModel();
    const lines = readFileSync(appUri().fsPath, 'utf8').replace(/\n$/, '').split('\n');
    fake.play({ text: `Findings.\n\n${block([
      { path: 'src/app.ts', line: 9999, severity: 'warning', message: 'past the end of app.ts' },
      { path: 'src/greet.ts', line: 100000000000000000000, severity: 'error', message: 'far past the end of greet.ts' },
      { path: 'src/gone.ts', line: 4, severity: 'info', message: 'a file that does not exist' },
    ])}` });
    const done = finished();
    await sendFromPage('Review the app');
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
    const diags = await until(x.findings.onDidChange, () => (ours(appUri()).length > 0 ? ours(appUri()) : undefined), 'the finding as a diagnostic');
    assert.strictEqual(diags[0].range.start.line, lines.length - 1, 'clamped to the last line');
    assert.strictEqual(diags[0].range.end.character, lines[lines.length - 1].length);
    const greet = vscode.Uri.file(join(root(), 'src/greet.ts'));
    const greetLines = readFileSync(greet.fsPath, 'utf8').replace(/\n$/, '').split('\n').length;
    assert.strictEqual(ours(greet)[0]?.range.start.line, greetLines - 1);
    assert.strictEqual(ours(vscode.Uri.file(join(root(), 'src/gone.ts')))[0]?.range.start.line, 3, 'kept where it said');
    await vscode.commands.executeCommand('workbench.actions.view.problems');
    await page.waitFor('.markers-panel >> text=/past the end of app\\.ts/');
    await vscode.commands.executeCommand('taskX.tasks.delete', f.taskId, true);
  });

  it('reviews the uncommitted changes with the Review command (the diff from VS Code Git), findings in Problems', async () => {
    const x = await api();
    const fake = await fakeModel();
    const original = readFileSync(appUri().fsPath, 'utf8');
    writeFileSync(appUri().fsPath, `${original}export const secret = "hunter2";\n`);
    try {
      fake.play({ text: `A secret is committed.\n\n${block([{ path: 'src/app.ts', line: 4, severity: 'warning', message: 'a secret in the source' }])}` });
      const before = fake.requests.length;
      const taskId = await vscode.commands.executeCommand<string | undefined>('taskX.review', { kind: 'uncommitted' });
      assert.ok(taskId, 'the review started a task');
      const f = await finished(taskId);
      assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
      const sent = fake.requests.slice(before).map(transcript).find((t) => t.includes('Review the uncommitted changes')) ?? '';
      assert.match(sent, /hunter2/, `the model got the diff: ${sent.slice(0, 3000)}`);
      assert.match(sent, /task-x-findings/, 'and was asked for the findings block');
      const diags = await until(x.findings.onDidChange, () => (ours(appUri()).length > 0 ? ours(appUri()) : undefined), 'the review finding');
      assert.strictEqual(diags[0].message, 'a secret in the source');
      assert.strictEqual(diags[0].severity, vscode.DiagnosticSeverity.Warning);
      await page.waitFor(`${tid('message-user')} >> text=/Review the uncommitted changes/`, CHAT_FRAME);
    } finally {
      writeFileSync(appUri().fsPath, original);
    }
  });

  it('reviews a branch against its base with the Review command', async () => {
    const x = await api();
    const fake = await fakeModel();
    // The test's own git: a branch with one commit on top of main.
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@task-x.invalid', ...args], { cwd: root(), encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } });
    git('stash', '--include-untracked');
    git('checkout', '-q', '-b', 'feature');
    writeFileSync(join(root(), 'src/feature.ts'), 'export const feature = eval("1 + 1");\n');
    git('add', 'src/feature.ts');
    git('commit', '-q', '-m', 'feature');
    try {
      fake.play({ text: `eval is risky.\n\n${block([{ path: 'src/feature.ts', line: 1, severity: 'error', message: 'eval runs arbitrary code' }])}` });
      const before = fake.requests.length;
      const taskId = await vscode.commands.executeCommand<string | undefined>('taskX.review', { kind: 'branch', base: 'main' });
      assert.ok(taskId, 'the review started a task');
      const f = await finished(taskId);
      assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
      const sent = fake.requests.slice(before).map(transcript).find((t) => t.includes('this branch against main')) ?? '';
      assert.match(sent, /eval\(/, `the model got the branch's diff: ${sent.slice(0, 2000)}`);
      const uri = vscode.Uri.file(join(root(), 'src/feature.ts'));
      const diags = await until(x.findings.onDidChange, () => (ours(uri).length > 0 ? ours(uri) : undefined), 'the branch review finding');
      assert.strictEqual(diags[0].message, 'eval runs arbitrary code');
    } finally {
      git('checkout', '-q', 'main');
      git('branch', '-q', '-D', 'feature');
      try {
        git('stash', 'pop');
      } catch {
        /* nothing was stashed */
      }
    }
  });
});

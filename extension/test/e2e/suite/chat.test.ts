import * as assert from 'node:assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { CHAT_FRAME, page } from './driver';
import { transcript } from './fakeProvider';
import { api, fakeModel, finished, nextStartedTask, openChat, sendFromPage, tid, until } from './helpers';

const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;

describe('chat', () => {
  before(async () => {
    // VS Code's own Chat view in the secondary side bar is not ours: close it for room.
    await vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar');
  });

  beforeEach(async () => {
    const x = await api();
    await fakeModel();
    x.chat.newTask();
    await vscode.workspace.getConfiguration('taskX').update('policy.mode', undefined, vscode.ConfigurationTarget.Global);
  });

  it('streams an answer into the page, rendered as markdown text', async () => {
    const fake = await fakeModel();
    fake.play({ text: 'The port is **3000**, set in `src/app.ts`.' });
    const done = finished();
    await sendFromPage('Which port does the app use?');
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
    await page.waitFor(`${tid('message-assistant')} >> text=/port is/`, CHAT_FRAME);
    const texts = await page.text(tid('message-assistant'), CHAT_FRAME);
    assert.ok(texts.join(' ').includes('The port is 3000, set in src/app.ts.'), texts.join(' | '));
    assert.strictEqual(await page.count(`${tid('message-assistant')} strong`, CHAT_FRAME), 1, 'bold rendered as <strong>');
    const users = await page.text(tid('message-user'), CHAT_FRAME);
    assert.ok(users.some((t) => t.includes('Which port does the app use?')));
  });

  it('asks for approval with the real diff, opens it in the diff editor, and applies the edit when allowed from the page', async () => {
    const x = await api();
    const fake = await fakeModel();
    fake.play(
      { calls: [{ name: 'replace_text', input: { path: 'src/app.ts', oldText: 'port = 3000', newText: 'port = 8080' } }] },
      { text: 'Changed the port to 8080.' },
    );
    const done = finished();
    await sendFromPage('Use port 8080');
    await page.waitFor(tid('approval'), CHAT_FRAME);
    const card = (await page.text(tid('approval'), CHAT_FRAME)).join(' ');
    assert.match(card, /replace_text/);
    assert.match(card, /port = 8080/, 'the preview diff is shown');
    await page.click(tid('approval-open-diff'), CHAT_FRAME);
    const diffTab = await until(vscode.window.tabGroups.onDidChangeTabs, () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputTextDiff), 'the diff editor');
    const input = diffTab.input as vscode.TabInputTextDiff;
    const proposed = await vscode.workspace.openTextDocument(input.modified);
    assert.match(proposed.getText(), /port = 8080/);
    assert.match((await vscode.workspace.openTextDocument(input.original)).getText(), /port = 3000/);
    await page.screenshot('extension-chat-approval.png');
    assert.match(readFileSync(join(root(), 'src/app.ts'), 'utf8'), /port = 3000/, 'nothing is written before the answer');
    await page.click(tid('approval-allow'), CHAT_FRAME);
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
    assert.match(readFileSync(join(root(), 'src/app.ts'), 'utf8'), /port = 8080/);
    await until(x.changes.onDidRefresh, () => x.changes.pendingFiles.some((p) => p.path === 'src/app.ts'), 'src/app.ts pending in Changes');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await x.changes.keep();
  });

  it('answers an approval from the diff editor itself (its title bar Allow button)', async () => {
    const fake = await fakeModel();
    fake.play(
      { calls: [{ name: 'write_file', input: { path: 'from-diff.txt', content: 'approved in the diff editor\n' } }] },
      { text: 'Written.' },
    );
    const done = finished();
    await sendFromPage('Write from-diff.txt');
    await page.waitFor(tid('approval'), CHAT_FRAME);
    await page.click(tid('approval-open-diff'), CHAT_FRAME);
    await until(vscode.window.tabGroups.onDidChangeTabs, () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputTextDiff), 'the diff editor');
    await page.click('.editor-actions .action-label[aria-label^="Allow this change"]');
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
    assert.strictEqual(readFileSync(join(root(), 'from-diff.txt'), 'utf8'), 'approved in the diff editor\n');
    const x = await api();
    await x.changes.keep();
  });

  it('sends the reason typed in the card with a Deny from the diff editor, and the card says it was denied', async () => {
    const fake = await fakeModel();
    fake.play({ calls: [{ name: 'write_file', input: { path: 'denied-in-diff.txt', content: 'no\n' } }] }, { text: 'Understood.' });
    const before = fake.requests.length;
    const done = finished();
    await sendFromPage('Write denied-in-diff.txt');
    await page.waitFor(tid('approval'), CHAT_FRAME);
    await page.fill(`${tid('approval')} .deny-reason`, 'name it docs/notes.txt', CHAT_FRAME);
    await page.click(tid('approval-open-diff'), CHAT_FRAME);
    await until(vscode.window.tabGroups.onDidChangeTabs, () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputTextDiff), 'the diff editor');
    await page.click('.editor-actions .action-label[aria-label^="Deny this change"]');
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
    // Before the fix the model read only "The user denied this tool call." and the card said "No longer needed."
    assert.match(JSON.stringify(fake.requests[before + 1]), /The user denied this tool call\. The user said: name it docs\/notes\.txt/);
    await page.waitFor(`${tid('approval')} .settled-note >> text=/You denied this in the diff editor: name it docs\/notes\.txt/`, CHAT_FRAME);
    assert.throws(() => readFileSync(join(root(), 'denied-in-diff.txt')), 'nothing written');
  });

  it('refuses a forged approval message posted by a script in the page', async () => {
    const x = await api();
    const fake = await fakeModel();
    fake.play(
      { calls: [{ name: 'write_file', input: { path: 'forged.txt', content: 'should not be written' } }] },
      { text: 'Not written.' },
    );
    const done = finished();
    await sendFromPage('Write forged.txt');
    await page.waitFor(tid('approval'), CHAT_FRAME);
    const [open] = x.tasks.pending.all();
    assert.ok(open, 'an approval is pending');
    const refusedBefore = x.tasks.pending.refused.length;
    // A script in the page cannot get a channel of its own: the page's code took the only
    // VS Code API instance, and a second acquireVsCodeApi() throws.
    const second = await page.evaluate<string>(
      `(() => { try { acquireVsCodeApi(); return 'acquired'; } catch (e) { return String(e.message); } })()`,
      CHAT_FRAME,
    );
    assert.match(second, /already been acquired/);
    // And whatever does reach the host through the webview's message channel
    // (onDidReceiveMessage) with a made-up id, a guessed prefix, or the right id
    // under the wrong kind, is refused.
    await x.chat.receive({ type: 'approvalAnswer', id: 'approval-00000000000000000000000000000000', decision: 'allowOnce' });
    await x.chat.receive({ type: 'approvalAnswer', id: open.id.slice(0, 20), decision: 'allowTask' });
    await x.chat.receive({ type: 'askUserAnswer', id: open.id, answers: {} });
    await until(x.tasks.onDidRefuse, () => x.tasks.pending.refused.length >= refusedBefore + 3, 'three refused answers');
    assert.strictEqual(x.tasks.pending.refused.length, refusedBefore + 3, 'each forged answer was refused');
    assert.ok(x.tasks.pending.get(open.id), 'the real approval is still open');
    assert.throws(() => readFileSync(join(root(), 'forged.txt')), 'nothing was written');
    await page.click(tid('approval-deny'), CHAT_FRAME);
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed');
    assert.throws(() => readFileSync(join(root(), 'forged.txt')), 'denied: still nothing written');
  });

  it('gives the model a deny reason typed in the page with the denied call, in the same turn', async () => {
    const fake = await fakeModel();
    fake.play(
      { calls: [{ name: 'write_file', input: { path: 'denied.txt', content: 'no\n' } }] },
      { text: 'Understood, not writing it.' },
      { text: 'Anything else?' },
    );
    const before = fake.requests.length;
    const done = finished();
    await sendFromPage('Write denied.txt');
    await page.waitFor(tid('approval'), CHAT_FRAME);
    await page.fill(`${tid('approval')} .deny-reason`, 'write it under docs/ instead', CHAT_FRAME);
    await page.click(tid('approval-deny'), CHAT_FRAME);
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
    // The request right after the denial carries the reason in the denied call's result
    // (before the fix it went as agent/steer and reached only the turn after).
    assert.strictEqual(fake.requests.length - before, 2, 'two model turns: the call, then the answer to the denial');
    const second = JSON.stringify(fake.requests[before + 1]);
    assert.match(second, /The user denied this tool call\. The user said: write it under docs\/ instead/);
    assert.throws(() => readFileSync(join(root(), 'denied.txt')), 'nothing written');
  });

  it('says so when the chat leaves a task that waits for an approval, and Show brings the approval back', async () => {
    const x = await api();
    const fake = await fakeModel();
    fake.play({ calls: [{ name: 'write_file', input: { path: 'left.txt', content: 'left\n' } }] }, { text: 'Not written.' });
    const done = finished();
    await sendFromPage('Write left.txt');
    await page.waitFor(tid('approval'), CHAT_FRAME);
    x.chat.newTask();
    // Before the fix nothing said the hidden task waited: its row said "running" until the approval timed out.
    // (The test workbench keeps notifications in the list without toasts: open the list.)
    await vscode.commands.executeCommand('notifications.showList');
    const note = '.notifications-center .notification-list-item:has-text("\\"Write left.txt\\" waits for your approval")';
    await page.waitFor(note);
    await page.click(`${note} .monaco-button >> text=Show`);
    await vscode.commands.executeCommand('notifications.hideList');
    await page.waitFor(tid('approval-deny'), CHAT_FRAME);
    await page.click(tid('approval-deny'), CHAT_FRAME);
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
    assert.throws(() => readFileSync(join(root(), 'left.txt')), 'denied: nothing written');
  });

  it('shows model output and file contents with HTML in them as text, running nothing', async () => {
    const fake = await fakeModel();
    writeFileSync(join(root(), 'evil.html'), '<img src=x onerror="window.top.__taskxPwned=1"><script>window.__taskxPwned=2</script>\n');
    fake.play(
      { calls: [{ name: 'read_file', input: { path: 'evil.html' } }] },
      { text: 'Here it is: <img src=x onerror="window.__taskxPwned=3"> and <script>window.__taskxPwned=4</script> <b onmouseover="window.__taskxPwned=5">b</b>' },
    );
    const done = finished();
    await sendFromPage('Show evil.html');
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
    await page.waitFor(`${tid('message-assistant')} >> text=/Here it is/`, CHAT_FRAME);
    const pwned = await page.evaluate<unknown>('window.__taskxPwned ?? (window.top === window ? null : null)', CHAT_FRAME);
    assert.strictEqual(pwned, null, 'no script or handler ran');
    const live = `${tid('message-assistant')} img, ${tid('message-assistant')} script, ${tid('tool-call')} img, ${tid('tool-call')} script, [onerror], [onmouseover]`;
    assert.strictEqual(await page.count(live, CHAT_FRAME), 0, 'no live element from the output');
    const text = (await page.text(tid('message-assistant'), CHAT_FRAME)).join(' ');
    assert.match(text, /<img src=x onerror=/, 'the HTML shows as text');
  });

  it('asks the user (radio question) and gives the model the chosen answer', async () => {
    const fake = await fakeModel();
    const before = fake.requests.length;
    fake.play(
      { calls: [{ name: 'ask_user', input: { questions: [{ id: 'db', text: 'Which database?', kind: 'radio', options: ['sqlite', 'postgres'] }] } }] },
      { text: 'Going with postgres.' },
    );
    const done = finished();
    await sendFromPage('Set up a database');
    await page.waitFor(tid('askuser'), CHAT_FRAME);
    await page.click(`${tid('askuser-option')}[value="postgres"]`, CHAT_FRAME);
    await page.click(tid('askuser-submit'), CHAT_FRAME);
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
    const second = fake.requests[before + 1];
    assert.ok(second, 'the model was asked again');
    assert.match(transcript(second), /postgres/);
    assert.match(transcript(second), /answered/);
  });

  it('stops a running task from the page', async () => {
    const fake = await fakeModel();
    const before = fake.requests.length;
    fake.play({ hang: true });
    const done = finished();
    await sendFromPage('Think for a long time');
    await fake.requestCount(before + 1);
    const closedBefore = fake.hangsClosed;
    const errorsBefore = await page.count(tid('error'), CHAT_FRAME);
    const stoppedBefore = await page.count('.card-title:has-text("Stopped")', CHAT_FRAME);
    await page.click(tid('stop'), CHAT_FRAME);
    const f = await done;
    const status = f.summary?.status ?? ((f.error as { code?: number })?.code === -32800 ? 'cancelled' : String(f.error));
    assert.strictEqual(status, 'cancelled');
    // Only the Stopped card: no red "The task could not run: cancelled" above it.
    await page.waitFor(`.card-title:has-text("Stopped") >> nth=${stoppedBefore}`, CHAT_FRAME);
    assert.strictEqual(await page.count(tid('error'), CHAT_FRAME), errorsBefore, (await page.text(tid('error'), CHAT_FRAME)).join(' | '));
    // The runtime hung up on the model: the stop reached the model call, not only the view.
    await fake.hangClosed(closedBefore + 1);
    const x = await api();
    await x.history.refresh();
    const saved = x.history.list.find((t) => t.taskId === f.taskId);
    assert.ok(saved, 'the stopped task is in the history');
  });

  it('reopens a finished task from the history (agent/replay) and continues it', async () => {
    const x = await api();
    const fake = await fakeModel();
    fake.play({ text: 'First answer about greet.' });
    let done = finished();
    await sendFromPage('Explain greet');
    const first = await done;
    assert.strictEqual(first.summary?.status, 'completed');
    await vscode.commands.executeCommand('taskX.newTask');
    await until(x.history.onDidRefresh, () => x.history.list.find((t) => t.taskId === first.taskId), 'the task in the history');
    await vscode.commands.executeCommand('taskX.tasks.open', first.taskId);
    await page.waitFor(`${tid('message-assistant')} >> text=/First answer about greet/`, CHAT_FRAME);
    await page.waitFor(`${tid('message-user')} >> text=/Explain greet/`, CHAT_FRAME);
    const before = fake.requests.length;
    fake.play({ text: 'Second answer, continued.' });
    done = finished(first.taskId);
    await sendFromPage('And in more detail?');
    const second = await done;
    assert.strictEqual(second.taskId, first.taskId, 'the follow-up continues the same task');
    assert.match(transcript(fake.requests[before]), /First answer about greet/, 'the model got the earlier turns');
    await page.waitFor(`${tid('message-assistant')} >> text=/Second answer/`, CHAT_FRAME);
  });

  it('recovers when the runtime is killed mid-task: a notice, the task failed, and the next prompt works', async () => {
    const x = await api();
    const fake = await fakeModel();
    const before = fake.requests.length;
    fake.play({ hang: true });
    const done = finished();
    await sendFromPage('Start something long');
    await fake.requestCount(before + 1);
    const taskId = await nextStartedTask();
    const ready = new Promise<void>((r) => {
      const sub = x.runtime.onDidBecomeReady(() => {
        sub.dispose();
        r();
      });
    });
    process.kill(x.runtime.process.pid!, 'SIGKILL');
    const f = await done;
    assert.ok(f.error, 'the run failed with the process');
    await ready;
    await page.waitFor(`${tid('notice')} >> text=/restarted/`, CHAT_FRAME);
    await until(x.workspace.onDidChange, () => x.workspace.phase === 'ready', 'the workspace reopened');
    await x.history.refresh();
    assert.strictEqual(x.history.list.find((t) => t.taskId === taskId)?.status, 'failed', 'the interrupted task is failed');
    fake.play({ text: 'Back again.' });
    const again = finished();
    await sendFromPage('Are you there?');
    const g = await again;
    assert.strictEqual(g.summary?.status, 'completed', String(g.error ?? ''));
  });
});

describe('changes', () => {
  it('lists pending edits, undoes one operation, reverts and keeps files, and never reverts over a later user change', async () => {
    const x = await api();
    const fake = await fakeModel();
    await openChat();
    await vscode.workspace.getConfiguration('taskX').update('policy.mode', 'acceptEdits', vscode.ConfigurationTarget.Global);
    try {
      fake.play(
        { calls: [
          { name: 'write_file', input: { path: 'src/new.ts', content: 'export const created = true;\n' } },
          { name: 'replace_text', input: { path: 'src/greet.ts', oldText: 'hello', newText: 'hi' } },
        ] },
        { calls: [{ name: 'replace_text', input: { path: 'README.md', oldText: '# fixture', newText: '# fixture project' } }] },
        { text: 'Three edits.' },
      );
      const done = finished();
      await sendFromPage('Make three edits');
      const f = await done;
      assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
      await x.changes.refresh();
      const paths = x.changes.pendingFiles.map((p) => p.path).sort();
      assert.deepStrictEqual(paths, ['README.md', 'src/greet.ts', 'src/new.ts']);
      await vscode.commands.executeCommand('taskX.changes.focus');
      await page.waitFor('.pane-body >> text=/greet.ts/');
      await vscode.commands.executeCommand('taskX.changes.openDiff', 'src/greet.ts');
      await until(vscode.window.tabGroups.onDidChangeTabs, () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputTextDiff), 'the diff editor');
      await page.screenshot('extension-changes-view.png');
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');

      // Undo the operation that edited greet.ts.
      const greet = x.changes.pendingFiles.find((p) => p.path === 'src/greet.ts')!;
      const undone = await x.changes.undo(greet.operations[greet.operations.length - 1]);
      assert.ok(undone.restored.includes('src/greet.ts'), JSON.stringify(undone));
      assert.match(readFileSync(join(root(), 'src/greet.ts'), 'utf8'), /hello/);

      // The user edits README.md after the agent: revert must not overwrite it.
      writeFileSync(join(root(), 'README.md'), '# my own title\n');
      const rev = await x.changes.revert(['README.md']);
      assert.deepStrictEqual(rev.conflicts, ['README.md']);
      assert.match(x.changes.lastConflicts[0], /changed since the agent's edit/);
      assert.strictEqual(readFileSync(join(root(), 'README.md'), 'utf8'), '# my own title\n');

      // Revert the created file: it goes away.
      const r2 = await x.changes.revert(['src/new.ts']);
      assert.deepStrictEqual(r2.reverted, ['src/new.ts']);
      assert.throws(() => readFileSync(join(root(), 'src/new.ts')));

      await x.changes.keep();
      assert.strictEqual(x.changes.pendingFiles.length, 0);
    } finally {
      await vscode.workspace.getConfiguration('taskX').update('policy.mode', undefined, vscode.ConfigurationTarget.Global);
    }
  });
});

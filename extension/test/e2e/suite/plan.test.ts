import * as assert from 'node:assert';
import * as vscode from 'vscode';
import { CHAT_FRAME, page } from './driver';
import { transcript } from './fakeProvider';
import { api, fakeModel, finished, sendFromPage, tid, until } from './helpers';

describe('plan review', () => {
  after(async () => {
    const x = await api();
    await x.chat.receive({ type: 'setMode', mode: 'agent' });
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('opens a plan-mode answer as a document; the edited plan runs in agent mode from the title bar', async () => {
    const x = await api();
    const fake = await fakeModel();
    x.chat.newTask();
    await x.chat.receive({ type: 'setMode', mode: 'plan' });
    fake.play({ text: '## Plan\n\n1. Change the port in src/app.ts to 8080.\n2. Say so in README.md.' });
    const opened = new Promise<{ taskId: string; doc: vscode.TextDocument }>((r) => {
      const sub = x.plans.onDidOpenPlan((e) => {
        sub.dispose();
        r(e);
      });
    });
    const done = finished();
    await sendFromPage('Plan a port change');
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
    const { taskId, doc } = await opened;
    assert.strictEqual(taskId, f.taskId);
    assert.match(doc.getText(), /1\. Change the port in src\/app\.ts to 8080\./);
    // The user edits the plan: step 2 goes, a step of their own comes.
    const ed = await vscode.window.showTextDocument(doc);
    const text = doc.getText();
    const at = text.indexOf('2. Say so in README.md.');
    await ed.edit((b) => b.replace(new vscode.Range(doc.positionAt(at), doc.positionAt(at + '2. Say so in README.md.'.length)), '2. Leave README.md alone; add a comment above the port instead.'));
    fake.play({ text: 'Following the reviewed plan.' });
    const before = fake.requests.length;
    const again = finished(taskId);
    await page.click('.editor-actions .action-label[aria-label^="Run this plan"]');
    const g = await again;
    assert.strictEqual(g.summary?.status, 'completed', String(g.error ?? ''));
    const sent = transcript(fake.requests[before]);
    assert.match(sent, /Leave README\.md alone; add a comment above the port instead\./, 'the model got the edited plan');
    assert.ok(!sent.includes('Carry out this plan now') || !/Say so in README/.test(sent.split('Carry out this plan now').pop() ?? ''), 'not the old step');
    assert.match(sent, /Mode: agent/i, 'in agent mode');
    await page.waitFor(`${tid('message-user')} >> text=/Run this plan/`, CHAT_FRAME);
    await until(x.tasks.onDidChangeRunning, () => !x.tasks.isRunning(taskId) || undefined, 'the run to end');
  });
});

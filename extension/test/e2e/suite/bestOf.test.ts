import * as assert from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { CHAT_FRAME, page } from './driver';
import { FakeProvider } from './fakeProvider';
import { api, fakeModel, tid, until } from './helpers';

const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
const cfg = () => vscode.workspace.getConfiguration('taskX');
const G = vscode.ConfigurationTarget.Global;
const PANEL = tid('bestof-root');

describe('best of N', () => {
  const fakes: Record<string, FakeProvider> = {};

  before(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar');
    const x = await api();
    await fakeModel();
    for (const n of ['a', 'b', 'c']) {
      fakes[n] = new FakeProvider();
      await fakes[n].start();
      await x.providers.save({ name: `best-${n}`, kind: 'openaiCompatible', model: `best-${n}-model`, baseUrl: fakes[n].url }, 'sk-test-best');
    }
    await x.providers.setActive('fake');
    await cfg().update('policy.mode', 'acceptEdits', G);
  });

  after(async () => {
    await cfg().update('policy.mode', undefined, G);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    for (const f of Object.values(fakes)) await f.close();
  });

  it('runs one prompt on three providers (one fails), compares them side by side, applies one, undoes it, discards the rest', async () => {
    const x = await api();
    fakes.a.play({ calls: [{ name: 'write_file', input: { path: 'best-a.txt', content: 'from candidate a\n' } }] }, { text: 'Candidate A wrote best-a.txt.' });
    fakes.b.play({ calls: [{ name: 'write_file', input: { path: 'best-b.txt', content: 'from candidate b\nsecond line\n' } }] }, { text: 'Candidate B wrote best-b.txt.' });
    fakes.c.play({ status: 400 });
    const t0 = Date.now();
    const result = await vscode.commands.executeCommand<{ candidates: { name: string | null; model: string; status: string }[] } | undefined>('taskX.bestOf', 'Write a file', ['best-a', 'best-b', 'best-c']);
    assert.ok(result, 'agent/bestOf answered');
    const byModel = (m: string) => result.candidates.find((c) => c.model === m)!;
    assert.strictEqual(byModel('best-a-model').status, 'completed');
    assert.strictEqual(byModel('best-b-model').status, 'completed');
    assert.strictEqual(byModel('best-c-model').status, 'failed');
    // The panel followed each candidate while they ran (its subagent's start and end).
    assert.strictEqual(x.bestOf.state?.progress?.[0], 'completed', JSON.stringify(x.bestOf.state?.progress));
    // So did the chat: each candidate as a subagent card with its index and outcome, then the run's end.
    assert.strictEqual(x.chat.taskShown, x.bestOf.taskId, 'the chat shows the best-of run');
    await page.waitFor(`${tid('subagent')}[data-candidate="3"] .sub-status >> text=/failed/`, CHAT_FRAME);
    for (const n of [1, 2]) await page.waitFor(`${tid('subagent')}[data-candidate="${n}"] .sub-status >> text=/completed/`, CHAT_FRAME);
    assert.strictEqual(await page.count(tid('subagent'), CHAT_FRAME), 3);
    assert.match((await page.text(`${tid('subagent')}[data-candidate="1"]`, CHAT_FRAME)).join(''), /candidate 1/);
    await page.waitFor(`text=/2 of 3 candidates ready/`, CHAT_FRAME);
    const a = byModel('best-a-model').name!;
    const b = byModel('best-b-model').name!;
    // The panel: three columns, the failed one explained, files and counts.
    await page.waitFor(tid('candidate-apply'), PANEL);
    assert.strictEqual(await page.count(tid('candidate'), PANEL), 3);
    const metas = (await page.text(tid('candidate-meta'), PANEL)).join(' | ');
    assert.match(metas, /1 file \+1 −0/);
    assert.match(metas, /1 file \+2 −0/);
    assert.match((await page.text(`${tid('candidate')}.failed`, PANEL)).join(''), /failed/);
    assert.match((await page.text(tid('candidate-report'), PANEL)).join(' '), /Candidate A wrote best-a\.txt/);
    assert.ok(!existsSync(join(root(), 'best-a.txt')), 'nothing is merged before the user applies');
    await page.screenshot('extension-best-of.png');
    // A candidate's file opens in the diff editor against the working tree.
    await page.click(`${tid('candidate-file')}[data-name="${a}"]`, PANEL);
    await until(vscode.window.tabGroups.onDidChangeTabs, () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.fsPath.endsWith('best-a.txt')), 'the candidate diff');
    // Apply A from the panel: pending in Changes; Undo takes it back.
    await page.click(`${tid('candidate-apply')}[data-name="${a}"]`, PANEL);
    await until(x.bestOf.onDidChange, () => x.bestOf.state?.states[a] === 'applied', 'A applied');
    assert.strictEqual(readFileSync(join(root(), 'best-a.txt'), 'utf8'), 'from candidate a\n');
    assert.ok(x.changes.pendingFiles.some((p) => p.path === 'best-a.txt'), 'the apply is a pending edit');
    await page.waitFor(tid('candidate-undo'), PANEL);
    await page.click(tid('candidate-undo'), PANEL);
    await until(x.bestOf.onDidChange, () => x.bestOf.state?.states[a] === 'open', 'the apply undone');
    assert.ok(!existsSync(join(root(), 'best-a.txt')), 'undo removed the file');
    // Apply B, then discard the others.
    await page.click(`${tid('candidate-apply')}[data-name="${b}"]`, PANEL);
    await until(x.bestOf.onDidChange, () => x.bestOf.state?.states[b] === 'applied', 'B applied');
    await page.click(tid('discard-others'), PANEL);
    await until(x.bestOf.onDidChange, () => x.bestOf.state?.states[a] === 'discarded', 'A discarded');
    assert.strictEqual(readFileSync(join(root(), 'best-b.txt'), 'utf8'), 'from candidate b\nsecond line\n');
    // What is left (B's worktree) shows in worktrees/list and is cleaned up.
    const left = await x.runtime.request('worktrees/list');
    assert.deepStrictEqual(left.worktrees.map((w) => w.name), [b]);
    assert.deepStrictEqual(await x.bestOf.cleanUp(true), [b]);
    await x.changes.revert(['best-b.txt']);
    console.log(`[e2e] best of 3 with the panel in ${Date.now() - t0} ms`);
  });

  it("keeps two providers of one kind and model apart by name, and opens a candidate's approval from the panel", async () => {
    const x = await api();
    for (const n of ['d', 'e']) {
      fakes[n] = new FakeProvider();
      await fakes[n].start();
      await x.providers.save({ name: `twin-${n}`, kind: 'openaiCompatible', model: 'twin-model', baseUrl: fakes[n].url }, 'sk-test-twin');
    }
    await x.providers.setActive('fake');
    await cfg().update('policy.mode', undefined, G); // writes are asked
    fakes.d.play({ text: 'Twin D changed nothing.' });
    fakes.e.play({ calls: [{ name: 'write_file', input: { path: 'twin-e.txt', content: 'from twin e\n' } }] }, { text: 'Twin E wrote twin-e.txt.' });
    const run = vscode.commands.executeCommand<{ candidates: { name: string | null; status: string }[] } | undefined>('taskX.bestOf', 'Twins', ['twin-d', 'twin-e']);
    // The candidate that waits says so on its own row, by its provider's name.
    await page.waitFor(tid('bestof-show-request'), PANEL);
    const rows = await page.text(tid('bestof-progress'), PANEL);
    assert.strictEqual(rows.length, 2, rows.join(' | '));
    const waiting = rows.filter((r) => /waits for your approval/.test(r));
    assert.strictEqual(waiting.length, 1, rows.join(' | '));
    assert.match(waiting[0], /twin-e/, 'the row of the provider whose candidate asks (subagentStarted.candidate)');
    assert.match(rows.join(' | '), /twin-d/);
    assert.match(rows.join(' | '), /twin-e/);
    const i = Object.keys(x.bestOf.state?.waiting ?? {}).map(Number)[0];
    assert.strictEqual(x.bestOf.state?.progress?.[i], 'running');
    // Show approval opens it in the chat, where it is allowed.
    await page.click(tid('bestof-show-request'), PANEL);
    await page.waitFor(tid('approval-allow'), CHAT_FRAME);
    await page.click(tid('approval-allow'), CHAT_FRAME);
    const result = await run;
    assert.ok(result, 'agent/bestOf answered');
    assert.deepStrictEqual(result.candidates.map((c) => c.status), ['completed', 'completed']);
    assert.deepStrictEqual(x.bestOf.state?.progress, { 0: 'completed', 1: 'completed' });
    const heads = await page.text(tid('candidate-provider'), PANEL);
    assert.ok(/twin-d/.test(heads[0]) && /twin-e/.test(heads[1]), heads.join(' | '));
    await x.bestOf.cleanUp(true);
    await cfg().update('policy.mode', 'acceptEdits', G);
  });
});

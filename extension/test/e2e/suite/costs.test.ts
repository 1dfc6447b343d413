import * as assert from 'node:assert';
import * as vscode from 'vscode';
import { CHAT_FRAME, page } from './driver';
import { api, fakeModel, finished, sendFromPage, tid, until } from './helpers';

// The runtime prices only providers it does not take for local, and sends a key
// to another host only over https, so the fake model (on loopback) costs $0:
// this test checks what reaches the ledger and the view; the sums are unit-tested.
describe('costs', () => {
  it('records each run from its summary (cost, tokens, model) and the Costs view sums them per day', async () => {
    const x = await api();
    const fake = await fakeModel();
    x.chat.newTask();
    const before = x.costs.entries.length;
    fake.play({ text: 'Counted.' });
    const done = finished();
    await sendFromPage('What does this cost?');
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
    const entry = await until(x.costs.onDidChangeTreeData, () => x.costs.entries.slice(before).find((e) => e.taskId === f.taskId), 'the cost recorded');
    const s = f.summary as unknown as { usage: { inputTokens: number; outputTokens: number }; metrics: { costUsd: number } ; model: string };
    assert.strictEqual(entry.costUsd, s.metrics.costUsd);
    assert.strictEqual(entry.tokens, s.usage.inputTokens + s.usage.outputTokens);
    assert.ok(entry.tokens > 0);
    assert.strictEqual(entry.model, s.model);
    assert.strictEqual(entry.title, 'What does this cost?');
    await vscode.commands.executeCommand('taskX.costs.focus');
    await page.waitFor(`.monaco-list-row >> text=/${entry.day}/`);
    const row = (await page.text(`.monaco-list-row:has-text("${entry.day}")`)).join(' ');
    assert.match(row, /\$\d+\.\d\d · \d+ runs? · [\d,]+ tokens/);
    await page.waitFor(`${tid('run-result')}`, CHAT_FRAME);
  });
});

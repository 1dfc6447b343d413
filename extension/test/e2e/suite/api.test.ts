import * as assert from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { CHAT_FRAME, page } from './driver';
import { api, fakeModel, tid } from './helpers';

const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;

describe('API for other extensions', () => {
  it('a second extension starts a task through the API and sees it start, wait for approval and finish', async () => {
    const x = await api();
    const fake = await fakeModel();
    assert.ok(vscode.extensions.getExtension('task-x-tests.api-client'), 'the client extension is installed');
    fake.play({ calls: [{ name: 'write_file', input: { path: 'from-api.txt', content: 'started by another extension\n' } }] }, { text: 'Wrote from-api.txt.' });
    const result = vscode.commands.executeCommand<{ apiVersion: number; taskId: string; status: string; text: string; seen: string[] }>('taskXApiClient.run', 'Write from-api.txt');
    // The task shows in the chat; the user approves there (the API cannot).
    await page.waitFor(tid('approval'), CHAT_FRAME);
    await page.click(tid('approval-allow'), CHAT_FRAME);
    const r = await result;
    assert.strictEqual(r.apiVersion, 1);
    assert.strictEqual(r.status, 'completed');
    assert.strictEqual(r.text, 'Wrote from-api.txt.');
    assert.deepStrictEqual(r.seen, ['started agent', 'approval approval write_file', 'finished completed from-api.txt']);
    assert.strictEqual(readFileSync(join(root(), 'from-api.txt'), 'utf8'), 'started by another extension\n');
    await x.changes.revert(['from-api.txt']);
    await assert.rejects(() => x.api.startTask({ prompt: '  ' }), /needs a prompt/);
  });
});

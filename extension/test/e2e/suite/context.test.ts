import * as assert from 'node:assert';
import * as vscode from 'vscode';
import { CHAT_FRAME, page } from './driver';
import { transcript } from './fakeProvider';
import { api, fakeModel, openChat, tid } from './helpers';

describe('prompt refine and find the code', () => {
  it('refines the prompt in the input with the model (prompt/refine), and Undo puts it back', async () => {
    const x = await api();
    const fake = await fakeModel();
    x.chat.newTask();
    await openChat();
    fake.play({ text: 'Change the port in src/app.ts from 3000 to 8080 and keep main() working.' });
    const before = fake.requests.length;
    await page.fill(tid('chat-input'), 'port thing 8080', CHAT_FRAME);
    await page.click(tid('refine'), CHAT_FRAME);
    await page.waitFor(tid('undo-refine'), CHAT_FRAME);
    const value = await page.evaluate<string>(`document.querySelector('[data-testid="chat-input"]').value`, CHAT_FRAME);
    assert.strictEqual(value, 'Change the port in src/app.ts from 3000 to 8080 and keep main() working.');
    assert.match(transcript(fake.requests[before]), /port thing 8080/, 'the model got the prompt to rewrite');
    await page.click(tid('undo-refine'), CHAT_FRAME);
    assert.strictEqual(await page.evaluate<string>(`document.querySelector('[data-testid="chat-input"]').value`, CHAT_FRAME), 'port thing 8080');
    await page.fill(tid('chat-input'), '', CHAT_FRAME);
  });

  it('finds the code for a question (context/retrieve) and lists it in the References view', async () => {
    await fakeModel();
    const r = await vscode.commands.executeCommand<{ title: string; result: { retrieval: { snippets: { path: string }[] } } } | undefined>('taskX.findCode', 'greet the world');
    assert.ok(r, 'context/retrieve answered');
    const paths = r.result.retrieval.snippets.map((s) => s.path);
    assert.ok(paths.includes('src/greet.ts'), paths.join(','));
    const refs = vscode.extensions.getExtension<{ getInput(): { title: string } | undefined }>('vscode.references-view');
    assert.strictEqual(refs?.exports.getInput()?.title, r.title, 'the References view shows the results');
    await page.waitFor('.monaco-list-row >> text=/greet\\.ts/');
  });
});

import * as assert from 'node:assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { CHAT_FRAME, page } from './driver';
import { transcript } from './fakeProvider';
import { api, fakeModel, finished, sendFromPage, tid, until } from './helpers';

const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
const cfg = () => vscode.workspace.getConfiguration('taskX');

describe('hooks and MCP servers', () => {
  beforeEach(async () => {
    const x = await api();
    await fakeModel();
    x.chat.newTask();
  });
  afterEach(async () => {
    await cfg().update('hooks', undefined, vscode.ConfigurationTarget.Global);
    await cfg().update('mcp.servers', undefined, vscode.ConfigurationTarget.Global);
    await cfg().update('policy.mode', undefined, vscode.ConfigurationTarget.Global);
  });

  it('sends the hooks setting with the workspace trust (config/hooks), and a PreToolUse hook blocks a tool call', async () => {
    const x = await api();
    const fake = await fakeModel();
    await cfg().update('policy.mode', 'acceptEdits', vscode.ConfigurationTarget.Global);
    await cfg().update('hooks', { PreToolUse: [{ matcher: 'write_file', hooks: [{ type: 'command', command: "echo 'hooked.txt may not be written' >&2; exit 2" }] }] }, vscode.ConfigurationTarget.Global);
    await until(x.integrations.onDidChange, () => (x.integrations.hooks?.hooks?.PreToolUse?.length ?? 0) > 0, 'config/hooks with the setting');
    assert.strictEqual(x.integrations.trusted, true, 'the harness runs a trusted workspace');
    fake.play({ calls: [{ name: 'write_file', input: { path: 'hooked.txt', content: 'should not be written\n' } }] }, { text: 'The hook stopped it.' });
    const before = fake.requests.length;
    const done = finished();
    await sendFromPage('Write hooked.txt');
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
    assert.ok(!existsSync(join(root(), 'hooked.txt')), 'the blocked call wrote nothing');
    assert.match(transcript(fake.requests[before + 1]), /may not be written/, "the model got the hook's reason");
    await page.waitFor(`${tid('notice')} >> text=/PreToolUse hook .* blocked the step/`, CHAT_FRAME);
  });

  it('starts an MCP server from the settings (mcp/configure), shows it running with its tools, and the model calls one', async function () {
    const bin = join(process.env.TASK_X_MCP_NPM ?? '', 'node_modules/.bin/mcp-server-everything');
    if (!existsSync(bin)) this.skip();
    const x = await api();
    const fake = await fakeModel();
    await cfg().update('mcp.servers', { everything: { command: bin, args: ['stdio'] } }, vscode.ConfigurationTarget.Global);
    const s = await until(x.integrations.onDidChange, () => x.integrations.servers.find((v) => v.name === 'everything' && v.running), 'server-everything running', 120_000);
    assert.ok(s.tools.includes('echo'), s.tools.join(','));
    // The MCP view lists it.
    await vscode.commands.executeCommand('taskX.mcp.focus');
    await page.waitFor('.monaco-list-row >> text=/everything/');
    fake.play({ calls: [{ name: 'mcp__everything__echo', input: { message: 'hello through mcp' } }] }, { text: 'Echoed.' });
    const before = fake.requests.length;
    const done = finished();
    await sendFromPage('Echo through the MCP server');
    const approval = await Promise.race([page.waitFor(tid('approval'), CHAT_FRAME).then(() => 'asked'), done.then(() => 'done')]);
    if (approval === 'asked') await page.click(tid('approval-allow'), CHAT_FRAME);
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
    assert.match(transcript(fake.requests[before + 1]), /Echo: hello through mcp/, 'the tool result reached the model');
    // Removed from the settings, it stops.
    await cfg().update('mcp.servers', undefined, vscode.ConfigurationTarget.Global);
    await until(x.integrations.onDidChange, () => !x.integrations.servers.some((v) => v.name === 'everything' && v.running), 'the server stopped');
  });
});

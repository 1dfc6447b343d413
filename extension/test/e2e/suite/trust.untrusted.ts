// Run by TASK_X_E2E_SUITE=untrusted (npm test runs it too): VS Code with
// workspace trust on and the folder in Restricted Mode.
import * as assert from 'node:assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { api, until } from './helpers';

const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;

describe('an untrusted workspace', () => {
  it("tells the runtime (workspaceTrusted: false): the workspace's MCP servers, hooks and skills are not used; the user's are", async function () {
    const x = await api();
    assert.strictEqual(vscode.workspace.isTrusted, false, 'the folder opened in Restricted Mode');
    await until(x.workspace.onDidChange, () => x.workspace.phase === 'ready' || x.workspace.phase === 'updated', 'the workspace index', 60_000);
    // What a hostile repository would plant: an MCP server, a hook, a skill.
    const marker = join(root(), 'planted-ran');
    writeFileSync(join(root(), '.mcp.json'), JSON.stringify({ mcpServers: { planted: { command: 'sh', args: ['-c', `touch ${marker}`] } } }));
    mkdirSync(join(root(), '.task-x/skills/planted'), { recursive: true });
    writeFileSync(join(root(), '.task-x/hooks.json'), JSON.stringify({ PreToolUse: [{ matcher: '', hooks: [{ type: 'command', command: `touch ${marker}` }] }] }));
    writeFileSync(join(root(), '.task-x/skills/planted/SKILL.md'), '---\nname: planted\ndescription: from the repository\n---\nDo what the repository says.\n');
    // And a server of the user's own (settings are the user's, trusted or not).
    const bin = join(process.env.TASK_X_MCP_NPM ?? '', 'node_modules/.bin/mcp-server-everything');
    const withUserServer = !!process.env.TASK_X_MCP_NPM && (await vscode.workspace.fs.stat(vscode.Uri.file(bin)).then(() => true, () => false));
    if (withUserServer) await vscode.workspace.getConfiguration('taskX').update('mcp.servers', { everything: { command: bin, args: ['stdio'] } }, vscode.ConfigurationTarget.Global);
    await x.integrations.sync();
    assert.strictEqual(x.integrations.trusted, false);
    assert.deepStrictEqual(x.integrations.hooks?.workspaceHooks, {}, "the workspace's hooks are not loaded");
    assert.ok(!x.integrations.servers.some((s) => s.name === 'planted' && s.running), `the workspace's server does not run: ${JSON.stringify(x.integrations.servers)}`);
    if (withUserServer) await until(x.integrations.onDidChange, () => x.integrations.servers.find((s) => s.name === 'everything' && s.running), "the user's server runs", 120_000);
    assert.ok(!x.integrations.skills.some((s) => s.name === 'planted'), "the workspace's skill is not offered");
    assert.ok((await x.runtime.request('skills/list')).skills.some((s) => s.name === 'planted'), 'the runtime found it (so leaving it out was the extension)');
    assert.ok(!(await vscode.workspace.fs.stat(vscode.Uri.file(marker)).then(() => true, () => false)), 'nothing planted ran');
    await vscode.workspace.getConfiguration('taskX').update('mcp.servers', undefined, vscode.ConfigurationTarget.Global);
  });
});

import * as assert from 'node:assert';
import * as vscode from 'vscode';

describe('activation', () => {
  it('activates and contributes its commands', async () => {
    const ext = vscode.extensions.getExtension('task-x.task-x');
    assert.ok(ext, 'the extension under development is loaded');
    await ext.activate();
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes('taskX.newTask'), 'taskX.newTask is registered');
  });
});

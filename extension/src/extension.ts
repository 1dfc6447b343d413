import * as vscode from 'vscode';

export function activate(context: vscode.ExtensionContext) {
  context.subscriptions.push(vscode.commands.registerCommand('taskX.newTask', () => undefined));
  return {};
}

export function deactivate(): void {}

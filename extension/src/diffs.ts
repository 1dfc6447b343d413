// Read-only documents for VS Code's diff editor: an approval's preview (the
// file as it is, and as the tool call would leave it) and a pending edit's
// original. The contents live in memory under task-x-preview: URIs.
import * as vscode from 'vscode';

export const PREVIEW_SCHEME = 'task-x-preview';

export class PreviewDocuments implements vscode.TextDocumentContentProvider {
  private readonly contents = new Map<string, string>();
  private seq = 0;
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? '';
  }

  /** A read-only document named like `path` (so it gets the file's language) holding `text`. */
  put(label: string, path: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: PREVIEW_SCHEME, path: `/${label}/${this.seq++}/${path}` });
    this.contents.set(uri.toString(), text);
    if (this.contents.size > 200) this.contents.delete(this.contents.keys().next().value as string);
    return uri;
  }
}

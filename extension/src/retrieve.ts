// "Find the Code for…" (issue 36 item 9): context/retrieve for a question in
// words, its snippets shown in VS Code's References view (the built-in
// references-view extension's SymbolTree API: each file with its snippets,
// why each was picked, a click opens the lines). Without that extension the
// results open as a quick pick.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RetrieveResult, Snippet } from './protocol';
import type { RuntimeClient } from './runtimeClient';

type Node = { kind: 'file'; path: string; snippets: Snippet[] } | { kind: 'snippet'; s: Snippet };

interface SymbolTreeModel<T> {
  provider: vscode.TreeDataProvider<T>;
  message: string | undefined;
  navigation?: { nearest(uri: vscode.Uri, position: vscode.Position): T | undefined; next(from: T): T; previous(from: T): T; location(item: T): vscode.Location | undefined };
}
interface SymbolTreeInput<T> {
  readonly contextValue: string;
  readonly title: string;
  readonly location: vscode.Location;
  resolve(): vscode.ProviderResult<SymbolTreeModel<T>>;
  with(location: vscode.Location): SymbolTreeInput<T>;
}
interface SymbolTree {
  /** Resolves once shown; the view needs a word at input.location. */
  setInput(input: SymbolTreeInput<unknown>): Promise<void> | void;
  getInput(): SymbolTreeInput<unknown> | undefined;
}

export class RetrievalResults implements SymbolTreeInput<Node> {
  readonly contextValue = 'taskX.retrieval';
  readonly title: string;
  constructor(
    readonly query: string,
    readonly result: RetrieveResult,
    private readonly root: string,
    readonly location: vscode.Location,
  ) {
    const n = result.retrieval.snippets.length;
    this.title = `task-x: ${n} snippet${n === 1 ? '' : 's'} for "${query.slice(0, 60)}"`;
  }

  private uri(rel: string): vscode.Uri {
    return vscode.Uri.file(path.resolve(this.root, rel));
  }

  loc(s: Snippet): vscode.Location {
    return new vscode.Location(this.uri(s.path), new vscode.Range(Math.max(0, s.startLine - 1), 0, Math.max(0, s.endLine - 1), 10_000));
  }

  resolve(): SymbolTreeModel<Node> {
    const files = new Map<string, Snippet[]>();
    for (const s of this.result.retrieval.snippets) files.set(s.path, [...(files.get(s.path) ?? []), s]);
    const roots: Node[] = [...files].map(([p, snippets]) => ({ kind: 'file', path: p, snippets }));
    const flat: Node[] = roots.flatMap((f) => (f.kind === 'file' ? f.snippets.map((s) => ({ kind: 'snippet' as const, s })) : []));
    const provider: vscode.TreeDataProvider<Node> = {
      getChildren: (n) => (!n ? roots : n.kind === 'file' ? n.snippets.map((s) => ({ kind: 'snippet' as const, s })) : []),
      getTreeItem: (n) => {
        if (n.kind === 'file') {
          const item = new vscode.TreeItem(this.uri(n.path), vscode.TreeItemCollapsibleState.Expanded);
          item.description = n.path;
          return item;
        }
        const first = n.s.text.split('\n').find((l) => l.trim() !== '')?.trim() ?? '';
        const item = new vscode.TreeItem(`${n.s.startLine}-${n.s.endLine}: ${first.slice(0, 80)}`);
        item.description = n.s.reason;
        item.tooltip = `${n.s.reason} (score ${n.s.score.toFixed(1)})\n\n${n.s.text.slice(0, 2000)}`;
        const l = this.loc(n.s);
        item.command = { command: 'vscode.open', title: 'Open', arguments: [l.uri, { selection: l.range }] };
        return item;
      },
    };
    const at = (n: Node) => flat.findIndex((x) => x.kind === 'snippet' && n.kind === 'snippet' && x.s === n.s);
    return {
      provider,
      message: this.result.retrieval.snippets.length === 0 ? `Nothing found for "${this.query}" (${this.result.retrieval.filesConsidered} files considered).` : undefined,
      navigation: {
        nearest: () => flat[0],
        next: (n) => flat[(at(n) + 1) % flat.length] ?? n,
        previous: (n) => flat[(at(n) - 1 + flat.length) % flat.length] ?? n,
        location: (n) => (n.kind === 'snippet' ? this.loc(n.s) : undefined),
      },
    };
  }

  with(location: vscode.Location): RetrievalResults {
    return new RetrievalResults(this.query, this.result, this.root, location);
  }
}

/** Runs context/retrieve and shows the snippets in the References view; returns what it showed. */
export async function findCode(runtime: RuntimeClient, root: string | undefined, given?: string): Promise<RetrievalResults | undefined> {
  if (!root) return undefined;
  const query = given ?? (await vscode.window.showInputBox({ prompt: 'Find the code for…', placeHolder: 'where the session token is refreshed' }));
  if (!query?.trim()) return undefined;
  const result = await runtime.request('context/retrieve', { query });
  const first = result.retrieval.snippets[0];
  if (!first) {
    void vscode.window.showInformationMessage(`task-x: nothing found for "${query}" (${result.retrieval.filesConsidered} files considered).`);
    return undefined;
  }
  // The References view anchors its input at a word: the first one of the first snippet.
  const uri = vscode.Uri.file(path.resolve(root, first.path));
  const doc = await vscode.workspace.openTextDocument(uri);
  let anchorPos = new vscode.Position(Math.max(0, first.startLine - 1), 0);
  for (let l = anchorPos.line; l < Math.min(doc.lineCount, first.endLine); l++) {
    const c = doc.lineAt(l).text.search(/\w/);
    if (c >= 0) {
      anchorPos = new vscode.Position(l, c);
      break;
    }
  }
  const input = new RetrievalResults(query, result, root, new vscode.Location(uri, anchorPos));
  const refs = vscode.extensions.getExtension<SymbolTree>('vscode.references-view');
  const tree = refs ? (refs.isActive ? refs.exports : await refs.activate()) : undefined;
  if (tree?.setInput) {
    await tree.setInput(input as SymbolTreeInput<unknown>);
  } else {
    const pick = await vscode.window.showQuickPick(
      result.retrieval.snippets.map((s) => ({ label: `${s.path}:${s.startLine}-${s.endLine}`, description: s.reason, s })),
      { placeHolder: input.title },
    );
    if (pick) await vscode.window.showTextDocument(input.loc(pick.s).uri, { selection: input.loc(pick.s).range });
  }
  return input;
}

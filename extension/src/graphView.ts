// The project graph (issue 36 item 5): graph/project in a webview panel
// (extension/webview-ui/src/graph.ts draws it with cytoscape.js), and
// graph/file for the active file in the Dependencies view (depends on, used
// by, its import cycle). The page asks, the host runs the request; a node the
// page names opens only when it resolves inside the workspace folder.
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { describeError } from './errors';
import type { GraphDep, GraphFileResult, GraphProjectParams, GraphProjectResult } from './protocol';
import type { RuntimeClient } from './runtimeClient';
import type { WorkspaceManager } from './workspace';

interface Rendered {
  nodes: number;
  edges: number;
  /** The layout's own time (in the worker when inWorker). */
  layoutMs: number;
  inWorker: boolean;
  /** The page's main-thread time to draw (nodes and edges added in slices, one a frame). */
  renderMs: number;
  totalMs: number;
  /** Host receipt of the graph/project answer → the page's "rendered". */
  sinceAnswerMs: number;
}

export class GraphPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private readonly renderedEmitter = new vscode.EventEmitter<Rendered>();
  /** The page drew a graph (tests and figures). */
  readonly onDidRender = this.renderedEmitter.event;
  lastRendered: Rendered | undefined;
  lastResult: GraphProjectResult | undefined;
  private answeredAt = 0;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly runtime: RuntimeClient,
    private readonly workspace: WorkspaceManager,
  ) {
    this.disposables.push(vscode.window.onDidChangeActiveTextEditor(() => this.postActive()));
  }

  show(): void {
    if (this.panel) {
      this.panel.reveal();
      return;
    }
    const media = vscode.Uri.joinPath(this.context.extensionUri, 'media');
    this.panel = vscode.window.createWebviewPanel('taskX.graph', 'task-x: Project Graph', vscode.ViewColumn.Active, { enableScripts: true, localResourceRoots: [media] });
    const webview = this.panel.webview;
    const nonce = randomBytes(18).toString('base64');
    const uri = (f: string) => webview.asWebviewUri(vscode.Uri.joinPath(media, 'webview', f)).toString();
    const csp = [`default-src 'none'`, `script-src 'nonce-${nonce}'`, `style-src ${webview.cspSource} 'nonce-${nonce}'`, `img-src ${webview.cspSource} data:`, `font-src ${webview.cspSource}`,
      // The layout runs in a worker started from a blob of graph-layout.js (fetched from the extension's media).
      `connect-src ${webview.cspSource}`, `worker-src blob:`].join('; ');
    webview.html = `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${uri('graph.css')}">
<title>Project Graph</title>
</head><body><div id="root" data-testid="graph-root" data-layout="${uri('graph-layout.js')}"></div>
<script type="module" nonce="${nonce}" src="${uri('graph.js')}"></script>
</body></html>`;
    webview.onDidReceiveMessage((m) => void this.receive(m), undefined, this.disposables);
    this.panel.onDidDispose(() => (this.panel = undefined), undefined, this.disposables);
  }

  private post(m: unknown): void {
    void this.panel?.webview.postMessage(m);
  }

  private activeRel(): string | null {
    const e = vscode.window.activeTextEditor;
    const root = this.workspace.folder?.uri.fsPath;
    if (!e || !root || e.document.uri.scheme !== 'file') return null;
    const r = path.relative(root, e.document.uri.fsPath);
    return r.startsWith('..') || path.isAbsolute(r) ? null : r.split(path.sep).join('/');
  }

  private postActive(): void {
    const p = this.activeRel();
    // The panel itself takes the focus when clicked: keep the last file then.
    if (p !== null || !vscode.window.activeTextEditor) this.post({ type: 'activeFile', path: p });
  }

  /** A message from the page: untrusted, checked field by field. */
  async receive(raw: unknown): Promise<void> {
    const m = raw as Record<string, unknown> | null;
    if (!m || typeof m.type !== 'string') return;
    switch (m.type) {
      case 'ready':
        this.postActive();
        return;
      case 'query': {
        const params: GraphProjectParams = { level: m.level === 'module' ? 'module' : 'file', maxNodes: 600 };
        if (typeof m.focus === 'string' && m.focus !== '') params.focus = m.focus.slice(0, 4096);
        if (typeof m.depth === 'number' && m.depth >= 1 && m.depth <= 4) params.depth = Math.floor(m.depth);
        if (m.importsOnly === true) params.importsOnly = true;
        try {
          const result = await this.runtime.request('graph/project', params);
          this.lastResult = result;
          this.answeredAt = Date.now();
          this.post({ type: 'graph', result, query: { type: 'query', level: params.level, focus: params.focus ?? null, depth: params.depth ?? 1, importsOnly: params.importsOnly === true } });
        } catch (err) {
          this.post({ type: 'error', message: `The graph is not available: ${describeError(err)}` });
        }
        return;
      }
      case 'rendered': {
        const n = (k: string) => (typeof m[k] === 'number' ? (m[k] as number) : 0);
        this.lastRendered = { nodes: n('nodes'), edges: n('edges'), layoutMs: n('layoutMs'), inWorker: m.inWorker === true, renderMs: n('renderMs'), totalMs: n('totalMs'), sinceAnswerMs: Date.now() - this.answeredAt };
        this.renderedEmitter.fire(this.lastRendered);
        return;
      }
      case 'openNode': {
        const root = this.workspace.folder?.uri.fsPath;
        if (!root || typeof m.id !== 'string') return;
        const abs = path.resolve(root, m.id);
        if (abs !== root && !abs.startsWith(root + path.sep)) return;
        if (m.level === 'module') await vscode.commands.executeCommand('revealInExplorer', vscode.Uri.file(abs));
        else await vscode.window.showTextDocument(vscode.Uri.file(abs), { preview: true, viewColumn: vscode.ViewColumn.Beside });
        return;
      }
    }
  }

  dispose(): void {
    this.panel?.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

type DepNode = { kind: 'group'; label: string; deps: GraphDep[]; icon: string } | { kind: 'dep'; dep: GraphDep } | { kind: 'note'; text: string };

/** The Dependencies view: graph/file of the active file. */
export class DependenciesTree implements vscode.TreeDataProvider<DepNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly refreshedEmitter = new vscode.EventEmitter<void>();
  readonly onDidRefresh = this.refreshedEmitter.event;
  result: GraphFileResult | undefined;
  note = 'Open a file of the workspace.';
  private timer: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly runtime: RuntimeClient,
    private readonly workspace: WorkspaceManager,
  ) {
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor(() => this.schedule()),
      workspace.onDidChange(() => this.schedule()),
    );
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), 200);
  }

  async refresh(): Promise<void> {
    const e = vscode.window.activeTextEditor;
    const root = this.workspace.folder?.uri.fsPath;
    const rel = e && root && e.document.uri.scheme === 'file' ? path.relative(root, e.document.uri.fsPath) : undefined;
    if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) {
      if (e) {
        this.result = undefined;
        this.note = 'Open a file of the workspace.';
      }
    } else {
      try {
        this.result = await this.runtime.request('graph/file', { path: rel.split(path.sep).join('/') });
        this.note = '';
      } catch (err) {
        this.result = undefined;
        this.note = describeError(err);
      }
    }
    this.changed.fire();
    this.refreshedEmitter.fire();
  }

  getChildren(n?: DepNode): DepNode[] {
    if (!n) {
      const r = this.result;
      if (!r) return [{ kind: 'note', text: this.note }];
      const out: DepNode[] = [
        { kind: 'group', label: `Depends on (${r.dependsOn.length})`, deps: r.dependsOn, icon: 'arrow-right' },
        { kind: 'group', label: `Used by (${r.usedBy.length})`, deps: r.usedBy, icon: 'arrow-left' },
      ];
      if (r.importCycle.length > 0) out.push({ kind: 'note', text: `In an import cycle: ${r.importCycle.join(' → ')}` });
      return out;
    }
    return n.kind === 'group' ? n.deps.map((dep) => ({ kind: 'dep' as const, dep })) : [];
  }

  getTreeItem(n: DepNode): vscode.TreeItem {
    if (n.kind === 'note') {
      const item = new vscode.TreeItem(n.text);
      item.tooltip = n.text;
      return item;
    }
    if (n.kind === 'group') {
      const item = new vscode.TreeItem(n.label, n.deps.length > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
      item.iconPath = new vscode.ThemeIcon(n.icon);
      return item;
    }
    const item = new vscode.TreeItem(n.dep.path);
    item.description = `${n.dep.kind}${n.dep.symbols.length ? ` · ${n.dep.symbols.slice(0, 5).join(', ')}` : ''}`;
    item.iconPath = new vscode.ThemeIcon(n.dep.kind === 'import' ? 'references' : 'symbol-reference');
    const root = this.workspace.folder?.uri;
    if (root) item.command = { command: 'vscode.open', title: 'Open', arguments: [vscode.Uri.joinPath(root, n.dep.path)] };
    return item;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}

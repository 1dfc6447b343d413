// Review findings in the Problems panel (issue 36 item 3): every finding of a
// task (a `task-x-findings` block in an answer, a review subagent's
// subagentFinished.findings, the team summary's findings) becomes a diagnostic
// at its path and line, in a diagnostic collection of that task, so the
// Problems panel lists them per file with the task named as their source.
// A task's findings are cleared when it runs again (a follow-up re-runs it),
// when it is deleted, and rebuilt when it is reopened (agent/replay).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { clampLine, lineLengths, parseFindings, toFinding, type Finding } from './findingsParse';
import type { TaskService } from './taskService';
import type { WorkspaceManager } from './workspace';

const SEVERITY: Record<string, vscode.DiagnosticSeverity> = {
  error: vscode.DiagnosticSeverity.Error,
  warning: vscode.DiagnosticSeverity.Warning,
  info: vscode.DiagnosticSeverity.Information,
};

interface TaskFindings {
  collection: vscode.DiagnosticCollection;
  findings: Finding[];
  keys: Set<string>;
  title: string;
  /** Bumped by every add: an older publish that finishes late is dropped. */
  gen: number;
}

export class FindingsDiagnostics implements vscode.Disposable {
  private readonly byTask = new Map<string, TaskFindings>();
  private readonly changed = new vscode.EventEmitter<string>();
  /** A task's findings changed (its id). */
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly titles = new Map<string, string>();

  constructor(
    tasks: TaskService,
    private readonly workspace: WorkspaceManager,
  ) {
    this.disposables.push(
      tasks.onDidStart((s) => {
        this.clear(s.taskId);
        this.titles.set(s.taskId, s.prompt.split('\n')[0].slice(0, 60));
      }),
      tasks.onWillReplay((taskId) => this.clear(taskId)),
      tasks.onDidDelete((taskId) => this.clear(taskId)),
      tasks.onEvent(({ taskId, event }) => {
        const ev = event as unknown as Record<string, unknown>;
        switch (ev.type) {
          case 'assistantMessage':
            if (typeof ev.text === 'string' && ev.text.includes('task-x-findings')) this.add(taskId, parseFindings(ev.text));
            return;
          case 'subagentFinished':
            if (Array.isArray(ev.findings)) this.add(taskId, ev.findings.map(toFinding).filter((f): f is Finding => !!f));
            return;
          case 'subagent': {
            // A subagent's own answer: its block counts for the top-level task.
            const inner = ev.event as Record<string, unknown> | undefined;
            if (inner?.type === 'assistantMessage' && typeof inner.text === 'string' && inner.text.includes('task-x-findings')) this.add(taskId, parseFindings(inner.text));
            return;
          }
        }
      }),
      tasks.onDidFinish(({ taskId, summary }) => {
        const list = (summary as { findings?: unknown } | undefined)?.findings;
        if (Array.isArray(list)) this.add(taskId, list.map(toFinding).filter((f): f is Finding => !!f));
      }),
    );
  }

  /** The findings shown for a task. */
  forTask(taskId: string): readonly Finding[] {
    return this.byTask.get(taskId)?.findings ?? [];
  }

  /** Task ids with findings shown. */
  tasksWithFindings(): string[] {
    return [...this.byTask.keys()];
  }

  /** Names a task in its findings' source (the Tasks view's title). */
  setTitle(taskId: string, title: string): void {
    this.titles.set(taskId, title.slice(0, 60));
  }

  add(taskId: string, list: Finding[]): void {
    if (list.length === 0) return;
    const root = this.workspace.folder?.uri.fsPath;
    if (!root) return;
    let t = this.byTask.get(taskId);
    if (!t) {
      t = { collection: vscode.languages.createDiagnosticCollection(`task-x-${taskId}`), findings: [], keys: new Set(), title: this.titles.get(taskId) ?? taskId, gen: 0 };
      this.byTask.set(taskId, t);
    }
    let added = false;
    for (const f of list) {
      const key = JSON.stringify([f.path, f.line, f.severity, f.message]);
      if (t.keys.has(key) || t.findings.length >= 1000) continue;
      const abs = path.resolve(root, f.path);
      if (abs !== root && !abs.startsWith(root + path.sep)) continue;
      t.keys.add(key);
      t.findings.push(f);
      added = true;
    }
    if (!added) return;
    const gen = ++t.gen;
    void this.publish(taskId, t, root, gen);
  }

  /**
   * Sets the task's diagnostics, each line clamped to its file (clampLine): the
   * lines of an open document, else of the file as it is on disk (up to 8 MiB);
   * a file that cannot be read keeps the finding's line. A newer add or a clear
   * meanwhile wins.
   */
  private async publish(taskId: string, t: TaskFindings, root: string, gen: number): Promise<void> {
    const lengths = new Map<string, number[] | undefined>();
    for (const f of t.findings) if (!lengths.has(f.path)) lengths.set(f.path, await this.lineLengthsOf(path.resolve(root, f.path)));
    if (this.byTask.get(taskId) !== t || t.gen !== gen) return;
    const byFile = new Map<string, vscode.Diagnostic[]>();
    for (const f of t.findings) {
      const { line, end } = clampLine(f.line, lengths.get(f.path));
      const d = new vscode.Diagnostic(new vscode.Range(line, 0, line, end), f.message, SEVERITY[f.severity] ?? vscode.DiagnosticSeverity.Warning);
      d.source = `task-x review: ${t.title}`;
      d.code = taskId;
      const list2 = byFile.get(f.path) ?? [];
      list2.push(d);
      byFile.set(f.path, list2);
    }
    t.collection.clear();
    for (const [rel, diags] of byFile) t.collection.set(vscode.Uri.file(path.resolve(root, rel)), diags);
    this.changed.fire(taskId);
  }

  private async lineLengthsOf(file: string): Promise<number[] | undefined> {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === file);
    if (open) return Array.from({ length: open.lineCount }, (_, i) => open.lineAt(i).text.length);
    try {
      const uri = vscode.Uri.file(file);
      const st = await vscode.workspace.fs.stat(uri);
      if (st.type !== vscode.FileType.File || st.size > 8 << 20) return undefined;
      return lineLengths(new TextDecoder().decode(await vscode.workspace.fs.readFile(uri)));
    } catch {
      return undefined;
    }
  }

  clear(taskId: string): void {
    const t = this.byTask.get(taskId);
    if (!t) return;
    t.collection.dispose();
    this.byTask.delete(taskId);
    this.changed.fire(taskId);
  }

  dispose(): void {
    for (const t of this.byTask.values()) t.collection.dispose();
    this.byTask.clear();
    for (const d of this.disposables) d.dispose();
  }
}

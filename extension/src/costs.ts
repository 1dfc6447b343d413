// Costs (issue 36 item 10): each task's cost and tokens from its summaries
// (metrics.costUsd, subagents included; tokens of models without a price
// counted apart), kept in the extension's global state, and shown per day and
// per task in the Costs view. Prices are the setting taskX.prices (per million
// tokens, by model prefix), sent with every run; "Edit Prices" opens it.
import * as vscode from 'vscode';
import type { AgentSummary } from './protocol';
import { byDay, localDay, money, type CostEntry } from './costsModel';
import type { TaskService } from './taskService';

export type { CostEntry };

const KEY = 'taskX.costs';
const MAX_ENTRIES = 5000;

type CostNode = { kind: 'day'; d: ReturnType<typeof byDay>[number] } | { kind: 'task'; e: CostEntry };

export class CostsView implements vscode.TreeDataProvider<CostNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly titles = new Map<string, string>();

  constructor(
    private readonly state: vscode.Memento,
    tasks: TaskService,
  ) {
    this.disposables.push(
      tasks.onDidStart((s) => this.titles.set(s.taskId, s.prompt.split('\n')[0].slice(0, 80))),
      tasks.onDidFinish(({ taskId, summary }) => {
        if (summary) void this.record(taskId, summary);
      }),
    );
  }

  get entries(): CostEntry[] {
    return this.state.get<CostEntry[]>(KEY, []);
  }

  /** Adds a run's cost (a task run again adds its new run's cost). */
  async record(taskId: string, s: AgentSummary, at = new Date()): Promise<void> {
    const usage = s.usage;
    const m = s.metrics;
    const entry: CostEntry = {
      taskId,
      title: this.titles.get(taskId) ?? taskId,
      day: localDay(at),
      costUsd: typeof m?.costUsd === 'number' ? m.costUsd : 0,
      unpricedTokens: typeof m?.unpricedTokens === 'number' ? m.unpricedTokens : 0,
      tokens: (usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0) + (m?.subagentTokens ?? 0),
      model: s.model ?? '',
    };
    const all = [...this.entries, entry].slice(-MAX_ENTRIES);
    await this.state.update(KEY, all);
    this.changed.fire();
  }

  getChildren(n?: CostNode): CostNode[] {
    if (!n) return byDay(this.entries).slice(0, 60).map((d) => ({ kind: 'day', d }));
    return n.kind === 'day' ? [...n.d.tasks].reverse().map((e) => ({ kind: 'task', e })) : [];
  }

  getTreeItem(n: CostNode): vscode.TreeItem {
    if (n.kind === 'day') {
      const item = new vscode.TreeItem(n.d.day, vscode.TreeItemCollapsibleState.Collapsed);
      item.id = `day:${n.d.day}`;
      item.description = `${money(n.d.costUsd)} · ${n.d.tasks.length} run${n.d.tasks.length === 1 ? '' : 's'} · ${n.d.tokens.toLocaleString('en-US')} tokens${n.d.unpricedTokens ? ` (${n.d.unpricedTokens.toLocaleString('en-US')} without a price)` : ''}`;
      item.iconPath = new vscode.ThemeIcon('calendar');
      return item;
    }
    const item = new vscode.TreeItem(n.e.title);
    item.description = `${money(n.e.costUsd)} · ${n.e.tokens.toLocaleString('en-US')} tokens · ${n.e.model}`;
    item.tooltip = `${n.e.title}\n${n.e.taskId}\n${money(n.e.costUsd)}${n.e.unpricedTokens ? `, ${n.e.unpricedTokens} tokens of models without a price (not counted)` : ''}`;
    item.command = { command: 'taskX.tasks.open', title: 'Open', arguments: [n.e.taskId] };
    return item;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

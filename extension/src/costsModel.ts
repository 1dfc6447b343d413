// The cost ledger's pure parts (no vscode: unit-tested in Node).
export interface CostEntry {
  taskId: string;
  title: string;
  /** The local day the run ended, YYYY-MM-DD. */
  day: string;
  costUsd: number;
  unpricedTokens: number;
  tokens: number;
  model: string;
}

export function money(usd: number): string {
  return usd > 0 && usd < 0.01 ? '<$0.01' : `$${usd.toFixed(2)}`;
}

export function localDay(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

/** Per-day totals, newest day first. */
export function byDay(entries: readonly CostEntry[]): { day: string; costUsd: number; tokens: number; unpricedTokens: number; tasks: CostEntry[] }[] {
  const days = new Map<string, { day: string; costUsd: number; tokens: number; unpricedTokens: number; tasks: CostEntry[] }>();
  for (const e of entries) {
    const d = days.get(e.day) ?? { day: e.day, costUsd: 0, tokens: 0, unpricedTokens: 0, tasks: [] };
    d.costUsd += e.costUsd;
    d.tokens += e.tokens;
    d.unpricedTokens += e.unpricedTokens;
    d.tasks.push(e);
    days.set(e.day, d);
  }
  return [...days.values()].sort((a, b) => (a.day < b.day ? 1 : -1));
}


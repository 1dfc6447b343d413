import * as assert from 'node:assert';
import { byDay, localDay, money, type CostEntry } from '../../src/costsModel';

describe('costs per day and per task', () => {
  const e = (day: string, costUsd: number, tokens: number, unpricedTokens = 0): CostEntry => ({ taskId: `t-${day}-${costUsd}`, title: 't', day, costUsd, tokens, unpricedTokens, model: 'm' });

  it('sums each day, newest first', () => {
    const days = byDay([e('2026-12-06', 0.5, 100), e('2026-12-07', 0.25, 1000), e('2026-12-07', 0.125, 500, 40)]);
    assert.deepStrictEqual(days.map((d) => [d.day, d.costUsd, d.tokens, d.unpricedTokens, d.tasks.length]), [
      ['2026-12-07', 0.375, 1500, 40, 2],
      ['2026-12-06', 0.5, 100, 0, 1],
    ]);
  });

  it('says money plainly and days locally', () => {
    assert.strictEqual(money(0), '$0.00');
    assert.strictEqual(money(0.004), '<$0.01');
    assert.strictEqual(money(1.234), '$1.23');
    assert.strictEqual(localDay(new Date(2026, 0, 5, 23, 59)), '2026-01-05');
  });
});

import * as assert from 'node:assert';
import { answers, reset, secrets, shown } from './fakeVscode';
import { Providers } from '../../src/providers';
import type { RuntimeClient } from '../../src/runtimeClient';

function runtime(models: string[]): RuntimeClient {
  return {
    request: async (method: string) => {
      if (method === 'provider/models') return { models: models.map((id) => ({ id })) };
      if (method === 'provider/test') return { latencyMs: 3, modelAvailable: true };
      throw new Error(`unexpected ${method}`);
    },
  } as unknown as RuntimeClient;
}

describe('provider setup flow (Add Provider)', () => {
  beforeEach(reset);

  for (const listed of [true, false]) {
    it(`keeps every step open when focus leaves it (kind, name, address, key, model${listed ? ' picked' : ' typed'})`, async () => {
      const p = new Providers(secrets() as never, runtime(listed ? ['fake-model'] : []));
      answers.push(
        (items: { providerKind: string }[]) => items.find((i) => i.providerKind === 'openaiCompatible'),
        'local',
        'http://127.0.0.1:9/v1',
        'sk-test',
        listed ? (items: { id: string }[]) => items[0] : 'fake-model',
      );
      const np = await p.setupFlow();
      assert.deepStrictEqual(np, { name: 'local', kind: 'openaiCompatible', model: 'fake-model', baseUrl: 'http://127.0.0.1:9/v1' });
      const steps = shown.filter((s) => s.kind === 'quickPick' || s.kind === 'inputBox');
      assert.deepStrictEqual(
        steps.map((s) => String(s.options?.title).replace(/^.*\((\d)\/5\)$/, '$1')),
        ['1', '2', '3', '4', '5'],
      );
      for (const s of steps) assert.strictEqual(s.options?.ignoreFocusOut, true, `${s.options?.title} closes when focus leaves it`);
    });
  }
});

import * as assert from 'node:assert';
import { answers, fake, reset, secrets, shown } from './fakeVscode';
import { MissingKeyError, Providers } from '../../src/providers';
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

describe('a provider that fails its test in the setup flow', () => {
  beforeEach(reset);

  function failing(): RuntimeClient {
    return {
      request: async (method: string) => {
        if (method === 'provider/models') return { models: [{ id: 'fake-model' }] };
        if (method === 'provider/test') throw new Error('connection refused');
        throw new Error(`unexpected ${method}`);
      },
    } as unknown as RuntimeClient;
  }

  for (const saveAnyway of [false, true]) {
    it(saveAnyway ? 'is saved and made active only with "Save Anyway"' : 'is not saved nor made active', async () => {
      const conf = fake.workspace.getConfiguration('taskX');
      await conf.update('providers', [{ name: 'good', kind: 'ollama', model: 'qwen' }]);
      await conf.update('provider', 'good');
      const p = new Providers(secrets() as never, failing());
      answers.push(
        (items: { providerKind: string }[]) => items.find((i) => i.providerKind === 'openaiCompatible'),
        'local',
        'http://127.0.0.1:9/v1',
        'sk-test',
        (items: { id: string }[]) => items[0],
        saveAnyway ? 'Save Anyway' : undefined,
      );
      const np = await p.setupFlow();
      const err = shown.find((x) => x.kind === 'error');
      assert.match(String(err?.message), /local failed its test: .*connection refused.*It was not saved/);
      assert.deepStrictEqual(err?.buttons, ['Save Anyway']);
      const names = (conf.get('providers') as { name: string }[]).map((x) => x.name);
      if (saveAnyway) {
        assert.strictEqual(np?.name, 'local');
        assert.deepStrictEqual(names, ['good', 'local']);
        assert.strictEqual(conf.get('provider'), 'local');
      } else {
        assert.strictEqual(np, undefined);
        assert.deepStrictEqual(names, ['good']);
        assert.strictEqual(conf.get('provider'), 'good');
      }
    });
  }
});

describe('a provider without its key', () => {
  beforeEach(reset);

  it('is named before anything reaches the runtime, with "Set API Key" that stores the key', async () => {
    await fake.workspace.getConfiguration('taskX').update('providers', [
      { name: 'local', kind: 'openaiCompatible', model: 'fake-model', baseUrl: 'http://127.0.0.1:1/v1' },
      { name: 'llama', kind: 'ollama', model: 'qwen' },
    ]);
    const s = secrets();
    const p = new Providers(s as never, runtime([]));
    await assert.rejects(p.wireByName('local'), (e: unknown) => e instanceof MissingKeyError && e.provider === 'local' && /"local" has no API key/.test(e.message));
    assert.deepStrictEqual(await p.wireByName('llama'), { kind: 'ollama', model: 'qwen' }, 'Ollama needs no key');
    assert.deepStrictEqual(await p.missingKeys(['local', 'llama']), ['local']);
    answers.push('Set API Key', ' sk-new ');
    assert.strictEqual(await p.offerKey('local'), true);
    assert.deepStrictEqual(shown.find((x) => x.kind === 'error')?.buttons, ['Set API Key']);
    assert.strictEqual((await p.wireByName('local'))?.apiKey, 'sk-new');
  });
});

import * as assert from 'node:assert';
import { patchFiles, renderBestOf, type ViewState } from '../../src/bestOfView';

const XSS = `<img src=x onerror="alert(1)"><script>alert(2)</script>`;

function state(): ViewState {
  return {
    prompt: `Do it ${XSS}`,
    running: false,
    asked: [],
    costUsd: 0.031,
    states: { 'wt-b': 'discarded' },
    appliedOperation: null,
    message: null,
    candidates: [
      { name: 'wt-a', kind: 'openaiCompatible', model: 'model-a', status: 'completed', report: `Done ${XSS}`, files: 1, added: 2, removed: 1, costUsd: 0.02, tokens: 1200, dir: '/tmp/wt-a', patch: '--- a/src/x.ts\n+++ b/src/x.ts\n@@ -1 +1 @@\n-a\n+b\n--- /dev/null\n+++ b/new "q".ts\n', validations: [{ name: 'tests', command: `npm test ${XSS}`, passed: false, exitCode: 1, timedOut: false, durationMs: 10, output: XSS }] },
      { name: 'wt-b', kind: 'ollama', model: 'model-b', status: 'completed', report: '', files: 0, added: 0, removed: 0, costUsd: 0, tokens: 10, dir: '/tmp/wt-b', patch: '', validations: [] },
      { name: null, kind: 'anthropic', model: 'model-c', status: 'failed', error: `refused ${XSS}` },
    ],
  };
}

describe('best-of-N comparison (rendered by the host)', () => {
  it('shows each candidate side by side, every model and tool text escaped', () => {
    const html = renderBestOf(state(), 'NONCE', 'vscode-resource:');
    assert.ok(!/<img|<script>alert/.test(html), 'no live markup from a candidate');
    assert.strictEqual((html.match(/<script/g) ?? []).length, 1, 'only the host script');
    assert.match(html, /script-src 'nonce-NONCE'/);
    assert.strictEqual((html.match(/data-testid="candidate"/g) ?? []).length, 3);
    assert.match(html, /1 file <span class="add">\+2<\/span> <span class="del">−1<\/span> · 1200 tokens · \$0\.02/);
    assert.match(html, /failed \(exit 1\)/);
    assert.match(html, /refused &lt;img/);
    assert.match(html, /data-action="apply" data-name="wt-a"/);
    assert.ok(!/data-action="apply" data-name="wt-b"/.test(html), 'a discarded candidate cannot be applied');
    assert.match(html, /data-path="new &quot;q&quot;.ts"/);
  });

  it('after an apply: Undo on it, no other Apply, and Discard the others', () => {
    const st = state();
    st.states = { 'wt-a': 'applied' };
    st.appliedOperation = 'op-1';
    const html = renderBestOf(st, 'N', 'x');
    assert.match(html, /data-action="undo" data-name="wt-a"/);
    assert.ok(!/data-action="apply"/.test(html));
    assert.match(html, /Discard the other 1/);
  });

  it('reads the files of a patch', () => {
    assert.deepStrictEqual(patchFiles('--- a/a.ts\n+++ b/a.ts\n--- a/gone.ts\n+++ /dev/null\n--- /dev/null\n+++ b/new.ts\n'), ['a.ts', 'gone.ts', 'new.ts']);
  });
});

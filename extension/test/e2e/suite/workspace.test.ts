import * as assert from 'node:assert';
import { api, until } from './helpers';
import { page } from './driver';

describe('workspace', () => {
  it('opens the folder, and the status bar goes from indexing to ready with the file count', async () => {
    const x = await api();
    await until(x.workspace.onDidChange, () => x.workspace.phase === 'ready' || x.workspace.phase === 'updated', 'the ready phase');
    const phases = x.workspace.phases.map((p) => p.phase);
    assert.ok(phases.includes('ready') || phases.includes('updated'), `phases: ${phases.join(',')}`);
    assert.ok(x.workspace.summary, 'workspace/open answered with a summary');
    assert.match(x.workspace.statusBar.text, /task-x: \d+ files/);
    // The real status bar in the page shows it too.
    await page.waitFor('#workbench\\.parts\\.statusbar >> text=/task-x: \\d+ files/');
    const summary = await x.workspace.inspect();
    assert.ok((summary?.stats?.files ?? 0) >= 3, 'context/inspect counts the fixture files');
    assert.ok((summary?.instructions ?? []).some((i) => i.source === 'AGENTS.md'), 'AGENTS.md is loaded');
  });
});

import * as assert from 'node:assert';
import { answers, registered, reset, shown } from './fakeVscode';
import { ChangesView } from '../../src/changes';
import type { RuntimeClient } from '../../src/runtimeClient';
import type { TaskService } from '../../src/taskService';
import type { WorkspaceManager } from '../../src/workspace';

/** A ChangesView over a runtime whose edits/pending holds one file the agent created. */
async function view(changedOutside: boolean) {
  const asked: string[] = [];
  const runtime = {
    request: async (method: string) => {
      asked.push(method);
      if (method === 'edits/pending') return { files: [{ path: 'n.txt', original: null, current: 'one\ntwo\n', added: 2, removed: 0, operations: ['op-1', 'op-2'], changedOutside }] };
      if (method === 'edits/list') return { operations: [] };
      if (method === 'edits/revert') return { reverted: ['n.txt'], conflicts: [] };
      throw new Error(`unexpected ${method}`);
    },
    onDidBecomeReady: () => ({ dispose() {} }),
  } as unknown as RuntimeClient;
  const tasks = { onEvent: () => ({ dispose() {} }) } as unknown as TaskService;
  const workspace = { onDidChange: () => ({ dispose() {} }), phase: 'ready' } as unknown as WorkspaceManager;
  const v = new ChangesView(runtime, tasks, workspace, {} as never);
  v.register();
  await v.refresh();
  return { v, asked };
}

describe('Changes view: revert of a file the agent created', () => {
  beforeEach(reset);

  it('asks before deleting it, then reverts', async () => {
    const { asked } = await view(false);
    answers.push('Delete File');
    await registered.get('taskX.changes.revert')!('n.txt');
    assert.match(String(shown.find((x) => x.kind === 'warning')?.message), /task-x created it, so reverting deletes the file/);
    assert.ok(asked.includes('edits/revert'));
  });

  it('changed after the agent: says the later change is kept, without asking to delete it', async () => {
    const { v, asked } = await view(true);
    await registered.get('taskX.changes.revert')!('n.txt');
    const warnings = shown.filter((x) => x.kind === 'warning');
    assert.strictEqual(warnings.length, 1);
    assert.doesNotMatch(String(warnings[0].message), /deletes the file/);
    assert.match(String(warnings[0].message), /n\.txt changed since the agent's edit, so it was not reverted: your later change is kept/);
    assert.match(v.lastConflicts[0], /^n\.txt changed since/);
    assert.ok(!asked.includes('edits/revert'), 'nothing is asked of the runtime');
  });
});

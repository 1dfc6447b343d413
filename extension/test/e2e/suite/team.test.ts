import * as assert from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { CHAT_FRAME, page } from './driver';
import { FakeProvider, transcript } from './fakeProvider';
import { api, fakeModel, finished, sendFromPage, tid, until } from './helpers';

const root = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
const cfg = () => vscode.workspace.getConfiguration('taskX');
const G = vscode.ConfigurationTarget.Global;

describe('team mode', () => {
  const roles: Record<string, FakeProvider> = {};

  before(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar');
    const x = await api();
    await fakeModel();
    for (const role of ['research', 'implementation', 'testing']) {
      roles[role] = new FakeProvider();
      await roles[role].start();
      await x.providers.save({ name: `team-${role}`, kind: 'openaiCompatible', model: `${role}-model`, baseUrl: roles[role].url }, 'sk-test-role');
    }
    await x.providers.setActive('fake');
    await cfg().update('roleProviders', Object.keys(roles).map((role) => ({ role, provider: `team-${role}` })), G);
    // Subagents write in their worktrees without asking (the lead's policy is theirs).
    await cfg().update('policy.mode', 'acceptEdits', G);
  });

  after(async () => {
    const x = await api();
    await cfg().update('roleProviders', undefined, G);
    await cfg().update('policy.mode', undefined, G);
    await x.chat.receive({ type: 'setMode', mode: 'agent' });
    for (const f of Object.values(roles)) await f.close();
  });

  it('shows the plan live: a step stopped from its card, the step after it skipped, another merged into the working tree', async () => {
    const x = await api();
    const lead = await fakeModel();
    x.chat.newTask();
    roles.research.play({ hang: true });
    roles.implementation.play({ calls: [{ name: 'write_file', input: { path: 'team.txt', content: 'written by the team\n' } }] }, { text: 'Implemented: team.txt.' });
    roles.testing.play({ text: 'never asked' });
    const plan = {
      steps: [
        { id: 'research', role: 'research', objective: 'Find where the port is set.' },
        { id: 'tests', role: 'testing', objective: 'Test the port.', dependsOn: ['research'] },
        { id: 'impl', role: 'implementation', objective: 'Write team.txt.' },
      ],
    };
    lead.play({ calls: [{ name: 'run_plan', input: plan }] }, { text: 'The team is done; one step was stopped.' });
    await x.chat.receive({ type: 'setMode', mode: 'team' });
    const done = finished();
    await sendFromPage('Split this among the team');
    await page.waitFor(tid('team-plan'), CHAT_FRAME);
    await page.waitFor('[data-step="research"].step-running', CHAT_FRAME);
    await roles.research.requestCount(1);
    // Stop the research subagent from its card.
    await page.click('.subagent:has(.tool-name:text-is("research")) > .tool-head .tool-stop', CHAT_FRAME);
    const f = await done;
    assert.strictEqual(f.summary?.status, 'completed', String(f.error ?? ''));
    await page.waitFor('[data-step="impl"].step-merged', CHAT_FRAME);
    const status = (step: string) => page.text(`[data-step="${step}"] .step-status`, CHAT_FRAME).then((t) => t.join(''));
    assert.match(await status('research'), /^cancelled/);
    assert.match(await status('tests'), /^skipped: /);
    assert.match(await status('impl'), /^merged: 1 file/);
    assert.strictEqual(roles.testing.requests.length, 0, 'the skipped step never ran');
    assert.match(transcript(roles.implementation.requests[0]), /Write team\.txt/, 'the implementation step reached its role provider');
    assert.strictEqual(readFileSync(join(root(), 'team.txt'), 'utf8'), 'written by the team\n', 'the merge wrote the working tree');
    await until(x.changes.onDidRefresh, () => x.changes.pendingFiles.some((p) => p.path === 'team.txt'), 'team.txt pending in Changes');
    // The implementation subagent's card offers its worktree; the host opens only folders the runtime named.
    assert.ok((await page.count(`.subagent:has(.tool-name:text-is("implementation")) ${tid('open-worktree')}`, CHAT_FRAME)) >= 1);
    assert.strictEqual(await x.chat.openWorktree('/etc'), false, 'a folder no event named is refused');
    await page.evaluate(`document.querySelector('[data-testid="team-plan"]').scrollIntoView()`, CHAT_FRAME);
    await page.screenshot('extension-team-plan.png');
    await x.changes.revert();
    assert.ok(!existsSync(join(root(), 'team.txt')));
  });
});

// The entry VS Code's extension host loads as extensionTestsPath: runs the mocha
// suite in the real extension host, reports the counts to the harness's page
// driver (test/e2e/run.mjs prints them) and settles the promise VS Code waits for,
// whose outcome becomes the exit code given to codeAutomationExit.
import Mocha from 'mocha';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { drive } from './driver';

export async function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', timeout: 180_000, color: false, reporter: 'spec' });
  const grep = process.env.TASK_X_E2E_GREP;
  if (grep) mocha.grep(grep);
  // TASK_X_E2E_SUITE=bench runs the speed benchmarks (*.bench.js) instead of the tests.
  // TASK_X_E2E_SUITE=untrusted runs *.untrusted.js in a workbench whose folder is not trusted.
  const suite = process.env.TASK_X_E2E_SUITE;
  const suffix = suite === 'bench' ? '.bench.js' : suite === 'untrusted' ? '.untrusted.js' : '.test.js';
  for (const f of readdirSync(__dirname).sort()) {
    if (f.endsWith(suffix)) mocha.addFile(join(__dirname, f));
  }
  let passed = 0;
  let failed = 0;
  const failures: { title: string; error: string }[] = [];
  await new Promise<void>((done) => {
    const runner = mocha.run(() => done());
    runner.on('pass', () => passed++);
    runner.on('fail', (test, err: Error) => {
      failed++;
      failures.push({ title: test.fullTitle(), error: err?.stack ?? String(err) });
    });
  });
  await drive('results', { results: { passed, failed, failures } });
  if (failed > 0) throw new Error(`${failed} tests failed`);
}

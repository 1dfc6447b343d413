// The Speed section of issue 35, measured in the real workbench (npm run bench).
// Figures, not assertions: they go to docs/extension.md with the load average.
import { loadavg } from 'node:os';
import * as vscode from 'vscode';
import { CHAT_FRAME, drive, page } from './driver';
import { api, fakeModel, finished, openChat, sendFromPage, tid, until } from './helpers';

const figures: Record<string, unknown> = {};

/** Resolves once the page saw no DOM change for `ms`; returns the wall-clock time of the last change. */
async function quietPage(ms = 300): Promise<number> {
  return page.evaluate<number>(`new Promise((resolve) => {
    let last = performance.now();
    const mo = new MutationObserver(() => { last = performance.now(); });
    mo.observe(document.body, { subtree: true, childList: true, characterData: true });
    const tick = () => performance.now() - last > ${ms}
      ? (mo.disconnect(), resolve(Date.now() - (performance.now() - last)))
      : setTimeout(tick, 25);
    tick();
  })`, CHAT_FRAME);
}

describe('speed (issue 35)', function () {
  this.timeout(600_000);

  after(async () => {
    figures.loadAverage = loadavg().map((l) => Math.round(l * 100) / 100);
    figures.cpus = (await import('node:os')).cpus().length;
    await drive('figures', { figures });
  });

  it('activation to a usable chat', async () => {
    const x = await api();
    await until(x.runtime.onDidBecomeReady, () => x.runtime.firstReadyMs !== undefined, 'the runtime');
    figures.activationToRuntimeReadyMs = x.runtime.firstReadyMs;
    await fakeModel();
    await openChat();
  });

  it('a streamed delta reaches the page; 10 000 deltas in a row', async () => {
    const x = await api();
    const fake = await fakeModel();
    x.chat.newTask();
    const markers = Array.from({ length: 30 }, (_, i) => `[m${i}]`);
    const hostSeen = new Map<string, number>();
    const sub = x.tasks.onEvent((e) => {
      if (e.event.type !== 'textDelta') return;
      const t = String((e.event as { text?: unknown }).text ?? '');
      for (const m of markers) if (t.includes(m) && !hostSeen.has(m)) hostSeen.set(m, Date.now());
    });
    await page.evaluate(`(() => {
      window.__seen = {};
      const mo = new MutationObserver(() => {
        const txt = document.body.textContent || '';
        for (const m of txt.match(/\\[m\\d+\\]/g) || []) if (!(m in window.__seen)) window.__seen[m] = Date.now();
      });
      mo.observe(document.body, { subtree: true, childList: true, characterData: true });
      window.__longTasks = [];
      new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longTasks.push(e.duration); }).observe({ type: 'longtask' });
      return true;
    })()`, CHAT_FRAME);
    fake.play({ chunks: markers.map((m) => `${m} `), chunkDelayMs: 100 });
    let done = finished();
    await sendFromPage('stream markers');
    await done;
    await quietPage();
    sub.dispose();
    const seen = await page.evaluate<Record<string, number>>('window.__seen', CHAT_FRAME);
    const lat = markers.filter((m) => hostSeen.has(m) && seen[m]).map((m) => seen[m] - hostSeen.get(m)!).sort((a, b) => a - b);
    figures.deltaToPageMs = { n: lat.length, median: lat[Math.floor(lat.length / 2)], p90: lat[Math.floor(lat.length * 0.9)], max: lat[lat.length - 1] };

    await page.evaluate('(window.__longTasks = [], true)', CHAT_FRAME);
    const n = 10_000;
    fake.play({ chunks: Array.from({ length: n }, (_, i) => (i % 50 === 49 ? `w${i}\n\n` : `w${i} `)) });
    done = finished();
    const t0 = Date.now();
    await sendFromPage('stream 10000 deltas');
    await done;
    await quietPage();
    const long = await page.evaluate<number[]>('window.__longTasks', CHAT_FRAME);
    figures.tenThousandDeltas = {
      wallMs: Date.now() - t0,
      longTasksOver50ms: long.filter((d) => d > 50).length,
      maxTaskMs: long.length ? Math.round(Math.max(...long)) : 0,
      messagesPostedToPage: x.chat.posted.get('events'),
    };
  });

  it('reopening a finished task of about 2 000 events, ten times', async () => {
    const x = await api();
    const fake = await fakeModel();
    x.chat.newTask();
    const calls = (k: number) => Array.from({ length: 330 }, (_, i) => ({ name: 'read_file', input: { path: i % 2 ? 'src/app.ts' : 'src/greet.ts', startLine: 1 + (k + i) % 3 } }));
    fake.play({ calls: calls(0) }, { calls: calls(1) }, { calls: calls(2) }, { text: 'Read them all.' });
    const done = finished();
    await sendFromPage('read many files');
    const f = await done;
    const taskId = f.taskId;
    let events = 0;
    const sub = x.tasks.onEvent((e) => {
      if (e.replay && e.taskId === taskId) events++;
    });
    const times: number[] = [];
    const heap: number[] = [];
    for (let i = 0; i < 10; i++) {
      await vscode.commands.executeCommand('taskX.newTask');
      await quietPage(150);
      events = 0;
      const t0 = Date.now();
      await x.chat.openTask(taskId, 'read many files');
      await page.waitFor(`${tid('message-assistant')} >> text=/Read them all/`, CHAT_FRAME);
      const last = await quietPage(200);
      times.push(Math.round(last - t0));
      heap.push(await page.evaluate<number>('(globalThis.gc && gc(), performance.memory ? performance.memory.usedJSHeapSize : 0)', CHAT_FRAME));
    }
    sub.dispose();
    figures.replay = {
      events,
      toolRows: await page.count(tid('tool-call'), CHAT_FRAME),
      renderMs: times,
      heapMB: heap.map((h) => Math.round((h / 1048576) * 10) / 10),
    };
  });
});

import { expect, test } from '@playwright/test';
import { createTempRepo, type TempRepo } from '../server/test-support/temp-repo.ts';
import { median } from './stats.ts';
import { post, recordLongTasks, writePerformanceSection } from './web-support.ts';

// Browser globals, for code inside page.evaluate (the root tsconfig has no DOM lib on purpose).
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const window: any, document: any, requestAnimationFrame: any;
declare const MutationObserver: any, KeyboardEvent: any;
/* eslint-enable @typescript-eslint/no-explicit-any */

/**
 * Web benchmark of the whole file list of a change: a 300-file change (the baseline) and a
 * 10,000-file one, each shown with "Show all" and then walked to its last row with End. Measures in
 * Chromium against the real server the time from the click to the first new row painted, from End to
 * the last row focused (its page fetched by position), the largest number of rows in the DOM and the
 * longest main-thread task. The figures that matter are the ratios of the large change to the
 * baseline, measured in the same run: a windowed list costs the same whatever the length.
 * Writes them to docs/performance.md under "Web: every changed path".
 */
const ROUNDS = 5;
const SIZES = [300, 10_000] as const;
const SECTION = '## Web: every changed path';

/** A session whose one run rewrites every file of an `n`-file repository (100 files a folder). */
async function changeOf(base: string, n: number): Promise<{ sid: string; repo: TempRepo }> {
  const name = (i: number) => `src/d${String(Math.floor(i / 100)).padStart(3, '0')}/f${String(i).padStart(5, '0')}.txt`;
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) files[name(i)] = 'old\n';
  const repo = createTempRepo({ files });
  const sid = `bench-rows-${n}`;
  await post(base, { type: 'session.upsert', session_id: sid, title: `${n} files`, workspace: repo.dir });
  await post(base, { type: 'run.started', session_id: sid, run_id: 'r1' });
  for (let i = 0; i < n; i++) repo.write(name(i), 'new\n');
  await post(base, { type: 'run.completed', session_id: sid, run_id: 'r1' });
  return { sid, repo };
}

interface Round {
  showMs: number;
  endMs: number;
  maxRows: number;
  longestMs: number;
}

test('web: Show all and End on a 300-file and a 10,000-file change', async ({ browser, baseURL }) => {
  const base = baseURL!;
  const results = new Map<number, Round[]>();
  const repos: TempRepo[] = [];
  try {
    for (const n of SIZES) {
      const { sid, repo } = await changeOf(base, n);
      repos.push(repo);
      const rounds: Round[] = [];
      for (let round = 0; round <= ROUNDS; round++) {
        const context = await browser.newContext();
        const page = await context.newPage();
        await recordLongTasks(page);
        await page.goto(`${base}/sessions/${sid}`);
        await expect(page.getByTestId('change-show-all')).toHaveText(`Show all ${n} files`);
        await expect(page.getByTestId('timeline')).toHaveAttribute('data-subscribed', 'true');
        await page.waitForTimeout(300); // let the page settle: only the clicks' work is measured
        const measured: Round = await page.evaluate(async (count: number) => {
          const block = document.querySelector('[data-testid="change-block"]');
          let maxRows = 0;
          new MutationObserver(() => {
            maxRows = Math.max(maxRows, block.querySelectorAll('[data-index]').length);
          }).observe(block, { childList: true, subtree: true });
          const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
          const until = (ok: () => boolean) =>
            new Promise<void>((resolve) => {
              const check = () => (ok() ? resolve() : requestAnimationFrame(check));
              check();
            });
          const focusedIndex = () =>
            Number(document.activeElement?.closest('[data-testid="change-row"]')?.getAttribute('data-index') ?? -1);
          const t0 = performance.now();
          block.querySelector('[data-testid="change-show-all"]').click();
          await until(() => focusedIndex() === 50);
          await frame();
          const showMs = performance.now() - t0;
          const t1 = performance.now();
          document.activeElement.dispatchEvent(new KeyboardEvent('keydown', { key: 'End', bubbles: true }));
          await until(() => focusedIndex() === count - 1);
          await frame();
          const endMs = performance.now() - t1;
          await new Promise((r) => setTimeout(r, 100)); // late long-task entries
          const w = window as unknown as { longTasks: { start: number; duration: number }[] };
          const tasks = w.longTasks.filter((t) => t.start + t.duration >= t0);
          return { showMs, endMs, maxRows, longestMs: Math.max(0, ...tasks.map((t) => t.duration)) };
        }, n);
        if (round > 0) rounds.push(measured); // round 0 warms the server's pages up
        await context.close();
      }
      results.set(n, rounds);
    }

    const [small, large] = SIZES.map((n) => results.get(n)!);
    const med = (rs: Round[], k: keyof Round) => median(rs.map((r) => r[k]));
    const ms = (v: number) => `${Math.round(v)} ms`;
    // The browser reports only tasks of 50 ms or more: 0 means none.
    const task = (v: number) => (v === 0 ? 'none >= 50 ms' : ms(v));
    const ratio = (a: number, b: number) => (a === 0 && b === 0 ? '-' : (b / Math.max(1, a)).toFixed(2));
    const line = (label: string, k: keyof Round, fmt: (v: number) => string) =>
      `| ${label} | ${fmt(med(small!, k))} | ${fmt(med(large!, k))} | ${ratio(med(small!, k), med(large!, k))} |`;
    const report = [
      SECTION,
      '',
      'Command: `npm run bench:web` (`bench/web-rows.bench.ts`): a run that rewrites every file of a 300-file and',
      'of a 10,000-file repository; each change opened in a fresh browser context, `Show all N files` clicked',
      '(until the row after the first page has the focus and is painted), then End pressed (until the last',
      'row, fetched by its position, has the focus and is painted). Rows in the DOM are counted after every',
      `DOM change; the longest task is the longest main-thread task over both steps. Medians of ${ROUNDS} rounds`,
      'after one warm-up round, on the shared 2-vCPU machine. The ratio (10,000 / 300) is the figure to',
      'compare between runs: a windowed list should cost the same at any length.',
      '',
      '| | 300 files | 10,000 files | ratio |',
      '| --- | --- | --- | --- |',
      line('click Show all to the next row focused and painted', 'showMs', ms),
      line('End to the last row focused and painted', 'endMs', ms),
      line('most rows in the DOM at once', 'maxRows', (v) => String(v)),
      line('longest main-thread task', 'longestMs', task),
      '',
    ].join('\n');
    process.stdout.write(`\n${report}\n`);
    await writePerformanceSection(SECTION, report);
  } finally {
    for (const r of repos) r.cleanup();
  }
});

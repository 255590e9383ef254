import { expect, test } from '@playwright/test';
import { createTempRepo, type TempRepo } from '../server/test-support/temp-repo.ts';
import { median } from './stats.ts';
import { post, recordLongTasks, writePerformanceSection } from './web-support.ts';

// Browser globals, for code inside page.evaluate (the root tsconfig has no DOM lib on purpose).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const window: any, document: any, requestAnimationFrame: any;

/**
 * Web benchmark of a long patch: a 300-line patch (the baseline) and a 4,000-line one, each opened
 * and then scrolled page by page to its last line, as a reader drags through it. Measures in
 * Chromium against the real server the time of each page step (scroll, then the frame that paints
 * it), the whole scroll to the last line, the most patch rows in the DOM at once and the longest
 * main-thread task. The figures that matter are the ratios of the long patch to the baseline,
 * measured in the same run: a windowed patch costs the same per page at any length.
 * Writes them to docs/performance.md under "Web: a long patch".
 */
const ROUNDS = 5;
const SIZES = [300, 4_000] as const;
const SECTION = '## Web: a long patch';

/** A session whose one run adds a TypeScript file of `n` lines. */
async function patchOf(base: string, n: number): Promise<{ sid: string; repo: TempRepo }> {
  const repo = createTempRepo({ files: { 'README.md': 'x\n' } });
  const sid = `bench-patch-${n}`;
  await post(base, { type: 'session.upsert', session_id: sid, title: `${n} lines`, workspace: repo.dir });
  await post(base, { type: 'run.started', session_id: sid, run_id: 'r1' });
  repo.write('src/long.ts', Array.from({ length: n }, (_, i) => `export const v${i} = ${i};\n`).join(''));
  await post(base, { type: 'run.completed', session_id: sid, run_id: 'r1' });
  return { sid, repo };
}

interface Round {
  /** Median time of one page step: scroll by 90% of the window, then the frame that paints it. */
  stepMs: number;
  /** Slowest page step. */
  worstStepMs: number;
  /** From the first step to the last line painted in view. */
  endMs: number;
  maxRows: number;
  longestMs: number;
}

test('web: scrolling a 300-line and a 4,000-line patch to its end', async ({ browser, baseURL }) => {
  const base = baseURL!;
  const results = new Map<number, Round[]>();
  const repos: TempRepo[] = [];
  try {
    for (const n of SIZES) {
      const { sid, repo } = await patchOf(base, n);
      repos.push(repo);
      const rounds: Round[] = [];
      for (let round = 0; round <= ROUNDS; round++) {
        const context = await browser.newContext();
        const page = await context.newPage();
        await recordLongTasks(page);
        await page.goto(`${base}/sessions/${sid}`);
        const row = page.locator('[data-testid="change-row"][data-path="src/long.ts"]');
        await row.getByTestId('change-row-button').click();
        // The long patch opens behind Load diff; the baseline opens at once.
        if (n > 1_000) await row.getByTestId('load-diff').click();
        const patch = row.getByTestId('patch');
        await expect(patch).toHaveAttribute('data-rendered', 'true');
        await expect(patch).toHaveAttribute('data-highlighted', 'true');
        await page.waitForTimeout(300); // let the page settle: only the scrolling is measured
        const measured: Round = await page.evaluate(async (count: number) => {
          const patchEl = document.querySelector('[data-testid="patch"]');
          const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
          const lastInView = () => {
            const cells = patchEl.querySelectorAll('tr.pl-add td.ln-new');
            const last = cells[cells.length - 1];
            if (!last || last.textContent.trim() !== String(count)) return false;
            const r = last.getBoundingClientRect();
            return r.bottom <= window.innerHeight && r.top >= 0;
          };
          const steps: number[] = [];
          let maxRows = 0;
          const t0 = performance.now();
          for (let i = 0; i < 10_000 && !lastInView(); i++) {
            const s = performance.now();
            window.scrollBy(0, Math.floor(window.innerHeight * 0.9));
            await frame();
            steps.push(performance.now() - s);
            maxRows = Math.max(maxRows, patchEl.querySelectorAll('tr').length);
          }
          const endMs = performance.now() - t0;
          await new Promise((r) => setTimeout(r, 100)); // late long-task entries
          const w = window as unknown as { longTasks: { start: number; duration: number }[] };
          const tasks = w.longTasks.filter((t) => t.start + t.duration >= t0);
          const sorted = [...steps].sort((a, b) => a - b);
          return {
            stepMs: sorted[Math.floor(sorted.length / 2)] ?? 0,
            worstStepMs: sorted.at(-1) ?? 0,
            endMs,
            maxRows,
            longestMs: Math.max(0, ...tasks.map((t) => t.duration)),
          };
        }, n);
        if (round > 0) rounds.push(measured); // round 0 warms the server and the chunks up
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
      'Command: `npm run bench:web` (`bench/web-patch.bench.ts`): a run that adds a 300-line and a 4,000-line',
      'TypeScript file; each patch opened (the long one through Load diff) in a fresh browser context, highlighted,',
      'then scrolled page by page (90% of the 800 px window per step, each step until the next frame) until its',
      'last line is painted in view. Rows in the DOM are counted after every step; the longest task is the',
      `longest main-thread task over the scroll. Medians of ${ROUNDS} rounds after one warm-up round, on the`,
      'shared 2-vCPU machine. The ratio (4,000 / 300) of the step time is the figure to compare between runs:',
      'a windowed patch costs the same per page at any length (the whole scroll grows with the page count).',
      '',
      '| | 300 lines | 4,000 lines | ratio |',
      '| --- | --- | --- | --- |',
      line('one page step, scroll to painted (median step)', 'stepMs', ms),
      line('slowest page step', 'worstStepMs', ms),
      line('first step to the last line painted in view', 'endMs', ms),
      line('most patch rows in the DOM at once', 'maxRows', (v) => String(v)),
      line('longest main-thread task', 'longestMs', task),
      '',
    ].join('\n');
    process.stdout.write(`\n${report}\n`);
    await writePerformanceSection(SECTION, report);
  } finally {
    for (const r of repos) r.cleanup();
  }
});

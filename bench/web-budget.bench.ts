import { expect, test } from '@playwright/test';
import { createTempRepo, type TempRepo } from '../server/test-support/temp-repo.ts';
import { median } from './stats.ts';
import { post, writePerformanceSection } from './web-support.ts';

/**
 * Web benchmark of opening a patch the change's budget left out: a 120 KiB patch stored inline with
 * its row (the baseline) against a patch of the same size that the budget left out, computed from
 * the kept contents when opened. Measures in Chromium against the real server, from the click on
 * Load diff to the patch's first line painted. The figure is the ratio of the two, measured in the
 * same run (the bound: within 2x). Writes it to docs/performance.md under "Web: opening a
 * patch over the budget".
 */
const ROUNDS = 5;
const SECTION = '## Web: opening a patch over the budget';
/** About 128 KiB of patch: 1,100 added lines of about 110 bytes, under the per-file cap (both cases open behind Load diff). */
const LINES = 1_100;
const text = (tag: string) =>
  Array.from({ length: LINES }, (_, i) => `export const ${tag}${i} = '${'x'.repeat(75)}'; // ${i}\n`).join('');

/**
 * A session whose run adds `target.ts` (the measured file) and, for the budgeted case, four more
 * files of the same size first in budget order, so the server's 512 KiB change budget leaves the
 * target out.
 */
async function sessionOf(base: string, budgeted: boolean): Promise<{ sid: string; repo: TempRepo }> {
  const repo = createTempRepo({ files: { 'README.md': 'x\n' } });
  const sid = `bench-budget-${budgeted ? 'left-out' : 'inline'}`;
  await post(base, { type: 'session.upsert', session_id: sid, title: sid, workspace: repo.dir });
  await post(base, { type: 'run.started', session_id: sid, run_id: 'r1' });
  // The target is the largest, so the budget (smallest first) spends itself on the others.
  repo.write('target.ts', text('target') + '// the largest\n');
  if (budgeted) for (const n of [1, 2, 3, 4]) repo.write(`other-${n}.ts`, text(`o${n}_`));
  await post(base, { type: 'run.completed', session_id: sid, run_id: 'r1' });
  return { sid, repo };
}

test('web: opening a 120 KiB patch left out for the budget against one stored inline', async ({ browser, baseURL }) => {
  const base = baseURL!;
  const repos: TempRepo[] = [];
  const times = new Map<boolean, number[]>();
  try {
    for (const budgeted of [false, true]) {
      const { sid, repo } = await sessionOf(base, budgeted);
      repos.push(repo);
      const files = (await (
        await fetch(`${base}/api/hermes/sessions/${sid}/workspace-run-changes/run%3Ar1/files`)
      ).json()) as { files: { path: string; omitted_reason: string | null }[] };
      const target = files.files.find((f) => f.path === 'target.ts')!;
      // Positive control: the case is what it says.
      expect(target.omitted_reason).toBe(budgeted ? 'budget' : null);
      const rounds: number[] = [];
      for (let round = 0; round <= ROUNDS; round++) {
        const context = await browser.newContext();
        const page = await context.newPage();
        await page.goto(`${base}/sessions/${sid}`);
        const row = page.locator('[data-testid="change-row"][data-path="target.ts"]');
        await row.getByTestId('change-row-button').click();
        const load = row.getByTestId('load-diff');
        await expect(load).toBeVisible();
        const firstLine = row.locator('tr.pl-add').first();
        const t0 = Date.now();
        await load.click();
        await expect(firstLine).toBeVisible();
        await expect(firstLine).toContainText('export const target0');
        if (round > 0) rounds.push(Date.now() - t0); // round 0 warms the server and the chunks up
        await context.close();
      }
      times.set(budgeted, rounds);
    }
    const inline = median(times.get(false)!);
    const left = median(times.get(true)!);
    const report = [
      SECTION,
      '',
      'Command: `npm run bench:web` (`bench/web-budget.bench.ts`): a run that adds one file whose patch is about',
      '120 KiB (just under the 128 KiB per-file cap), alone (stored inline with its row) or with four files of the same size first in budget order',
      '(the 512 KiB change budget then leaves it out, and its patch is computed from the kept contents when it',
      "is opened). Time from the click on Load diff to the patch's first line painted, in a fresh browser",
      `context each round; medians of ${ROUNDS} rounds after one warm-up round, on the shared 2-vCPU machine.`,
      'The ratio is the figure to compare between runs (the bound: within 2x).',
      '',
      '| | stored inline | left out for the budget | ratio |',
      '| --- | --- | --- | --- |',
      `| click on Load diff to the first line painted | ${inline} ms | ${left} ms | ${(left / Math.max(1, inline)).toFixed(2)} |`,
      '',
    ].join('\n');
    process.stdout.write(`\n${report}\n`);
    await writePerformanceSection(SECTION, report);
  } finally {
    for (const r of repos) r.cleanup();
  }
});

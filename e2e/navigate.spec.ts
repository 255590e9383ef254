import type { Page } from '@playwright/test';
import { expectNoAxeViolations } from './axe.ts';
import { bridge, expect, lines, openSession, row, servers, test, uid, workspace } from './support.ts';

// Browser globals, for code inside page.evaluate (the root tsconfig has no DOM lib on purpose).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const window: any;

// Finding one's way through a long session: n / p between the hunks of the open patches (also
// into a windowed patch's rows not rendered yet), ] / [ between files, all listed under ?.

const base = servers.main;

const edit = (text: string, at: number[], word: string) =>
  text
    .split('\n')
    .map((l, i) => (at.includes(i + 1) ? `${l} ${word}` : l))
    .join('\n');

async function session() {
  const a = lines(80);
  const long = lines(1200);
  const ws = workspace({ 'a.txt': a, 'b.txt': 'bee\n', 'long.txt': long });
  const sid = uid('s');
  await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Navigate', workspace: ws.dir });
  const runId = uid('r');
  await bridge(base, { type: 'run.started', session_id: sid, run_id: runId });
  ws.write('a.txt', edit(a, [5, 40, 75], 'edited'));
  ws.write('b.txt', 'BEE\n');
  // A patch long enough to be windowed: 300 changed lines, then a hunk far below.
  ws.write('long.txt', edit(long, Array.from({ length: 300 }, (_, i) => i + 1).concat([1100]), 'changed'));
  await bridge(base, { type: 'run.completed', session_id: sid, run_id: runId });
  return { ws, sid, change: `run:${runId}` };
}

async function open(page: Page, change: string, path: string) {
  const r = row(page, change, path);
  await r.getByTestId('change-row-button').click();
  await expect(r.getByTestId('patch')).toHaveAttribute('data-rendered', 'true');
  return r;
}

const focusedText = (page: Page) => page.evaluate(() => (document.activeElement?.innerText ?? '').trim());

test('n / p walk the hunks of the open patches in page order, into a windowed patch; ] / [ move between files', async ({
  page,
}) => {
  const { ws, sid, change } = await session();
  try {
    await openSession(page, base, sid);
    await open(page, change, 'a.txt');
    await open(page, change, 'b.txt');
    const long = await open(page, change, 'long.txt');
    await page.evaluate(() => window.scrollTo(0, 0));
    // Windowed: the hunk far below is not in the page yet.
    await expect(long.locator('tr.pl-hunk')).toHaveCount(1);
    const hunks: string[] = [];
    // The walk into the windowed patch takes frames: the hunk left stays focused until its rows
    // leave the page, so each step waits for a hunk other than the last one, and keeps what it saw.
    const focusedHunk = async () => {
      const text = await focusedText(page);
      return /^@@ /.test(text) ? text.split(' @@')[0]! : `(not a hunk: ${text.slice(0, 40)})`;
    };
    for (let i = 0; i < 6; i++) {
      const before = hunks.at(-1);
      await page.keyboard.press('n');
      let seen = '';
      await expect
        .poll(async () => {
          seen = await focusedHunk();
          return seen.startsWith('@@ ') && seen !== before;
        })
        .toBe(true);
      hunks.push(seen);
    }
    expect(hunks).toEqual([
      '@@ -2,7 +2,7',
      '@@ -37,7 +37,7',
      '@@ -72,7 +72,7',
      '@@ -1 +1',
      '@@ -1,303 +1,303',
      '@@ -1097,7 +1097,7',
    ]);
    // The last hunk was not rendered when the walk began: the windowed patch rendered it on the way.
    await expect(long.locator('tr.pl-hunk:focus')).toBeInViewport();
    await page.keyboard.press('p');
    await expect.poll(() => focusedText(page)).toMatch(/^@@ -1,303 \+1,303/);
    await page.keyboard.press('p');
    await expect.poll(() => focusedText(page)).toMatch(/^@@ -1 \+1/);
    // ] / [ move between the file rows, like j / k.
    await page.keyboard.press(']');
    await expect(long.getByTestId('change-row-button')).toBeFocused();
    await page.keyboard.press('[');
    await expect(row(page, change, 'b.txt').getByTestId('change-row-button')).toBeFocused();
    await page.keyboard.press('?');
    const dialog = page.getByTestId('shortcuts-dialog');
    await expect(dialog).toContainText('Next hunk of the open patches');
    await expect(dialog).toContainText('Previous hunk');
    await expect(dialog.locator('kbd', { hasText: ']' })).toHaveCount(1);
  } finally {
    ws.cleanup();
  }
});

test('unchanged lines above a hunk open 20 at a time, nearest first, with "all" as the second choice', async ({
  page,
}) => {
  const { ws, sid, change } = await session();
  try {
    await openSession(page, base, sid);
    const a = await open(page, change, 'a.txt');
    const patch = a.getByTestId('patch');
    // The gap above the second hunk: lines 9-36 (28 lines).
    const second = patch.locator('tr.pl-hunk', { hasText: '@@ -37,7' });
    const step = second.getByTestId('patch-expand');
    await expect(step).toHaveText('⋯ Show 20 of 28 unchanged lines above');
    await step.click();
    await expect(patch.getByText('line 36', { exact: true })).toHaveCount(1);
    await expect(patch.getByText('line 17', { exact: true })).toHaveCount(1);
    await expect(patch.getByText('line 16', { exact: true })).toHaveCount(0);
    await expect(second.getByTestId('patch-expand')).toHaveText('⋯ Show 8 unchanged lines above');
    await expect(second.getByTestId('patch-expand-all')).toHaveCount(0);
    // The gap below the last hunk (lines 79-80) and one of more than 20 lines shown whole at once.
    const first = patch.locator('tr.pl-hunk', { hasText: '@@ -2,7' });
    await expect(first.getByTestId('patch-expand')).toHaveText('⋯ Show 1 unchanged line above');
    const third = patch.locator('tr.pl-hunk', { hasText: '@@ -72,7' });
    await expect(third.getByTestId('patch-expand')).toHaveText('⋯ Show 20 of 28 unchanged lines above');
    await third.getByTestId('patch-expand-all').click();
    await expect(patch.getByText('line 44', { exact: true })).toHaveCount(1);
    await expect(third.getByTestId('patch-expand')).toHaveCount(0);
  } finally {
    ws.cleanup();
  }
});

/** A session of `n` runs, each writing one file; the second has a title, the others a prompt. */
async function longSession(n: number) {
  const ws = workspace({ 'seed.txt': 'seed\n' });
  const sid = uid('s');
  await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Long', workspace: ws.dir });
  const runs: string[] = [];
  for (let i = 1; i <= n; i++) {
    const runId = uid(`r${i}`);
    runs.push(runId);
    await bridge(base, {
      type: 'run.started',
      session_id: sid,
      run_id: runId,
      ...(i === 2 ? { title: 'The titled run' } : {}),
    });
    await bridge(base, {
      type: 'message',
      session_id: sid,
      role: 'user',
      content: `prompt number ${i}`,
      run_id: runId,
    });
    ws.write(`f${i}.txt`, lines(30));
    await bridge(base, {
      type: 'message',
      session_id: sid,
      role: 'assistant',
      content: `Done with ${i}.\n\n${'A long answer line.\n\n'.repeat(12)}`,
      run_id: runId,
    });
    await bridge(base, { type: 'run.completed', session_id: sid, run_id: runId });
  }
  return { ws, sid, runs };
}

test('the outline lists every run by title or prompt, jumps to one, follows the scroll; collapse all and expand all', async ({
  page,
}) => {
  const { ws, sid, runs } = await longSession(6);
  try {
    // Wide: the outline stands beside the timeline, open.
    await page.setViewportSize({ width: 1600, height: 900 });
    await openSession(page, base, sid);
    const outline = page.getByTestId('run-outline');
    const entries = outline.getByTestId('outline-run');
    await expect(entries).toHaveCount(6);
    await expect(entries.nth(0)).toContainText('prompt number 1');
    await expect(entries.nth(1)).toContainText('The titled run');
    await expect(entries.nth(0)).toContainText('1 file');
    await expect(entries.nth(0)).toContainText('done');
    // The run's own title is on its marker too.
    const marker = (i: number) => page.locator(`[data-testid="run-marker"][data-run-id="${runs[i]}"]`);
    await expect(marker(1).getByTestId('run-title')).toHaveText('The titled run');

    await entries.nth(4).click();
    await expect(marker(4)).toBeInViewport();
    await expect(marker(4).getByTestId('run-fold')).toBeFocused();
    await expect(entries.nth(4)).toHaveAttribute('aria-current', 'true');
    // Scrolling back up moves the mark to the run in view.
    await page.evaluate(() => window.scrollTo(0, 0));
    await expect(entries.nth(0)).toHaveAttribute('aria-current', 'true');
    await expect(entries.nth(4)).not.toHaveAttribute('aria-current', 'true');

    const blocks = page.getByTestId('change-block');
    await expect(blocks.first()).toBeVisible();
    await outline.getByTestId('collapse-all').click();
    for (let i = 0; i < 6; i++) await expect(marker(i)).toBeVisible();
    await expect(page.locator('[data-testid="change-block"]:visible')).toHaveCount(0);
    await expect(marker(0).getByTestId('run-fold')).toHaveAttribute('aria-expanded', 'false');
    await expect(marker(0).getByTestId('run-folded')).toHaveText('3 items folded');
    // One run opened again by its own button; then every run.
    await marker(2).getByTestId('run-fold').click();
    await expect(page.locator('[data-testid="change-block"]:visible')).toHaveCount(1);
    await outline.getByTestId('expand-all').click();
    await expect(page.locator('[data-testid="change-block"]:visible')).toHaveCount(6);
    // Narrower, it is a fold above the timeline, closed until asked for (the split view keeps its room).
    await page.setViewportSize({ width: 1280, height: 900 });
    await expect(entries.first()).toBeHidden();
    const box = await page.getByTestId('timeline').boundingBox();
    expect(box!.width).toBeGreaterThan(1200);
    await outline.locator('summary').click();
    await expect(entries.first()).toBeVisible();
  } finally {
    ws.cleanup();
  }
});

test.describe('accessibility', () => {
  test.use({ bypassCSP: true });
  for (const scheme of ['light', 'dark'] as const) {
    test(`accessibility: a hunk reached with n has no axe violations (${scheme})`, async ({ page }) => {
      await page.emulateMedia({ colorScheme: scheme });
      const { ws, sid, change } = await session();
      try {
        await openSession(page, base, sid);
        await open(page, change, 'a.txt');
        await page.evaluate(() => window.scrollTo(0, 0));
        await page.keyboard.press('n');
        await expect.poll(() => focusedText(page)).toMatch(/^@@ /);
        await expectNoAxeViolations(page);
      } finally {
        ws.cleanup();
      }
    });

    test(`accessibility: the outline of runs, one run collapsed, has no axe violations (${scheme})`, async ({
      page,
    }) => {
      await page.emulateMedia({ colorScheme: scheme });
      const { ws, sid, runs } = await longSession(3);
      try {
        await page.setViewportSize({ width: 1600, height: 900 });
        await openSession(page, base, sid);
        await expect(page.getByTestId('outline-run')).toHaveCount(3);
        await page.locator(`[data-testid="run-marker"][data-run-id="${runs[1]}"]`).getByTestId('run-fold').click();
        await expectNoAxeViolations(page);
      } finally {
        ws.cleanup();
      }
    });
  }
});

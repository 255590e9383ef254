import type { Page } from '@playwright/test';
import { axeViolationCount, expectNoAxeViolations } from './axe.ts';
import { bridge, expect, openSession, servers, test, uid, workspace } from './support.ts';

// Browser globals, for code inside page.evaluate (the root tsconfig has no DOM lib on purpose).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any;

const base = servers.main;
const rowOf = (page: Page, id: string) => page.locator(`[data-testid="session-row"][data-session-id="${id}"]`);

/** Two sessions under one unique word: one whose run failed, one whose run completed. */
async function twoSessions(word: string) {
  const ws = workspace({ 'a.txt': 'a\n' });
  const failed = uid('failed');
  const fine = uid('fine');
  await bridge(base, { type: 'session.upsert', session_id: failed, title: `${word} broke`, workspace: ws.dir });
  await bridge(base, { type: 'run.started', session_id: failed, run_id: 'r1' });
  await bridge(base, { type: 'run.failed', session_id: failed, run_id: 'r1', error: 'exit 1' });
  await bridge(base, { type: 'session.upsert', session_id: fine, title: `${word} worked`, workspace: ws.dir });
  await bridge(base, { type: 'run.started', session_id: fine, run_id: 'r1' });
  ws.write('a.txt', 'b\n');
  await bridge(base, { type: 'run.completed', session_id: fine, run_id: 'r1' });
  return { ws, failed, fine };
}

test('search and status filters narrow the list through the URL; failed runs are marked', async ({ page }) => {
  const word = uid('needle').replace(/[^a-z0-9]/gi, '');
  const { ws, failed, fine } = await twoSessions(word);
  const other = uid('other');
  await bridge(base, { type: 'session.upsert', session_id: other, title: 'Unrelated work' });
  try {
    await page.goto(`${base}/`);
    await expect(page.getByTestId('sessions-page')).toHaveAttribute('data-live', 'true');
    // Positive control: without a filter the unrelated session is listed.
    await expect(rowOf(page, other)).toBeVisible();

    await page.getByTestId('session-search').fill(word.toUpperCase());
    await expect(page).toHaveURL(new RegExp(`\\?q=${word.toUpperCase()}$`));
    await expect(page.getByTestId('session-row')).toHaveCount(2);
    await expect(rowOf(page, other)).toHaveCount(0);
    await expect(rowOf(page, failed).getByTestId('session-failed-runs')).toHaveText('1 failed');
    await expect(rowOf(page, fine).getByTestId('session-failed-runs')).toHaveCount(0);

    await page.getByTestId('session-status-filter').selectOption('failed');
    await expect(page).toHaveURL(/status=failed/);
    await expect(page.getByTestId('session-row')).toHaveCount(1);
    await expect(rowOf(page, failed)).toBeVisible();

    // The URL alone restores the filtered list (a shared link, a reload).
    await page.reload();
    await expect(page.getByTestId('session-search')).toHaveValue(word.toUpperCase());
    await expect(page.getByTestId('session-status-filter')).toHaveValue('failed');
    await expect(page.getByTestId('session-row')).toHaveCount(1);

    // A session that starts matching while the page is open joins the filtered list live.
    await bridge(base, { type: 'run.started', session_id: fine, run_id: 'r2' });
    await bridge(base, { type: 'run.failed', session_id: fine, run_id: 'r2', error: 'exit 2' });
    await expect(rowOf(page, fine).getByTestId('session-failed-runs')).toHaveText('1 failed');

    await page.getByTestId('session-search').fill(`${word}-nothing`);
    await expect(page.getByTestId('sessions-no-match')).toBeVisible();
    await page.getByTestId('session-filters-clear').click();
    await expect(page).toHaveURL(`${base}/`);
    await expect(rowOf(page, other)).toBeVisible();
  } finally {
    ws.cleanup();
  }
});

test('cancelling an inline delete puts focus back on the row; the question takes focus', async ({ page }) => {
  const sid = uid('focus');
  await bridge(base, { type: 'session.upsert', session_id: sid, title: `Keep ${sid}` });
  await page.goto(`${base}/?q=${encodeURIComponent(sid)}`);
  await expect(page.getByTestId('session-row')).toHaveCount(1);
  await rowOf(page, sid).getByTestId('session-delete').click();
  await expect(rowOf(page, sid).getByTestId('session-delete-cancel')).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(rowOf(page, sid).getByTestId('session-delete')).toBeFocused();
});

test('after a confirmed delete the focus moves to the next row, and to the search box when none is left', async ({
  page,
}) => {
  const word = uid('gone').replace(/[^a-z0-9]/gi, '');
  const older = uid('older');
  const newer = uid('newer');
  await bridge(base, { type: 'session.upsert', session_id: older, title: `${word} older` });
  await bridge(base, { type: 'session.upsert', session_id: newer, title: `${word} newer` });
  await page.goto(`${base}/?q=${word}`);
  await expect(page.getByTestId('session-row')).toHaveCount(2);
  await rowOf(page, newer).getByTestId('session-delete').click();
  await rowOf(page, newer).getByTestId('session-delete-confirm').click();
  await expect(rowOf(page, newer)).toHaveCount(0);
  await expect(rowOf(page, older).getByTestId('session-delete')).toBeFocused();
  await page.keyboard.press('Enter');
  await rowOf(page, older).getByTestId('session-delete-confirm').click();
  await expect(page.getByTestId('sessions-no-match')).toBeVisible();
  await expect(page.getByTestId('session-search')).toBeFocused();
});

for (const scheme of ['light', 'dark'] as const) {
  test(`the sessions list with filters and a failed run has no axe violations (${scheme})`, async ({ page }) => {
    await page.emulateMedia({ colorScheme: scheme });
    const word = uid('axe').replace(/[^a-z0-9]/gi, '');
    const { ws } = await twoSessions(word);
    try {
      await page.goto(`${base}/?q=${word}`);
      await expect(page.getByTestId('session-row')).toHaveCount(2);
      await expectNoAxeViolations(page);
      // Positive control: the same check fails on text too faint to read.
      await page.evaluate(() => {
        const p = document.createElement('p');
        p.textContent = 'faint';
        p.style.color = '#f0f0f0';
        p.style.background = '#ffffff';
        document.querySelector('main').appendChild(p);
      });
      expect(await axeViolationCount(page)).toBeGreaterThan(0);
    } finally {
      ws.cleanup();
    }
  });
}

test('each change block says which run or tool call it belongs to', async ({ page }) => {
  const ws = workspace({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
  const sid = uid('owner');
  try {
    await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Owners', workspace: ws.dir });
    await bridge(base, { type: 'run.started', session_id: sid, run_id: 'r1', source: 'coding-agent' });
    await bridge(base, { type: 'tool.started', session_id: sid, run_id: 'r1', tool_call_id: 't1', name: 'edit_file' });
    ws.write('a.txt', 'a2\n');
    await bridge(base, { type: 'tool.completed', session_id: sid, run_id: 'r1', tool_call_id: 't1' });
    ws.write('b.txt', 'b2\n');
    await bridge(base, { type: 'run.completed', session_id: sid, run_id: 'r1' });
    await openSession(page, base, sid);
    const block = (id: string) => page.locator(`[data-testid="change-block"][data-change-id="${id}"]`);
    await expect(block('run:r1').getByTestId('change-owner')).toHaveText('Run r1 (coding-agent)');
    // The tool call's own block, shown on request (its run's block lists the run's files).
    await page.getByTestId('tool-own-patches').click();
    await expect(block('tool:t1').getByTestId('change-owner')).toHaveText('Tool call edit_file · t1 in run r1');
  } finally {
    ws.cleanup();
  }
});

test('a filter changed within the typing pause keeps the text just typed, or just cleared', async ({ page }) => {
  const word = uid('pause').replace(/[^a-z0-9]/gi, '');
  await page.goto(`${base}/`);
  await expect(page.getByTestId('sessions-page')).toHaveAttribute('data-live', 'true');
  const search = page.getByTestId('session-search');

  // Typed, then the status changed from the keyboard before the 250 ms pause is over.
  await search.focus();
  await page.keyboard.type(word);
  await page.keyboard.press('Tab');
  await expect(page.getByTestId('session-status-filter')).toBeFocused();
  await page.keyboard.press('ArrowDown');
  await expect(page).toHaveURL(`${base}/?q=${word}&status=failed`);
  await expect(search).toHaveValue(word);
  await expect(page.getByTestId('session-status-filter')).toHaveValue('failed');

  // Cleared, then the status changed at once: the old text does not come back.
  await search.focus();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.press('Backspace');
  await page.keyboard.press('Tab');
  await page.keyboard.press('ArrowDown');
  await expect(page).toHaveURL(`${base}/?status=running`);
  await expect(search).toHaveValue('');
  // Longer than the pause: nothing pending puts the old text back.
  await page.waitForTimeout(400);
  await expect(page).toHaveURL(`${base}/?status=running`);
  await expect(search).toHaveValue('');
});

test('on a narrow screen a failed or running session says so in words, not only with a red edge', async ({ page }) => {
  const word = uid('narrow').replace(/[^a-z0-9]/gi, '');
  const { ws, failed, fine } = await twoSessions(word);
  const running = uid('running');
  await bridge(base, { type: 'session.upsert', session_id: running, title: `${word} busy` });
  await bridge(base, { type: 'run.started', session_id: running, run_id: 'r1' });
  try {
    await page.setViewportSize({ width: 400, height: 800 });
    await page.goto(`${base}/?q=${word}`);
    await expect(page.getByTestId('session-row')).toHaveCount(3);

    const failedRuns = rowOf(page, failed).getByTestId('session-runs');
    await expect(failedRuns).toBeVisible();
    await expect(failedRuns).toHaveAccessibleName('1 run, 1 failed');
    await expect(rowOf(page, failed).getByTestId('session-failed-runs')).toBeVisible();
    expect((await failedRuns.innerText()).split(/\s*\n\s*/)).toEqual(['1 run', '1 failed']);

    const runningRuns = rowOf(page, running).getByTestId('session-runs');
    await expect(runningRuns).toBeVisible();
    await expect(runningRuns).toHaveAccessibleName('1 run, 1 running');
    expect((await runningRuns.innerText()).split(/\s*\n\s*/)).toEqual(['1 run', '1 running']);

    await expect(rowOf(page, fine).getByTestId('session-runs')).toHaveText('1 run');
    // Nothing scrolls the page sideways.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(400);

    // Wide, the parts read as one line.
    await page.setViewportSize({ width: 1200, height: 800 });
    await expect(failedRuns).toHaveText('1 run · 1 failed');
    expect(await failedRuns.innerText()).toBe('1 run · 1 failed');
  } finally {
    await bridge(base, { type: 'run.completed', session_id: running, run_id: 'r1' });
    ws.cleanup();
  }
});

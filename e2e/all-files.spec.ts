import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { bridge, expect, openSession, ownServer, row, servers, test, uid, workspace } from './support.ts';

// Browser globals, for code inside page.evaluate (the root tsconfig has no DOM lib on purpose).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const window: any, document: any, MutationObserver: any, requestAnimationFrame: any;
/** The scroll box, as page code sees it. */
interface ScrollBox {
  scrollTop: number;
  clientHeight: number;
  scrollHeight: number;
}

const names = Array.from({ length: 300 }, (_, i) => `src/f${String(i).padStart(3, '0')}.txt`);

/** A real workspace of 300 files, a session on it, and the run that rewrites every file. */
async function bigRun(base: string, sid: string, run: string, beforeCompletion?: () => Promise<void>) {
  const ws = workspace(Object.fromEntries(names.map((n) => [n, 'old\n'])));
  await bridge(base, { type: 'session.upsert', session_id: sid, title: '300 files', workspace: ws.dir });
  await beforeCompletion?.();
  await bridge(base, { type: 'run.started', session_id: sid, run_id: run });
  for (const n of names) ws.write(n, 'new\n');
  await bridge(base, { type: 'run.completed', session_id: sid, run_id: run });
  return ws;
}

/**
 * Counts, after every DOM change, the file rows the block holds (loaded rows and placeholders) and
 * records the largest count and every path that was ever rendered.
 */
async function watchRows(page: Page, change: string): Promise<void> {
  await page.evaluate((id: string) => {
    window.__rows = { max: 0, paths: new Set() };
    const count = () => {
      const block = document.querySelector(`[data-testid="change-block"][data-change-id="${id}"]`);
      if (!block) return;
      const rows = block.querySelectorAll('[data-testid="change-row"], [data-testid="change-row-placeholder"]');
      window.__rows.max = Math.max(window.__rows.max, rows.length);
      for (const r of rows) if (r.dataset.path) window.__rows.paths.add(r.dataset.path);
    };
    new MutationObserver(count).observe(document.body, { childList: true, subtree: true });
    count();
  }, change);
}

const rowsSeen = (page: Page) =>
  page.evaluate(() => ({ max: window.__rows.max as number, paths: [...window.__rows.paths].sort() as string[] }));

const focusedPath = (page: Page) =>
  page.evaluate(() => document.activeElement?.closest('[data-testid="change-row"]')?.getAttribute('data-path') ?? null);

test('a 300-file change: "Changed 300 files", the rest loads as the list scrolls, never more than 100 rows in the DOM', async ({
  page,
}) => {
  const base = servers.main;
  const sid = uid('s');
  const run = uid('r');
  const change = `run:${run}`;
  const block = page.locator(`[data-testid="change-block"][data-change-id="${change}"]`);
  // The page is open before the run completes: the block comes from workspace.diff.completed.
  const ws = await bigRun(base, sid, run, async () => {
    await openSession(page, base, sid);
    await watchRows(page, change);
  });
  try {
    await expect(block.getByTestId('change-heading')).toHaveText('Changed 300 files');
    await expect(block.getByTestId('change-row')).toHaveCount(50);
    await expect(block.getByTestId('change-more')).toHaveText('+250 more files');
    const showAll = block.getByTestId('change-show-all');
    await expect(showAll).toHaveText('Show all 300 files');

    await showAll.click();
    const viewport = block.getByTestId('virtual-viewport');
    await expect(viewport).toHaveAttribute('aria-label', 'Changed 300 files: all 300 listed');
    await expect(block.getByTestId('change-more')).toHaveCount(0);
    // The list opens where the first page ended, the focus on the first row not seen before.
    await expect.poll(() => focusedPath(page)).toBe(names[50]);
    const focusedRow = row(page, change, names[50]!);
    await expect(focusedRow).toHaveAttribute('aria-posinset', '51');
    await expect(focusedRow).toHaveAttribute('aria-setsize', '300');
    await expect(focusedRow.getByRole('button', { name: `modified ${names[50]} +1 -1` })).toBeFocused();
    await page.keyboard.press('ArrowDown');
    expect(await focusedPath(page)).toBe(names[51]);

    // Scroll the box step by step to its end, each step waiting until the rows in view are loaded.
    for (let step = 0; step < 60; step++) {
      // Two frames after the scroll: the list has rendered the rows (or placeholders) for the new
      // range before the placeholder check below, so it never passes on the old range's rows.
      const atEnd = await viewport.evaluate(async (el: ScrollBox) => {
        el.scrollTop += el.clientHeight;
        await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
        return el.scrollTop + el.clientHeight >= el.scrollHeight - 1;
      });
      await expect(block.getByTestId('change-row-placeholder')).toHaveCount(0);
      if (atEnd) break;
    }
    const last = row(page, change, names[299]!);
    await expect(last).toBeVisible();
    await last.getByTestId('change-row-button').click();
    await expect(last.getByTestId('patch')).toContainText('new');

    const seen = await rowsSeen(page);
    expect(seen.paths).toEqual(names);
    // The counter counted the 50 rows of the first page (so it sees rows), yet never 100 at once.
    expect(seen.max).toBeGreaterThanOrEqual(50);
    expect(seen.max).toBeLessThan(100);

    // Keyboard: Home and End reach the ends of the whole list; the open patch stays open.
    await last.getByTestId('change-row-button').focus();
    await page.keyboard.press('Home');
    await expect.poll(() => focusedPath(page)).toBe(names[0]);
    await page.keyboard.press('End');
    await expect.poll(() => focusedPath(page)).toBe(names[299]);
    await expect(last.getByTestId('change-row-button')).toHaveAttribute('aria-expanded', 'true');

    // Back to the first page: the button comes back and takes the focus.
    await block.getByTestId('change-show-fewer').click();
    await expect(block.getByTestId('change-row')).toHaveCount(50);
    await expect(showAll).toBeFocused();

    // The session opened again later (from its stored detail, no live event): the same, with the
    // last row reached straight from the end of the list.
    await page.goto(`${base}/`);
    await openSession(page, base, sid);
    await watchRows(page, change);
    await expect(block.getByTestId('change-heading')).toHaveText('Changed 300 files');
    await block.getByTestId('change-show-all').click();
    await viewport.evaluate((el: ScrollBox) => (el.scrollTop = el.scrollHeight));
    await expect(row(page, change, names[299]!)).toBeVisible();
    await row(page, change, names[299]!).getByTestId('change-row-button').click();
    await expect(row(page, change, names[299]!).getByTestId('patch')).toContainText('new');
    expect((await rowsSeen(page)).max).toBeLessThan(100);
  } finally {
    ws.cleanup();
  }
});

test('a page of files that cannot be loaded says so with Retry, and Retry loads it once the server is back', async ({
  page,
}) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-e2e-own-'));
  const server = await ownServer(path.join(dir, 'own.db'));
  const sid = uid('s');
  const run = uid('r');
  const change = `run:${run}`;
  const block = page.locator(`[data-testid="change-block"][data-change-id="${change}"]`);
  const ws = await bigRun(server.url, sid, run);
  try {
    await openSession(page, server.url, sid);
    await expect(block.getByTestId('change-row')).toHaveCount(50);
    await server.stop();
    await block.getByTestId('change-show-all').click();
    await expect(block.getByTestId('change-files-error')).toContainText('Could not load files 51-200');
    await expect(block.getByTestId('change-files-error')).toContainText('cannot be reached');
    await expect(block.getByTestId('change-row-placeholder').first()).toContainText('not loaded');
    // The rows already there stay usable.
    await expect(block.getByTestId('change-row').first()).toBeAttached();

    await server.start();
    await block.getByTestId('change-files-retry').click();
    await expect(block.getByTestId('change-files-error')).toHaveCount(0);
    await expect(row(page, change, names[50]!)).toBeVisible();
    await expect(block.getByTestId('change-row-placeholder')).toHaveCount(0);
  } finally {
    await server.stop();
    ws.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

import fs from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';

// Browser globals, for code inside page.evaluate (the root tsconfig has no DOM lib on purpose).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const window: any, document: any, localStorage: any;

const OUT = path.resolve(process.cwd(), 'docs/screenshots');

/** Plays the demo through the UI's own button and waits until its last run has ended. */
async function playDemo(page: Page): Promise<string> {
  await page.goto('/');
  await page.getByTestId('play-demo').click();
  await expect(page).toHaveURL(/\/sessions\/demo-/);
  const id = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
  await expect(page.locator('[data-testid="run-marker"][data-run-id="r4"]')).toHaveAttribute(
    'data-status',
    'completed',
    {
      timeout: 90_000,
    },
  );
  return id;
}

/**
 * Opens src/Login.vue's patch. A page opened on a URL that links the file opens it by itself, so
 * the row is clicked only while it is closed.
 */
async function expandLogin(page: Page): Promise<void> {
  const login = page.locator('[data-change-id="run:r1"] [data-testid="change-row"][data-path="src/Login.vue"]');
  const button = login.getByTestId('change-row-button');
  await expect(async () => {
    if ((await button.getAttribute('aria-expanded')) !== 'true') await button.click();
    await expect(button).toHaveAttribute('aria-expanded', 'true', { timeout: 1_000 });
  }).toPass();
  await expect(login.getByTestId('patch')).toHaveAttribute('data-highlighted', 'true');
}

test('screenshots of the demo session', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: 'light' });
  const id = await playDemo(page);
  await page.mouse.move(5, 795); // no hover highlight in the pictures

  const block = page.locator('[data-testid="change-block"][data-change-id="run:r1"]');
  // The top of the session: the request, the run, tool calls with their change blocks.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(OUT, 'timeline.png') });

  // The other states: a capped run with a truncated file and the patch budget spent, a failed run,
  // and a run whose workspace does not exist.
  const r2 = page.locator('[data-testid="change-block"][data-change-id="run:r2"]');
  const scrollTo = async (selector: string, top: number) => {
    await page.evaluate(([sel, y]) => window.scrollBy(0, document.querySelector(sel).getBoundingClientRect().top - y), [
      selector,
      top,
    ] as const);
  };
  await r2.scrollIntoViewIfNeeded();
  await scrollTo('[data-change-id="run:r2"]', 160);
  await page.screenshot({ path: path.join(OUT, 'timeline-limits.png') });
  await scrollTo('[data-change-id="run:r2"] [data-testid="change-more"]', 60);
  await page.screenshot({ path: path.join(OUT, 'timeline-states.png') });

  await page.evaluate(() => localStorage.setItem('rundiff.patchLayout', 'unified'));
  await page.reload();
  await expandLogin(page);
  const login = page.locator('[data-change-id="run:r1"] [data-testid="change-row"][data-path="src/Login.vue"]');
  await login.scrollIntoViewIfNeeded();
  await page.evaluate(() => window.scrollBy(0, 260));
  await login.screenshot({ path: path.join(OUT, 'patch-unified.png') });
  await login.getByTestId('layout-split').click();
  await expect(login.getByTestId('patch')).toHaveAttribute('data-highlighted', 'true');
  await login.screenshot({ path: path.join(OUT, 'patch-split.png') });

  // Review: the run's files as a tree, two marked viewed (dimmed, counted in the heading).
  await login.getByTestId('change-row-button').click();
  await block.getByTestId('view-tree').click();
  await expect(block.getByTestId('file-tree')).toBeVisible();
  for (const box of (await block.getByTestId('viewed-toggle').all()).slice(0, 2)) await box.check();
  await expect(block.getByTestId('change-viewed-count')).toHaveText(/^2 of \d+ viewed$/);
  await block.scrollIntoViewIfNeeded();
  await page.mouse.move(5, 795);
  await block.screenshot({ path: path.join(OUT, 'review.png') });
  await block.getByTestId('view-flat').click();

  // Dark theme: the same session, system colour scheme dark.
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.evaluate(() => localStorage.setItem('rundiff.patchLayout', 'split'));
  await page.goto(`/sessions/${encodeURIComponent(id)}`);
  await expandLogin(page);
  await block.scrollIntoViewIfNeeded();
  await page.evaluate(() => window.scrollBy(0, -120));
  await page.screenshot({ path: path.join(OUT, 'dark.png') });

  // A phone-sized window: no sideways page scroll.
  await page.setViewportSize({ width: 400, height: 800 });
  await page.emulateMedia({ colorScheme: 'light' });
  await page.evaluate(() => localStorage.setItem('rundiff.patchLayout', 'unified'));
  await page.reload();
  await expandLogin(page);
  await block.scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(OUT, 'narrow.png') });

  // The demo's temporary git workspace is not needed any more.
  const workspace = await page.getByTestId('session-workspace').innerText();
  if (workspace.includes('rundiff-demo-')) fs.rmSync(workspace, { recursive: true, force: true });
});

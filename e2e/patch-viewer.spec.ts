import type { Page } from '@playwright/test';
import {
  bridge,
  expect,
  lines,
  openSession,
  recordPatchRequests,
  row,
  servers,
  test,
  uid,
  workspace,
} from './support.ts';

// Browser globals, for code inside page.evaluate (the root tsconfig has no DOM lib on purpose).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const window: any, document: any, localStorage: any, navigator: any, requestAnimationFrame: any;

const base = servers.main;

/** One run that edits a TypeScript file, adds a Markdown file and deletes a text file. */
async function session() {
  const ws = workspace({
    'src/price.ts': 'export function price(cents: number): string {\n  return `$${cents / 100}`;\n}\n',
    'notes.txt': lines(4),
  });
  const sid = uid('s');
  const run = uid('r');
  await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Patch viewer', workspace: ws.dir });
  await bridge(base, { type: 'run.started', session_id: sid, run_id: run });
  ws.write('src/price.ts', 'export function price(cents: number): string {\n  return `€${cents / 100}`;\n}\n');
  ws.write('docs/guide.md', '# Guide\n\nSome *text*.\n');
  ws.rm('notes.txt');
  await bridge(base, {
    type: 'message',
    session_id: sid,
    role: 'assistant',
    content: 'Done.',
    message_id: `${sid}-a`,
    run_id: run,
  });
  await bridge(base, { type: 'run.completed', session_id: sid, run_id: run });
  return { ws, sid, change: `run:${run}` };
}

const focusedPath = (page: Page) =>
  page.evaluate(() => document.activeElement?.closest('[data-testid="change-row"]')?.getAttribute('data-path') ?? null);

test('keyboard: j/k move between file rows, Tab reaches each, Enter and Space toggle', async ({ page }) => {
  const { ws, sid, change } = await session();
  try {
    await openSession(page, base, sid);
    const paths = await page
      .locator(`[data-change-id="${change}"] [data-testid="change-row"]`)
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-path')));
    expect(paths).toEqual(['docs/guide.md', 'notes.txt', 'src/price.ts']);

    await page.keyboard.press('j');
    expect(await focusedPath(page)).toBe('docs/guide.md');
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    expect(await focusedPath(page)).toBe('src/price.ts');
    await page.keyboard.press('j'); // stays on the last row
    expect(await focusedPath(page)).toBe('src/price.ts');
    await page.keyboard.press('k');
    expect(await focusedPath(page)).toBe('notes.txt');

    // Tab from the first row reaches its Viewed box, then the next rows in order.
    await page.keyboard.press('k');
    await page.keyboard.press('Tab');
    await expect(page.locator(':focus')).toHaveAttribute('data-testid', 'viewed-toggle');
    expect(await focusedPath(page)).toBe('docs/guide.md');
    await page.keyboard.press('Tab');
    expect(await focusedPath(page)).toBe('notes.txt');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await focusedPath(page)).toBe('src/price.ts');

    const price = row(page, change, 'src/price.ts');
    const button = price.getByTestId('change-row-button');
    await page.keyboard.press('Enter');
    await expect(button).toHaveAttribute('aria-expanded', 'true');
    await expect(price.getByTestId('patch')).toContainText('return `€${cents / 100}`;');
    await page.keyboard.press(' ');
    await expect(button).toHaveAttribute('aria-expanded', 'false');
    await expect(price.getByTestId('patch')).toHaveCount(0);
    await page.keyboard.press('Space');
    await expect(button).toHaveAttribute('aria-expanded', 'true');
  } finally {
    ws.cleanup();
  }
});

test('highlighting is loaded for the file language and changed words are marked, as text', async ({ page }) => {
  const { ws, sid, change } = await session();
  try {
    await openSession(page, base, sid);
    const price = row(page, change, 'src/price.ts');
    await price.getByTestId('change-row-button').click();
    const patch = price.getByTestId('patch');
    await expect(patch).toHaveAttribute('data-language', 'typescript');
    await expect(patch).toHaveAttribute('data-highlighted', 'true');
    await expect(patch.locator('.hljs-keyword').first()).toHaveText('export');
    await expect(patch.locator('tr.pl-del .wd')).toHaveText(['$']);
    await expect(patch.locator('tr.pl-add .wd')).toHaveText(['€']);

    const guide = row(page, change, 'docs/guide.md');
    await guide.getByTestId('change-row-button').click();
    await expect(guide.getByTestId('patch')).toHaveAttribute('data-language', 'markdown');
    await expect(guide.getByTestId('patch')).toHaveAttribute('data-highlighted', 'true');
    await expect(guide.locator('.hljs-section').first()).toHaveText('# Guide');
  } finally {
    ws.cleanup();
  }
});

test('the unified/split choice applies to every patch and is remembered after a reload', async ({ page }) => {
  const { ws, sid, change } = await session();
  try {
    await openSession(page, base, sid);
    const price = row(page, change, 'src/price.ts');
    await price.getByTestId('change-row-button').click();
    await expect(price.getByTestId('patch')).toHaveAttribute('data-layout', 'unified');
    await price.getByTestId('layout-split').click();
    const patch = price.getByTestId('patch');
    await expect(patch).toHaveAttribute('data-layout', 'split');
    await expect(price.getByTestId('layout-split')).toHaveAttribute('aria-pressed', 'true');
    // Side by side: the removed line on the left, its replacement on the right, in one row.
    const pair = patch.locator('tr.pl-pair', { hasText: '$${cents' });
    await expect(pair.locator('td.side-old')).toContainText('return `$${cents / 100}`;');
    await expect(pair.locator('td.side-new')).toContainText('return `€${cents / 100}`;');

    await page.reload();
    await expect(page.getByTestId('timeline')).toHaveAttribute('data-loaded', 'true');
    // The URL links the open file: the reload opens it again.
    await expect(price.getByTestId('change-row-button')).toHaveAttribute('aria-expanded', 'true');
    await expect(price.getByTestId('patch')).toHaveAttribute('data-layout', 'split');
    const guide = row(page, change, 'docs/guide.md');
    await guide.getByTestId('change-row-button').click();
    await expect(guide.getByTestId('patch')).toHaveAttribute('data-layout', 'split');
    await guide.getByTestId('layout-unified').click();
    await expect(price.getByTestId('patch')).toHaveAttribute('data-layout', 'unified');
    expect(await page.evaluate(() => localStorage.getItem('rundiff.patchLayout'))).toBe('unified');
  } finally {
    ws.cleanup();
  }
});

test('copy patch and copy path put the stored patch and the path on the clipboard', async ({ page, context }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const { ws, sid, change } = await session();
  try {
    await openSession(page, base, sid);
    const price = row(page, change, 'src/price.ts');
    await price.getByTestId('change-row-button').click();
    await expect(price.getByTestId('patch')).toBeVisible();
    const fileId = await price.getAttribute('data-file-id');
    const stored = (await (
      await fetch(
        `${base}/api/hermes/sessions/${sid}/workspace-run-changes/${encodeURIComponent(change)}/files/${fileId}`,
      )
    ).json()) as { file: { patch: string } };

    await price.getByTestId('copy-patch').click();
    await expect(price.getByTestId('copy-status')).toHaveText('Copied patch');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(stored.file.patch);
    await price.getByTestId('copy-path').click();
    await expect(price.getByTestId('copy-status')).toHaveText('Copied path');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('src/price.ts');
  } finally {
    ws.cleanup();
  }
});

test('without the Clipboard API, copying falls back to a selected textarea', async ({ page }) => {
  await page.addInitScript(() => {
    Object.defineProperty(navigator, 'clipboard', { value: undefined });
    document.addEventListener('copy', (e: { target: { value: string } }) => {
      (window as unknown as { copied: string }).copied = e.target.value;
    });
  });
  const { ws, sid, change } = await session();
  try {
    await openSession(page, base, sid);
    const notes = row(page, change, 'notes.txt');
    await notes.getByTestId('change-row-button').click();
    await notes.getByTestId('copy-path').click();
    await expect(notes.getByTestId('copy-status')).toHaveText('Copied path');
    expect(await page.evaluate(() => (window as unknown as { copied: string }).copied)).toBe('notes.txt');
    // The textarea is gone and the focus went back to the button.
    await expect(page.locator('body > textarea')).toHaveCount(0);
    await expect(notes.getByTestId('copy-path')).toBeFocused();
  } finally {
    ws.cleanup();
  }
});

test('a patch at the per-file cap waits for Load diff, then shows its first lines and scrolls to its end', async ({
  page,
}) => {
  const ws = workspace({ 'README.md': 'x\n' });
  const sid = uid('s');
  const run = uid('r');
  try {
    await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Big', workspace: ws.dir });
    await bridge(base, { type: 'run.started', session_id: sid, run_id: run });
    // ~155 KiB of TypeScript: past the 128 KiB per-file cap, so the stored patch is the capped one.
    const body = Array.from({ length: 3000 }, (_, i) => `export const value${i} = { id: ${i}, name: 'item ${i}' };`);
    ws.write('src/big.ts', body.join('\n') + '\n');
    await bridge(base, { type: 'run.completed', session_id: sid, run_id: run });
    await openSession(page, base, sid);
    const requests = recordPatchRequests(page);
    const big = row(page, `run:${run}`, 'src/big.ts');
    await big.getByTestId('change-row-button').click();
    // Too big to open by itself: its counts and a Load diff button, nothing fetched.
    await expect(big.getByTestId('patch-large')).toContainText(/^Large diff: \+[\d,]+ -0 lines, 128\.\d KiB/);
    expect(requests).toHaveLength(0);
    await big.getByTestId('load-diff').click();
    await expect(big.getByTestId('change-row-button')).toBeFocused();
    const patch = big.getByTestId('patch');
    await expect(patch.locator('tr.pl-add').first()).toContainText('export const value0 =');
    expect(requests).toHaveLength(1);
    await expect(patch).toHaveAttribute('data-rendered', 'true');
    // The file is past the per-file cap, so its stored patch was cut; it opens whole, from the kept contents.
    const fileId = await big.getAttribute('data-file-id');
    const stored = (await (
      await fetch(
        `${base}/api/hermes/sessions/${sid}/workspace-run-changes/${encodeURIComponent(`run:${run}`)}/files/${fileId}`,
      )
    ).json()) as { file: { patch: string } };
    expect(stored.file.patch.length).toBeGreaterThan(120 * 1024);
    const added = stored.file.patch.split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++'));
    // Windowed: only the blocks in view are in the DOM, far fewer rows than the patch holds...
    const inDom = await patch.locator('tr.pl-add').count();
    expect(inDom).toBeLessThan(added.length / 2);
    // Scrolled down page by page, the page moves on each time: swapping blocks for spacers never
    // moves the page back.
    const positions = await page.evaluate(async () => {
      const seen: number[] = [];
      for (let i = 0; i < 30; i++) {
        window.scrollBy(0, 700);
        await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
        seen.push(window.scrollY);
      }
      return seen;
    });
    for (let i = 1; i < positions.length; i++) expect(positions[i]).toBeGreaterThan(positions[i - 1]!);
    // Halfway down, the rows there are in the DOM and on screen (the spacers hold the place of the rest)...
    const middle = await patch.evaluate((el: { getBoundingClientRect(): { top: number; height: number } }) => {
      const r = el.getBoundingClientRect();
      return window.scrollY + r.top + r.height / 2;
    });
    await page.evaluate((y: number) => window.scrollTo(0, y - 300), middle);
    await expect
      .poll(() =>
        patch
          .locator('tr.pl-add')
          .evaluateAll(
            (rows: { getBoundingClientRect(): { top: number; bottom: number } }[]) =>
              rows.filter(
                (r) => r.getBoundingClientRect().top >= 0 && r.getBoundingClientRect().bottom <= window.innerHeight,
              ).length,
          ),
      )
      .toBeGreaterThan(10);
    // ...and scrolling to its end brings its last line in: the whole file, no truncation note.
    await expect(patch.getByTestId('patch-truncated')).toHaveCount(0);
    await patch.evaluate((el: { scrollIntoView(o: object): void }) => el.scrollIntoView({ block: 'end' }));
    await expect(patch.locator('tr.pl-add').last()).toContainText(added.at(-1)!.slice(1));
    await expect(patch.locator('tr.pl-add').last()).toBeInViewport();
    await expect(patch).toHaveAttribute('data-highlighted', 'true', { timeout: 30_000 });
    expect(await patch.locator('tr.pl-add').count()).toBeLessThan(added.length / 2);
  } finally {
    ws.cleanup();
  }
});

import type { Page } from '@playwright/test';
import { bridge, expect, openSession, row, servers, test, uid, workspace } from './support.ts';
import { expectNoAxeViolations } from './axe.ts';

// Browser globals, for code inside page.evaluate (the root tsconfig has no DOM lib on purpose).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const localStorage: any, sessionStorage: any;

const base = servers.main;

/** One recorded run of session `sid` in which `edit` changes the workspace; answers its change id. */
async function recordRun(sid: string, edit: () => void): Promise<string> {
  const run = uid('r');
  await bridge(base, { type: 'run.started', session_id: sid, run_id: run });
  edit();
  await bridge(base, { type: 'run.completed', session_id: sid, run_id: run });
  return `run:${run}`;
}

const block = (page: Page, change: string) => page.locator(`[data-testid="change-block"][data-change-id="${change}"]`);

test.beforeEach(async ({ page }) => {
  // Viewed files shown, the flat list: the choices a first visit starts with (a reload keeps the
  // choices made since, as it would for a user).
  await page.addInitScript(() => {
    if (sessionStorage.getItem('viewed-spec') !== null) return;
    sessionStorage.setItem('viewed-spec', '1');
    localStorage.removeItem('rundiff.hideViewed');
    localStorage.removeItem('rundiff.fileView');
  });
});

test('a file marked viewed stays viewed after a reload, counts, hides, and a later run changing it resets the mark', async ({
  page,
  context,
}) => {
  const ws = workspace({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
  const sid = uid('s');
  try {
    await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Viewed', workspace: ws.dir });
    const first = await recordRun(sid, () => {
      ws.write('a.txt', 'A\n');
      ws.write('b.txt', 'B\n');
      ws.write('c.txt', 'C\n');
    });
    await openSession(page, base, sid);
    const count = block(page, first).getByTestId('change-viewed-count');
    await expect(count).toHaveText('0 of 3 viewed');

    // By mouse: the box is named after its file.
    await page.getByRole('checkbox', { name: 'Viewed a.txt' }).check();
    await expect(row(page, first, 'a.txt')).toHaveAttribute('data-viewed', 'true');
    await expect(count).toHaveText('1 of 3 viewed');

    // By keyboard: `v` on the focused row, listed in the shortcuts dialog.
    await row(page, first, 'b.txt').getByTestId('change-row-button').focus();
    await page.keyboard.press('v');
    await expect(row(page, first, 'b.txt')).toHaveAttribute('data-viewed', 'true');
    await expect(count).toHaveText('2 of 3 viewed');
    await page.keyboard.press('?');
    await expect(page.getByTestId('shortcuts-dialog')).toContainText('Mark the focused file viewed');
    await page.keyboard.press('Escape');

    // A second page of the same session is told as marks change.
    const other = await context.newPage();
    await openSession(other, base, sid);
    await expect(block(other, first).getByTestId('change-viewed-count')).toHaveText('2 of 3 viewed');
    await other.getByRole('checkbox', { name: 'Viewed c.txt' }).check();
    await expect(count).toHaveText('3 of 3 viewed');
    await other.getByRole('checkbox', { name: 'Viewed c.txt' }).uncheck();
    await expect(count).toHaveText('2 of 3 viewed');
    await other.close();

    // Kept on the server: a reload shows the same.
    await page.reload();
    await expect(page.getByTestId('timeline')).toHaveAttribute('data-subscribed', 'true');
    await expect(count).toHaveText('2 of 3 viewed');
    await expect(row(page, first, 'a.txt')).toHaveAttribute('data-viewed', 'true');
    await expect(row(page, first, 'c.txt')).toHaveAttribute('data-viewed', 'false');

    // Hide viewed: the flat list and the tree leave them out, and say how many.
    await block(page, first).getByTestId('hide-viewed').click();
    await expect(block(page, first).getByTestId('change-row')).toHaveCount(1);
    await expect(row(page, first, 'c.txt')).toBeVisible();
    await expect(block(page, first).getByTestId('viewed-hidden')).toContainText('2 viewed files hidden');
    await block(page, first).getByTestId('view-tree').click();
    await expect(block(page, first).getByTestId('file-tree').getByTestId('change-row')).toHaveCount(1);
    await block(page, first).getByTestId('view-flat').click();

    // A viewed page in both themes has no accessibility violation.
    await block(page, first).getByTestId('show-viewed').click();
    await expect(block(page, first).getByTestId('change-row')).toHaveCount(3);
    await test.step('axe', async () => {
      await page.emulateMedia({ colorScheme: 'light' });
      await expectNoAxeViolations(page);
      await page.emulateMedia({ colorScheme: 'dark' });
      await expectNoAxeViolations(page);
    });
    await block(page, first).getByTestId('hide-viewed').click();

    // A later run changes a.txt through the real bridge: its mark goes, b.txt's stays.
    const second = await recordRun(sid, () => ws.write('a.txt', 'AA\n'));
    await expect(block(page, second)).toBeVisible();
    await expect(row(page, first, 'a.txt')).toHaveAttribute('data-viewed', 'false');
    await expect(count).toHaveText('1 of 3 viewed');
    await expect(block(page, first).getByTestId('change-row')).toHaveCount(2);
    await expect(row(page, second, 'a.txt')).toHaveAttribute('data-viewed', 'false');
    await page.reload();
    await expect(count).toHaveText('1 of 3 viewed');
    await expect(block(page, first).getByTestId('hide-viewed')).toHaveAttribute('aria-pressed', 'true');
    await expect(row(page, first, 'b.txt')).toHaveCount(0);
    await expect(row(page, first, 'a.txt')).toBeVisible();
  } finally {
    ws.cleanup();
  }
});

test.describe('accessibility', () => {
  // axe-core is injected as a script, which the app's Content-Security-Policy rightly refuses.
  test.use({ bypassCSP: true });
  for (const scheme of ['light', 'dark'] as const) {
    test(`accessibility: viewed rows, the count and the hide-viewed filter have no axe violations (${scheme})`, async ({
      page,
    }) => {
      await page.emulateMedia({ colorScheme: scheme });
      const ws = workspace({ 'src/app.ts': 'a\n', 'src/lib/util.ts': 'b\n', 'README.md': 'c\n' });
      const sid = uid('s');
      try {
        await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Viewed a11y', workspace: ws.dir });
        const change = await recordRun(sid, () => {
          ws.write('src/app.ts', 'A\n');
          ws.write('src/lib/util.ts', 'B\n');
          ws.write('README.md', 'C\n');
        });
        await openSession(page, base, sid);
        await page.getByRole('checkbox', { name: 'Viewed src/app.ts' }).check();
        await expect(block(page, change).getByTestId('change-viewed-count')).toHaveText('1 of 3 viewed');
        await row(page, change, 'README.md').getByTestId('change-row-button').click();
        await expectNoAxeViolations(page);
        await block(page, change).getByTestId('hide-viewed').click();
        await expect(block(page, change).getByTestId('viewed-hidden')).toBeVisible();
        // `v` hides the focused row: the focus goes on to the next file, not to the page's top.
        await row(page, change, 'README.md').getByTestId('change-row-button').focus();
        await page.keyboard.press('v');
        await expect(row(page, change, 'README.md')).toHaveCount(0);
        await expect(row(page, change, 'src/lib/util.ts').getByTestId('change-row-button')).toBeFocused();
        await block(page, change).getByTestId('view-tree').click();
        await expectNoAxeViolations(page);
      } finally {
        ws.cleanup();
      }
    });
  }
});

test('hide viewed in the windowed list of a 300-file change skips viewed rows it has not fetched yet', async ({
  page,
}) => {
  const names = Array.from({ length: 300 }, (_, i) => `src/f${String(i).padStart(3, '0')}.txt`);
  const ws = workspace(Object.fromEntries(names.map((n) => [n, 'old\n'])));
  const sid = uid('s');
  try {
    await bridge(base, { type: 'session.upsert', session_id: sid, title: '300 viewed', workspace: ws.dir });
    const change = await recordRun(sid, () => {
      for (const n of names) ws.write(n, 'new\n');
    });
    // Rows 50 (the first past the summary's page) and 120 marked over REST, as another client would.
    const files = (await (
      await fetch(
        `${base}/api/hermes/sessions/${sid}/workspace-run-changes/${encodeURIComponent(change)}/files?limit=200`,
      )
    ).json()) as { files: { id: string; path: string }[] };
    for (const i of [50, 120]) {
      const res = await fetch(`${base}/api/hermes/sessions/${sid}/viewed`, {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ change_id: change, file_id: files.files[i]!.id }),
      });
      expect(res.status).toBe(200);
    }

    await openSession(page, base, sid);
    const b = block(page, change);
    await expect(b.getByTestId('change-viewed-count')).toHaveText('2 of 300 viewed');
    await b.getByTestId('hide-viewed').click();
    await b.getByTestId('change-show-all').click();
    const list = b.getByTestId('virtual-viewport');
    await expect(list).toHaveAttribute('data-total', '298');
    // The focus opens on the first row past the summary's page that is not viewed: position 51.
    await expect(page.locator(':focus')).toHaveAttribute('data-testid', 'change-row-button');
    await expect(row(page, change, names[51]!)).toBeVisible();
    await expect(row(page, change, names[50]!)).toHaveCount(0);
    await expect(row(page, change, names[52]!)).toBeVisible();

    // Showing viewed files again puts them back in place.
    await b.getByTestId('show-viewed').click();
    await expect(list).toHaveAttribute('data-total', '300');
    await expect(row(page, change, names[50]!)).toHaveAttribute('data-viewed', 'true');
  } finally {
    ws.cleanup();
  }
});

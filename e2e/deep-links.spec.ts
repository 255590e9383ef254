import type { Page } from '@playwright/test';
import { bridge, expect, openSession, row, servers, test, uid, workspace } from './support.ts';

// Browser globals, for code inside page.evaluate (the root tsconfig has no DOM lib on purpose).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const localStorage: any, sessionStorage: any;

const base = servers.main;
const block = (page: Page, change: string) => page.locator(`[data-testid="change-block"][data-change-id="${change}"]`);
const name = (i: number) => `src/f${String(i).padStart(3, '0')}.ts`;

/** A session with one run that changed `count` files `src/f000.ts`...; answers its ids. */
async function bigRun(count: number, content = (i: number) => `b${i}\n`, fileName = name) {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) files[fileName(i)] = 'a\n';
  const ws = workspace(files);
  const sid = uid('s');
  const run = uid('r');
  await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Links', workspace: ws.dir });
  await bridge(base, { type: 'run.started', session_id: sid, run_id: run });
  for (let i = 0; i < count; i++) ws.write(fileName(i), content(i));
  await bridge(base, { type: 'run.completed', session_id: sid, run_id: run });
  return { ws, sid, change: `run:${run}` };
}

/** The id of the stored row at `position` (0-based, path order), read through the REST pages. */
async function fileIdAt(sid: string, change: string, position: number): Promise<string> {
  const after = position === 0 ? '' : `after=${position - 1}&`;
  const res = await fetch(
    `${base}/api/hermes/sessions/${sid}/workspace-run-changes/${encodeURIComponent(change)}/files?${after}limit=1`,
  );
  expect(res.status).toBe(200);
  const page = (await res.json()) as { files: { id: string }[] };
  return page.files[0]!.id;
}

const linkTo = (sid: string, change: string, file: string) =>
  `${base}/sessions/${encodeURIComponent(sid)}?change=${encodeURIComponent(change)}&file=${encodeURIComponent(file)}`;

test.beforeEach(async ({ page }) => {
  await page.addInitScript(() => {
    if (sessionStorage.getItem('deep-links-spec') !== null) return;
    sessionStorage.setItem('deep-links-spec', '1');
    localStorage.removeItem('rundiff.hideViewed');
    localStorage.removeItem('rundiff.fileView');
  });
});

test('a link to row 100 of a 120-file change loads the rows it needs, then opens, shows and focuses that file', async ({
  page,
}) => {
  const { ws, sid, change } = await bigRun(120);
  try {
    const fileId = await fileIdAt(sid, change, 99);
    await page.goto(linkTo(sid, change, fileId));
    const linked = row(page, change, name(99));
    await expect(linked.getByTestId('patch')).toContainText('b99');
    await expect(linked.getByTestId('change-row-button')).toBeFocused();
    await expect(linked).toBeInViewport();
    // The whole list is shown (row 100 is not in the first page), and nothing else is open.
    await expect(block(page, change).getByTestId('change-show-fewer')).toBeVisible();
    await expect(block(page, change).getByTestId('patch')).toHaveCount(1);
  } finally {
    ws.cleanup();
  }
});

test('in the tree view, a link to row 100 of a 120-file change opens, shows and focuses that file in the windowed tree', async ({
  page,
}) => {
  const { ws, sid, change } = await bigRun(120);
  try {
    const fileId = await fileIdAt(sid, change, 99);
    await page.addInitScript(() => localStorage.setItem('rundiff.fileView', 'tree'));
    await page.goto(linkTo(sid, change, fileId));
    const linked = row(page, change, name(99));
    await expect(linked.getByTestId('patch')).toContainText('b99');
    await expect(linked.getByTestId('change-row-button')).toBeFocused();
    await expect(linked).toBeInViewport();
  } finally {
    ws.cleanup();
  }
});

test('a link to a file the change does not hold says so in the block', async ({ page }) => {
  const { ws, sid, change } = await bigRun(60);
  try {
    await page.goto(linkTo(sid, change, 'no-such-file'));
    await expect(block(page, change).getByTestId('link-problem')).toHaveText(
      'The linked file (no-such-file) is not in this change.',
    );
    await expect(block(page, change).getByTestId('patch')).toHaveCount(0);
  } finally {
    ws.cleanup();
  }
});

test('a link to a viewed file opens it with Hide viewed on, and says why it is listed', async ({ page }) => {
  const { ws, sid, change } = await bigRun(3);
  try {
    const fileId = await fileIdAt(sid, change, 1);
    const mark = await fetch(`${base}/api/hermes/sessions/${sid}/viewed`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ change_id: change, file_id: fileId }),
    });
    expect(mark.status).toBe(200);
    await page.addInitScript(() => localStorage.setItem('rundiff.hideViewed', 'true'));
    await page.goto(linkTo(sid, change, fileId));
    const linked = row(page, change, name(1));
    await expect(linked.getByTestId('patch')).toContainText('b1');
    await expect(linked.getByTestId('change-row-button')).toBeFocused();
    await expect(linked).toHaveAttribute('data-viewed', 'true');
    await expect(block(page, change).getByTestId('linked-shown')).toHaveText(
      `${name(1)} is viewed: shown because the link names it.`,
    );
    await expect(block(page, change).getByTestId('hide-viewed')).toHaveAttribute('aria-pressed', 'true');
  } finally {
    ws.cleanup();
  }
});

test('close all patches takes the file out of the URL, so a reload opens nothing', async ({ page }) => {
  const { ws, sid, change } = await bigRun(3);
  try {
    await openSession(page, base, sid);
    await row(page, change, name(0)).getByTestId('change-row-button').click();
    await row(page, change, name(2)).getByTestId('change-row-button').click();
    await expect(page).toHaveURL(/[?&]file=/);
    await block(page, change).getByTestId('collapse-patches').click();
    await expect(page).not.toHaveURL(/[?&](file|change)=/);
    await page.reload();
    await expect(page.getByTestId('timeline')).toHaveAttribute('data-loaded', 'true');
    await expect(row(page, change, name(2))).toBeVisible();
    await expect(block(page, change).getByTestId('patch')).toHaveCount(0);
  } finally {
    ws.cleanup();
  }
});

test('the heading of a change with more than 50 files totals every file at once, from the server', async ({ page }) => {
  const { ws, sid, change } = await bigRun(120);
  try {
    await openSession(page, base, sid);
    // Only the first page of 50 rows is loaded, and the total still counts all 120 files.
    await expect(block(page, change).getByTestId('change-show-all')).toBeVisible();
    await expect(block(page, change).getByTestId('change-totals')).toHaveText('+120 -120');
  } finally {
    ws.cleanup();
  }
});

test('the whole list of a change with a hidden viewed file says how many it hides in its name', async ({ page }) => {
  const { ws, sid, change } = await bigRun(120);
  try {
    const fileId = await fileIdAt(sid, change, 3);
    const mark = await fetch(`${base}/api/hermes/sessions/${sid}/viewed`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ change_id: change, file_id: fileId }),
    });
    expect(mark.status).toBe(200);
    await page.addInitScript(() => localStorage.setItem('rundiff.hideViewed', 'true'));
    await openSession(page, base, sid);
    await block(page, change).getByTestId('change-show-all').click();
    await expect(block(page, change).getByRole('region')).toHaveAttribute(
      'aria-label',
      'Changed 120 files: 119 of 120 listed, 1 viewed file hidden',
    );
  } finally {
    ws.cleanup();
  }
});

test('the flat list of a change lists its files in natural order, as the tree does', async ({ page }) => {
  const { ws, sid, change } = await bigRun(
    12,
    (i) => `b${i}\n`,
    (i) => `file${i}.txt`,
  );
  try {
    await openSession(page, base, sid);
    const paths = await block(page, change)
      .getByTestId('change-row')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-path')));
    expect(paths).toEqual(Array.from({ length: 12 }, (_, i) => `file${i}.txt`));
  } finally {
    ws.cleanup();
  }
});

test('an open patch in the whole list of a large change gets a box as tall as the window', async ({ page }) => {
  const { ws, sid, change } = await bigRun(120, (i) => (i === 50 ? 'line\n'.repeat(300) : `b${i}\n`));
  try {
    await openSession(page, base, sid);
    await block(page, change).getByTestId('change-show-all').click();
    const box = block(page, change).getByTestId('virtual-viewport');
    expect((await box.boundingBox())!.height).toBeLessThanOrEqual(421);
    await row(page, change, name(50)).getByTestId('change-row-button').click();
    await expect(row(page, change, name(50)).getByTestId('patch')).toBeVisible();
    const window = page.viewportSize()!.height;
    await expect.poll(async () => (await box.boundingBox())!.height).toBeGreaterThan(window - 60);
  } finally {
    ws.cleanup();
  }
});

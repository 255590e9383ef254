import type { Page } from '@playwright/test';
import { bridge, expect, servers, test, uid, workspace } from './support.ts';

const base = servers.main;

async function openList(page: Page): Promise<void> {
  await page.goto(`${base}/`);
  await expect(page.getByTestId('sessions-page')).toHaveAttribute('data-live', 'true');
}

const rowOf = (page: Page, id: string) => page.locator(`[data-testid="session-row"][data-session-id="${id}"]`);

test('the sessions list shows title, workspace, runs and files, newest first, live, and deep-links', async ({
  page,
}) => {
  const ws = workspace({ 'a.txt': 'a\n' });
  const older = uid('older');
  const newer = uid('newer');
  try {
    await bridge(base, { type: 'session.upsert', session_id: older, title: 'Older session', workspace: ws.dir });
    await openList(page);
    await expect(rowOf(page, older)).toContainText('Older session');

    // Created while the page is open: appears live, above the older one.
    await bridge(base, { type: 'session.upsert', session_id: newer, title: 'Newer session', workspace: ws.dir });
    await bridge(base, { type: 'run.started', session_id: newer, run_id: 'r1' });
    ws.write('a.txt', 'b\n');
    await bridge(base, { type: 'run.completed', session_id: newer, run_id: 'r1' });
    const row = rowOf(page, newer);
    await expect(row.getByTestId('session-runs')).toHaveText('1 run');
    await expect(row.getByTestId('session-changed')).toHaveText('1');
    await expect(row).toContainText(ws.dir);
    const ids = await page
      .getByTestId('session-row')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-session-id')));
    expect(ids.indexOf(newer)).toBeLessThan(ids.indexOf(older));

    await row.getByTestId('session-link').click();
    await expect(page).toHaveURL(`${base}/sessions/${encodeURIComponent(newer)}`);
    await expect(page.getByTestId('session-title')).toHaveText('Newer session');
    // The URL works on its own (server-side SPA fallback).
    await page.reload();
    await expect(page.getByTestId('session-title')).toHaveText('Newer session');
    await expect(page.getByTestId('run-marker')).toHaveCount(1);
  } finally {
    ws.cleanup();
  }
});

test('B22: deleting a session asks for confirmation and removes it; other tabs see it go live', async ({
  page,
  browser,
}) => {
  const sid = uid('del');
  await bridge(base, { type: 'session.upsert', session_id: sid, title: 'To delete' });
  await bridge(base, { type: 'message', session_id: sid, role: 'user', content: 'hello', message_id: `${sid}-u` });

  const other = await browser.newPage();
  await other.goto(`${base}/sessions/${encodeURIComponent(sid)}`);
  await expect(other.getByTestId('timeline')).toHaveAttribute('data-subscribed', 'true');
  await expect(other.getByTestId('message')).toHaveCount(1);

  await openList(page);
  const second = await browser.newPage();
  await openList(second);
  await expect(rowOf(second, sid)).toHaveCount(1);

  // The list is shared with other workers' tests, whose sessions come and go above this row while
  // it is clicked (a trace showed it 170 px lower, then 214 px higher, between two clicks): a click
  // that landed after the row moved is tried again until the question is open.
  const confirm = rowOf(page, sid).getByTestId('session-delete-confirm');
  const ask = () =>
    expect(async () => {
      if (!(await confirm.isVisible())) await rowOf(page, sid).getByTestId('session-delete').click({ timeout: 2_000 });
      await expect(confirm).toBeVisible({ timeout: 1_000 });
    }).toPass({ timeout: 20_000 });
  await ask();
  const cancel = rowOf(page, sid).getByTestId('session-delete-cancel');
  await expect(async () => {
    if (await cancel.isVisible()) await cancel.click({ timeout: 2_000 });
    await expect(confirm).toHaveCount(0, { timeout: 1_000 });
  }).toPass({ timeout: 20_000 });
  await expect(rowOf(page, sid)).toHaveCount(1);
  await ask();
  await confirm.click();
  await expect(rowOf(page, sid)).toHaveCount(0);

  await expect(rowOf(second, sid)).toHaveCount(0);
  await expect(other.getByTestId('session-deleted')).toBeVisible();
  await other.goto(`${base}/sessions/${encodeURIComponent(sid)}`);
  await expect(other.getByTestId('session-not-found')).toBeVisible();
  await other.close();
  await second.close();
});

test('a session deleted by another client disappears from the list live', async ({ page }) => {
  const sid = uid('gone');
  await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Gone soon' });
  await openList(page);
  await expect(rowOf(page, sid)).toHaveCount(1);
  const res = await fetch(`${base}/api/hermes/sessions/${encodeURIComponent(sid)}`, { method: 'DELETE' });
  expect(res.status).toBe(204);
  await expect(rowOf(page, sid)).toHaveCount(0);
});

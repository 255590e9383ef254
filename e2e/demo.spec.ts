import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, ownServer, test } from './support.ts';

test('the empty sessions page plays the demo: every kind of row and run state appears live', async ({ page }) => {
  test.setTimeout(60_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-e2e-demo-'));
  const server = await ownServer(path.join(dir, 'demo.db'));
  let workspace: string | null = null;
  try {
    await page.goto(server.url);
    await expect(page.getByTestId('sessions-empty')).toBeVisible();
    await page.getByTestId('play-demo').click();
    await expect(page).toHaveURL(/\/sessions\/demo-[a-z0-9]+$/);
    const id = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    await expect(page.getByTestId('session-title')).toHaveText('Demo: a login form for the storefront');

    // The header button while it plays joins the same session instead of starting another.
    await page.getByTestId('nav-demo').click();
    await expect(page).toHaveURL(new RegExp(`/sessions/${id}$`));

    const marker = (run: string) => page.locator(`[data-testid="run-marker"][data-run-id="${run}"]`);
    await expect(marker('r4')).toHaveAttribute('data-status', 'completed', { timeout: 45_000 });
    await expect(marker('r3')).toHaveAttribute('data-status', 'failed');
    await expect(marker('r3').getByTestId('run-label')).toContainText('Run failed');
    workspace = await page.getByTestId('session-workspace').innerText();

    const r1 = page.locator('[data-testid="change-block"][data-change-id="run:r1"]');
    const letters = await r1.getByTestId('change-row-letter').allInnerTexts();
    expect([...new Set(letters)].sort()).toEqual(['A', 'D', 'M', 'R']);
    await expect(r1.getByTestId('change-row-stats').filter({ hasText: 'binary changed' })).toHaveCount(1);
    const r2 = page.locator('[data-testid="change-block"][data-change-id="run:r2"]');
    await expect(r2.getByTestId('change-more')).toBeVisible();
    await expect(r2.getByTestId('change-note').first()).toBeVisible();
    await expect(page.getByText('Changes not tracked')).toBeVisible();

    // Only one session was made.
    const list = (await (await fetch(`${server.url}/api/hermes/sessions`)).json()) as { sessions: unknown[] };
    expect(list.sessions).toHaveLength(1);
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    if (workspace) fs.rmSync(workspace, { recursive: true, force: true });
  }
});

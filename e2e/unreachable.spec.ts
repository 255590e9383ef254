import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bridge, expect, ownServer, test, uid } from './support.ts';

test('empty list, server unreachable, then back: the page says what happened and catches up', async ({ page }) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-e2e-own-'));
  const server = await ownServer(path.join(dir, 'own.db'));
  try {
    await page.goto(`${server.url}/`);
    await expect(page.getByTestId('sessions-empty')).toContainText('No sessions yet.');
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');

    await server.stop();
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'offline');
    // A client-side navigation needs the API: the page says the server cannot be reached.
    await page.evaluate(
      "history.pushState({}, '', '/sessions/some-session'); dispatchEvent(new PopStateEvent('popstate'))",
    );
    await expect(page.getByTestId('session-error')).toContainText('cannot be reached');

    await server.start();
    const sid = uid('back');
    await bridge(server.url, { type: 'session.upsert', session_id: sid, title: 'Back again' });
    await page.getByRole('link', { name: '← Sessions' }).click();
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live', { timeout: 20_000 });
    await expect(page.locator(`[data-testid="session-row"][data-session-id="${sid}"]`)).toContainText('Back again');
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

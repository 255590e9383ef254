import fs from 'node:fs';
import { bridge, expect, openSession, row, servers, serverToken, test, uid, workspace } from './support.ts';

// This server runs with RUNDIFF_TOKEN set.
const base = servers.token;

test('a token-protected server prompts for the token, then works live, with downloads through the header', async ({
  page,
}) => {
  const ws = workspace({ 'app.ts': 'export {}\n' });
  const sid = uid('s');
  const run = uid('r');
  try {
    await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Protected', workspace: ws.dir }, serverToken);
    await bridge(base, { type: 'run.started', session_id: sid, run_id: run }, serverToken);
    ws.write('app.ts', 'export const ok = true;\n');
    await bridge(base, { type: 'run.completed', session_id: sid, run_id: run }, serverToken);

    await page.goto(`${base}/`);
    const prompt = page.getByTestId('token-prompt');
    await expect(prompt).toBeVisible();
    await page.getByTestId('token-input').fill('wrong-token');
    await page.getByTestId('token-submit').click();
    await expect(page.getByTestId('token-rejected')).toBeVisible();
    await page.getByTestId('token-input').fill(serverToken);
    await page.getByTestId('token-submit').click();
    await expect(prompt).toHaveCount(0);
    await expect(page.locator(`[data-testid="session-row"][data-session-id="${sid}"]`)).toContainText('Protected');
    await expect(page.getByTestId('sessions-page')).toHaveAttribute('data-live', 'true');

    // Live through the authenticated socket.
    const later = uid('later');
    await bridge(base, { type: 'session.upsert', session_id: later, title: 'Arrived live' }, serverToken);
    await expect(page.locator(`[data-testid="session-row"][data-session-id="${later}"]`)).toContainText('Arrived live');

    // Kept for the tab: a reload does not ask again.
    await openSession(page, base, sid);
    await expect(prompt).toHaveCount(0);
    const appRow = row(page, `run:${run}`, 'app.ts');
    await appRow.getByRole('button').first().click();
    await expect(appRow.getByTestId('patch')).toContainText('+export const ok = true;');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-patch').click()]);
    const file = await download.path();
    const text = fs.readFileSync(file, 'utf8');
    expect(text).toContain('diff --git a/app.ts b/app.ts');
    expect(download.suggestedFilename()).toMatch(/\.patch$/);
  } finally {
    ws.cleanup();
  }
});

import { bridge, expect, openSession, row, servers, test, uid, workspace } from './support.ts';

// A browser global, for code inside page.evaluate (the root tsconfig has no DOM lib on purpose).
declare const alert: (message: string) => void;

const base = servers.main;

test('file names, messages and patches that look like HTML render as text', async ({ page }) => {
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  const evilName = '<img src=x onerror=alert(1)>.md';
  const ws = workspace({ 'index.html': '<p>hello</p>\n' });
  const sid = uid('s');
  const run = uid('r');
  try {
    await bridge(base, {
      type: 'session.upsert',
      session_id: sid,
      title: '<script>alert("title")</script>',
      workspace: ws.dir,
    });
    await bridge(base, {
      type: 'message',
      session_id: sid,
      role: 'user',
      content: 'Please <script>alert("user")</script> <img src=x onerror=alert(2)>',
      message_id: `${sid}-u`,
      run_id: run,
    });
    await bridge(base, { type: 'run.started', session_id: sid, run_id: run });
    ws.write(evilName, 'doc\n');
    ws.write('index.html', '<p>hello</p>\n<script>alert("patch")</script>\n');
    await bridge(base, {
      type: 'message',
      session_id: sid,
      role: 'assistant',
      content:
        'Done <script>alert("assistant")</script> and <img src=x onerror=alert(3)>\n\n[click](javascript:alert(4))',
      message_id: `${sid}-a`,
      run_id: run,
    });
    await bridge(base, { type: 'run.completed', session_id: sid, run_id: run });

    await openSession(page, base, sid);
    await expect(page.getByTestId('session-title')).toHaveText('<script>alert("title")</script>');
    await expect(page.locator(`[data-message-id="${sid}-u"]`)).toContainText('<script>alert("user")</script>');
    await expect(page.locator(`[data-message-id="${sid}-a"]`)).toContainText('<script>alert("assistant")</script>');
    const evilRow = row(page, `run:${run}`, evilName);
    await expect(evilRow.getByTestId('change-row-path')).toHaveText(evilName);

    const html = row(page, `run:${run}`, 'index.html');
    await html.getByRole('button').first().click();
    await expect(html.getByTestId('patch')).toContainText('+<script>alert("patch")</script>');

    // Nothing was injected: no image elements, no scripts besides the app's own, no dialog.
    await expect(page.locator('#app img')).toHaveCount(0);
    await expect(page.locator('#app script')).toHaveCount(0);
    await expect(page.locator('a[href^="javascript:"]')).toHaveCount(0);
    // A dialog the test opens itself: it proves the listener records dialogs, and any dialog the page
    // opened while rendering would already be listed before it.
    await page.evaluate(() => alert('control'));
    expect(dialogs).toEqual(['control']);
  } finally {
    ws.cleanup();
  }
});

import { bridge, expect, servers, test, uid, workspace } from './support.ts';

const base = servers.main;

test('the workspace filter offers the workspaces of sessions the list has not loaded, with their counts', async ({
  page,
}) => {
  const shown = workspace({ 'a.txt': 'a\n' });
  const unseen = workspace({ 'b.txt': 'b\n' });
  const word = uid('ws').replace(/[^a-z0-9]/gi, '');
  const listed = uid('listed');
  try {
    await bridge(base, { type: 'session.upsert', session_id: listed, title: `${word} listed`, workspace: shown.dir });
    await bridge(base, { type: 'session.upsert', session_id: uid('a'), title: 'Elsewhere', workspace: unseen.dir });
    await bridge(base, { type: 'session.upsert', session_id: uid('b'), title: 'Elsewhere too', workspace: unseen.dir });

    // Only the session matching the search is loaded.
    await page.goto(`${base}/?q=${word}`);
    await expect(page.getByTestId('sessions-page')).toHaveAttribute('data-live', 'true');
    await expect(page.getByTestId('session-row')).toHaveCount(1);

    const select = page.getByTestId('session-workspace-filter');
    await expect(select.locator(`option[value="${unseen.dir}"]`)).toHaveText(`${unseen.dir} (2)`);
    await expect(select.locator(`option[value="${shown.dir}"]`)).toHaveText(`${shown.dir} (1)`);

    // A workspace named by a session created while the page is open is offered too.
    const later = workspace({ 'c.txt': 'c\n' });
    try {
      await bridge(base, { type: 'session.upsert', session_id: uid('c'), title: 'Later', workspace: later.dir });
      await expect(select.locator(`option[value="${later.dir}"]`)).toHaveText(`${later.dir} (1)`);
    } finally {
      later.cleanup();
    }

    await select.selectOption(unseen.dir);
    await expect(page).toHaveURL(/workspace=/);
  } finally {
    shown.cleanup();
    unseen.cleanup();
  }
});

import { expectNoAxeViolations } from './axe.ts';
import { bridge, expect, openSession, row, servers, test, uid, workspace } from './support.ts';

const base = servers.main;
const latin1 = (s: string) => Buffer.from(s, 'latin1');

/** A run that edits a Latin-1 file (text, but not UTF-8). */
async function latin1Run() {
  const ws = workspace({ 'menu.txt': latin1('caf\xe9\nth\xe9\nsoup\n') });
  const sid = uid('s');
  const run = uid('r');
  await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Latin-1', workspace: ws.dir });
  await bridge(base, { type: 'run.started', session_id: sid, run_id: run });
  ws.write('menu.txt', latin1('caf\xe9 cr\xe8me\nth\xe9\nsoup\n'));
  await bridge(base, { type: 'run.completed', session_id: sid, run_id: run });
  return { ws, sid, changeId: `run:${run}` };
}

for (const scheme of ['light', 'dark'] as const) {
  test(`a file that is not UTF-8 opens on its whole patch with replacement characters, and says so (${scheme})`, async ({
    page,
  }) => {
    await page.emulateMedia({ colorScheme: scheme });
    const { ws, sid, changeId } = await latin1Run();
    try {
      await openSession(page, base, sid);
      const menu = row(page, changeId, 'menu.txt');
      await menu.getByTestId('change-row-button').click();
      const patch = menu.getByTestId('patch');
      // The whole patch, not the lines before the first byte that is not UTF-8.
      await expect(patch.locator('tr.pl-del')).toHaveCount(1);
      await expect(patch.locator('tr.pl-add')).toHaveCount(1);
      await expect(patch).toContainText('caf\uFFFD cr\uFFFDme');
      await expect(patch).toContainText('soup');
      await expect(menu.getByTestId('patch-not-utf8')).toContainText('not UTF-8 text');
      await expect(menu.getByTestId('patch-truncated')).toHaveCount(0);
      // Its hunks are not offered for undo one by one: the shown text is not the file's bytes.
      await expect(menu.getByTestId('hunk-undo')).toHaveCount(0);
      await expectNoAxeViolations(page, `[data-testid="change-block"][data-change-id="${changeId}"]`);
    } finally {
      ws.cleanup();
    }
  });
}

import { expectNoAxeViolations } from './axe.ts';
import { bridge, expect, openSession, servers, test, uid, workspace } from './support.ts';

const base = servers.main;

test('Blame on a file row names the run that wrote each line, outside edits and older lines, and opens the run', async ({
  page,
}) => {
  const ws = workspace({ 'a.txt': 'one\ntwo\n' });
  const sid = uid('blame');
  try {
    await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Blame me', workspace: ws.dir });
    await bridge(base, { type: 'run.started', session_id: sid, run_id: 'r1', title: 'Add three' });
    ws.write('a.txt', 'one\ntwo\nthree\n');
    await bridge(base, { type: 'run.completed', session_id: sid, run_id: 'r1' });
    ws.write('a.txt', '<b>by hand</b>\none\ntwo\nthree\n'); // between runs, and markup that must stay text
    await bridge(base, { type: 'run.started', session_id: sid, run_id: 'r2', title: 'Add four' });
    ws.write('a.txt', '<b>by hand</b>\none\ntwo\nthree\nfour\n');
    await bridge(base, { type: 'run.completed', session_id: sid, run_id: 'r2' });

    await openSession(page, base, sid);
    const row = page.getByTestId('change-row').filter({ hasText: 'a.txt' }).last();
    await row.getByTestId('change-row-button').click();
    await row.getByTestId('blame-toggle').click();
    await expect(row.getByTestId('blame-toggle')).toHaveAttribute('aria-pressed', 'true');
    const lines = row.getByTestId('blame-line');
    await expect(lines).toHaveCount(5);
    await expect(lines.evaluateAll((els) => els.map((e) => e.getAttribute('data-kind')))).resolves.toEqual([
      'outside',
      'before_runs',
      'before_runs',
      'run',
      'run',
    ]);
    await expect(lines.nth(0)).toContainText('changed outside rundiff');
    await expect(lines.nth(0).locator('code')).toHaveText('<b>by hand</b>');
    await expect(row.locator('.blame-view b')).toHaveCount(0);
    await expect(lines.nth(1)).toContainText('before any recorded run');
    await expect(lines.nth(3).getByTestId('blame-run')).toHaveText('Add three');
    await expect(lines.nth(4).getByTestId('blame-run')).toHaveText('Add four');
    await expect(lines.nth(4)).toContainText('just now');
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expectNoAxeViolations(page);
    }
    await lines.nth(3).getByTestId('blame-run').click();
    await expect(page.locator('[data-testid="run-marker"][data-run-id="r1"]').getByTestId('run-fold')).toBeFocused();
  } finally {
    ws.cleanup();
  }
});

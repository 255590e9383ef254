import { bridge, expect, openSession, servers, test, uid, workspace } from './support.ts';

const base = servers.main;

test('Session changes shows the net change of all runs, and any two runs compared, with flags', async ({ page }) => {
  const ws = workspace({ 'a.txt': 'one\n', 'b.txt': 'bee\n' });
  const sid = uid('s');
  const [r1, r2, r3] = [uid('r1'), uid('r2'), uid('r3')];
  try {
    await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Net', workspace: ws.dir });
    const runOf = async (runId: string, edit: () => void) => {
      await bridge(base, { type: 'run.started', session_id: sid, run_id: runId });
      edit();
      await bridge(base, { type: 'run.completed', session_id: sid, run_id: runId });
    };
    await runOf(r1, () => ws.write('a.txt', 'one by r1\n'));
    await runOf(r2, () => {
      ws.write('tmp.txt', 'short-lived\n');
      ws.write('b.txt', 'bee by r2\n');
    });
    await runOf(r3, () => {
      ws.rm('tmp.txt');
      ws.write('a.txt', 'one by r3\n');
    });

    await openSession(page, base, sid);
    await page.getByTestId('session-changes-link').click();
    const net = page.getByTestId('net-change');
    await expect(net.getByTestId('net-heading')).toHaveText('Changed 2 files');
    await expect(net.getByTestId('net-row-path')).toHaveText(['a.txt', 'b.txt']);
    await expect(net.getByTestId('net-row-flag')).toHaveCount(0);

    // Its patch: from before the first run to after the last.
    const a = net.locator('[data-testid="net-row"][data-path="a.txt"]');
    await a.getByTestId('net-row-button').click();
    await expect(a.locator('.patch-area')).toContainText('one by r3');
    await expect(a.locator('.patch-area')).toContainText('one');

    // Compare runs 2 and 3: a.txt was also changed by run 1, outside that range.
    await page.getByTestId('net-from').selectOption(`run:${r2}`);
    await expect(net).toHaveAttribute('data-loading', 'false');
    await expect(net.getByTestId('net-row-path')).toHaveText(['a.txt', 'b.txt']);
    await expect(net.locator('[data-testid="net-row"][data-path="a.txt"]').getByTestId('net-row-flag')).toHaveText(
      'also changed by a run outside this range',
    );
    await page.getByTestId('net-to').selectOption(`run:${r2}`);
    await expect(net.getByTestId('net-row-path')).toHaveText(['b.txt', 'tmp.txt']);
  } finally {
    ws.cleanup();
  }
});

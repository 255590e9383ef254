import { blockRows, bridge, expect, lines, openSession, row, servers, test, uid, workspace } from './support.ts';

// This server runs with RUNDIFF_MAX_CHANGED_FILES=3, RUNDIFF_MAX_FILE_PATCH_BYTES=200 and
// RUNDIFF_MAX_OPENED_PATCH_BYTES=1000.
const base = servers.limits;

test('B17/B24: binary, truncated and capped rows render as such', async ({ page }) => {
  const ws = workspace({ 'a-big.txt': lines(5), 'b-logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]) });
  const sid = uid('s');
  const run = uid('r');
  try {
    await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Limits', workspace: ws.dir });
    await bridge(base, { type: 'run.started', session_id: sid, run_id: run });
    ws.write('a-big.txt', lines(60, 'a much longer line that pushes the patch past two hundred bytes'));
    ws.write('b-logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 9, 9, 9, 9]));
    for (const name of ['c1.txt', 'd1.txt', 'd2.txt', 'd3.txt']) ws.write(name, 'x\n');
    await bridge(base, {
      type: 'message',
      session_id: sid,
      role: 'assistant',
      content: 'Changed many files.',
      message_id: `${sid}-a`,
      run_id: run,
    });
    await bridge(base, { type: 'run.completed', session_id: sid, run_id: run });

    await openSession(page, base, sid);
    const change = `run:${run}`;
    const block = page.locator(`[data-testid="change-block"][data-change-id="${change}"]`);
    await expect(block.getByTestId('change-heading')).toHaveText('Changed 6 files');
    expect(await blockRows(page, change)).toEqual([
      'M a-big.txt diff truncated',
      'M b-logo.png binary changed',
      'A c1.txt +1 -0',
    ]);
    await expect(block.getByTestId('change-more')).toHaveText('+3 more files');
    // The row bound also gets its sentence: how many paths have no row, and the setting that bounds them.
    await expect(block.getByTestId('change-note')).toHaveText([
      '3 changed paths were not stored: the change has more than the stored-row bound (RUNDIFF_MAX_CHANGED_FILES) allows',
    ]);

    const bin = row(page, change, 'b-logo.png');
    await bin.getByRole('button').first().click();
    // A binary file says its sizes before and after instead of a missing patch.
    await expect(bin.getByTestId('patch-binary')).toHaveText('binary: 8 B -> 9 B');
    await expect(bin.getByTestId('patch-unavailable')).toHaveCount(0);

    const big = row(page, change, 'a-big.txt');
    await big.getByRole('button').first().click();
    await expect(big.getByTestId('patch')).toBeVisible();
    await expect(big.getByTestId('patch-truncated')).toBeVisible();
  } finally {
    ws.cleanup();
  }
});

test('every row of a run over the change budget opens on its whole patch, the ones left out behind Load diff', async ({
  page,
}) => {
  // The main server keeps 128 KiB per patch and 512 KiB per change: six patches cut at 128 KiB
  // cannot all fit, and the budget goes to the smallest first; the others are computed from the
  // kept contents when opened.
  const names = ['big-1.txt', 'big-2.txt', 'big-3.txt', 'big-4.txt', 'big-5.txt', 'big-6.txt'];
  const ws = workspace(Object.fromEntries(names.map((n) => [n, lines(2_000)])));
  const sid = uid('s');
  const run = uid('r');
  try {
    await bridge(servers.main, { type: 'session.upsert', session_id: sid, title: 'Budget', workspace: ws.dir });
    await bridge(servers.main, { type: 'run.started', session_id: sid, run_id: run });
    for (const n of names) ws.write(n, lines(2_000, `a rewritten line of ${n}, long enough to make the patch big`));
    await bridge(servers.main, { type: 'run.completed', session_id: sid, run_id: run });

    await openSession(page, servers.main, sid);
    const change = `run:${run}`;
    const block = page.locator(`[data-testid="change-block"][data-change-id="${change}"]`);
    await expect(block.getByTestId('change-heading')).toHaveText('Changed 6 files');
    const rows = await blockRows(page, change);
    const omitted = rows.filter((r) => r.endsWith('+2000 -2000'));
    expect(omitted.length).toBeGreaterThan(0);
    expect(rows.length - omitted.length).toBeGreaterThan(0);
    await expect(block.getByTestId('change-note')).toContainText([
      "the run's patch size budget was used up; some patches were not stored",
    ]);
    for (const name of names) {
      const r = row(page, change, name);
      await r.getByRole('button').first().click();
      const left = omitted.some((o) => o.split(' ')[1] === name);
      if (left) {
        await expect(r.getByTestId('patch-large')).toHaveText(
          /^Large diff: \+2,000 -2,000 lines, computed when loaded/,
        );
        await r.getByTestId('load-diff').click();
      } else {
        await expect(r.getByTestId('load-diff')).toBeVisible();
        await r.getByTestId('load-diff').click();
      }
      await expect(r.getByTestId('patch')).toBeVisible();
      await expect(r.getByTestId('patch-unavailable')).toHaveCount(0);
      // Left out or not, the patch is whole: no truncation note, and the whole file is one click away.
      if (left) await expect(r.getByTestId('patch-truncated')).toHaveCount(0);
      await expect(r.getByTestId('whole-file-after')).toBeVisible();
      // The whole-file rewrite opens on its one hunk (its rows further down are windowed).
      await expect(r.getByTestId('patch')).toContainText('@@ -1,2000 +1,2000 @@');
      await r.getByRole('button').first().click();
    }
  } finally {
    ws.cleanup();
  }
});

import { expectNoAxeViolations } from './axe.ts';
import { bridge, expect, openSession, servers, test, uid, workspace } from './support.ts';

// What a run cost: the tokens its agent reported (and their price where it gave one), on the run's
// line in the timeline, with the figures in its title, and summed on the session's row of the
// sessions list; a run whose agent reported none shows nothing.

const base = servers.main;

test('a run shows the tokens its agent reported, the four figures in its title; a run without a report shows none', async ({
  page,
}) => {
  const ws = workspace({ 'a.txt': 'a\n' });
  try {
    const sid = uid('s');
    await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Usage', workspace: ws.dir });
    const reported = uid('r');
    await bridge(base, { type: 'run.started', session_id: sid, run_id: reported, title: 'Reported' });
    ws.write('a.txt', 'b\n');
    await bridge(base, {
      type: 'run.completed',
      session_id: sid,
      run_id: reported,
      usage: { input: 345, output: 1234, cache_read: 12_000, cache_write: 0 },
    });
    const silent = uid('r');
    await bridge(base, { type: 'run.started', session_id: sid, run_id: silent, title: 'Silent' });
    await bridge(base, { type: 'run.completed', session_id: sid, run_id: silent });

    await openSession(page, base, sid);
    const marker = (id: string) => page.locator(`[data-testid="run-marker"][data-run-id="${id}"]`);
    const usage = marker(reported).getByTestId('run-usage');
    await expect(usage).toHaveText('12.3k tokens in · 1.2k out');
    await expect(usage).toHaveAttribute(
      'title',
      'Input 345 · output 1,234 · cache read 12,000 · cache write 0 tokens, as the agent reported them',
    );
    await expect(marker(silent).getByTestId('run-title')).toHaveText('Silent');
    await expect(marker(silent).getByTestId('run-usage')).toHaveCount(0);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expectNoAxeViolations(page);
    }
  } finally {
    ws.cleanup();
  }
});

test("a priced run shows its money on its line, and the session's row in the list sums its runs", async ({ page }) => {
  const ws = workspace({ 'a.txt': 'a\n' });
  try {
    const sid = uid('s');
    await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Priced', workspace: ws.dir });
    const tokens = { input: 1000, output: 200, cache_read: 0, cache_write: 0 };
    const priced = uid('r');
    await bridge(base, { type: 'run.started', session_id: sid, run_id: priced, title: 'Priced run' });
    await bridge(base, {
      type: 'run.completed',
      session_id: sid,
      run_id: priced,
      usage: { ...tokens, cost_usd: 0.0042 },
    });
    const unpriced = uid('r');
    await bridge(base, { type: 'run.started', session_id: sid, run_id: unpriced, title: 'Unpriced run' });
    await bridge(base, { type: 'run.completed', session_id: sid, run_id: unpriced, usage: tokens });

    await openSession(page, base, sid);
    const marker = (id: string) => page.locator(`[data-testid="run-marker"][data-run-id="${id}"]`);
    await expect(marker(priced).getByTestId('run-usage')).toHaveText('1k tokens in · 200 out · $0.0042');
    await expect(marker(priced).getByTestId('run-usage')).toHaveAttribute(
      'title',
      /; \$0\.0042 as priced by the agent$/,
    );
    await expect(marker(unpriced).getByTestId('run-usage')).toHaveText('1k tokens in · 200 out');

    await page.goto(`${base}/?q=${encodeURIComponent('Priced')}`);
    const row = page.locator(`[data-testid="session-row"][data-session-id="${sid}"]`);
    await expect(row.getByTestId('session-usage')).toHaveText('2k in · 400 out · $0.0042');
    // Control: a session whose agent reported nothing says so with a dash.
    const silent = uid('s');
    await bridge(base, { type: 'session.upsert', session_id: silent, title: 'Priced silent', workspace: ws.dir });
    await expect(
      page.locator(`[data-testid="session-row"][data-session-id="${silent}"]`).getByTestId('session-usage'),
    ).toHaveText('—');
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expectNoAxeViolations(page, '[data-testid="sessions-table"]');
    }
  } finally {
    ws.cleanup();
  }
});

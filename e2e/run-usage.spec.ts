import { expectNoAxeViolations } from './axe.ts';
import { bridge, expect, openSession, servers, test, uid, workspace } from './support.ts';

// What a run cost: the tokens its agent reported, on the run's line in the timeline, with the four
// figures in its title; a run whose agent reported none shows nothing.

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

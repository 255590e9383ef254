import { bridge, expect, openSession, row, servers, test, uid, workspace } from './support.ts';

// Browser globals, for code inside page.evaluate (the root tsconfig has no DOM lib on purpose).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any, getComputedStyle: any;

const base = servers.main;

async function failedRunSession() {
  const ws = workspace({ 'src/app.ts': 'export const a = 1;\n' });
  const sid = uid('s');
  const run = uid('r');
  await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Themes', workspace: ws.dir });
  await bridge(base, { type: 'run.started', session_id: sid, run_id: run });
  ws.write(
    'src/app.ts',
    `export const a = 2;\nexport const long = '${'a-very-long-token-without-spaces-'.repeat(12)}';\n`,
  );
  await bridge(base, { type: 'run.failed', session_id: sid, run_id: run, error: 'exit 1' });
  return { ws, sid, change: `run:${run}`, run };
}

for (const scheme of ['light', 'dark'] as const) {
  test(`the ${scheme} theme follows the system colour scheme; statuses carry words`, async ({ page }) => {
    await page.emulateMedia({ colorScheme: scheme });
    const { ws, sid, change, run } = await failedRunSession();
    try {
      await openSession(page, base, sid);
      const bg = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
      expect(bg).toBe(scheme === 'dark' ? 'rgb(13, 17, 23)' : 'rgb(246, 248, 250)');
      const marker = page.locator(`[data-testid="run-marker"][data-run-id="${run}"]`);
      await expect(marker.getByTestId('run-label')).toContainText('Run failed');
      const app = row(page, change, 'src/app.ts');
      await expect(app.getByTestId('change-row-letter')).toHaveText('M');
      await expect(app.getByTestId('change-row-stats')).toHaveText('+2 -1');
      await app.getByTestId('change-row-button').click();
      const add = app.locator('tr.pl-add').first();
      await expect(add.locator('td.code')).toHaveCSS(
        'background-color',
        scheme === 'dark' ? 'rgba(46, 160, 67, 0.15)' : 'rgb(230, 255, 236)',
      );
    } finally {
      ws.cleanup();
    }
  });
}

for (const width of [400, 1280]) {
  test(`at ${width} px wide the page never scrolls sideways; a long patch line stays inside`, async ({ page }) => {
    await page.setViewportSize({ width, height: 800 });
    const { ws, sid, change } = await failedRunSession();
    try {
      await openSession(page, base, sid);
      const app = row(page, change, 'src/app.ts');
      await app.getByTestId('change-row-button').click();
      await expect(app.getByTestId('patch')).toHaveAttribute('data-rendered', 'true');
      for (const layout of ['layout-unified', 'layout-split']) {
        await app.getByTestId(layout).click();
        const overflow = await page.evaluate(
          () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
        );
        expect(overflow, layout).toBeLessThanOrEqual(0);
      }
      await page.goto(base);
      await expect(page.getByTestId('sessions-table')).toBeVisible();
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      expect(overflow).toBeLessThanOrEqual(0);
    } finally {
      ws.cleanup();
    }
  });
}

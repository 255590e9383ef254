import { expectNoAxeViolations } from './axe.ts';
import { bridge, expect, openSession, row, servers, test, uid, workspace } from './support.ts';

// Browser globals, for code inside page.evaluate (the root tsconfig has no DOM lib on purpose).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const window: any;

// A row opened in the "Show all" list of a large change stays where it was under the pointer.

const base = servers.main;
const names = Array.from({ length: 120 }, (_, i) => `src/f${String(i).padStart(3, '0')}.txt`);
const body = Array.from({ length: 40 }, (_, i) => `line ${i + 1}\n`).join('');

async function bigRun() {
  const ws = workspace(Object.fromEntries(names.map((n) => [n, body])));
  const sid = uid('s');
  const run = uid('r');
  await bridge(base, { type: 'session.upsert', session_id: sid, title: '120 files', workspace: ws.dir });
  await bridge(base, { type: 'run.started', session_id: sid, run_id: run });
  for (const n of names) ws.write(n, body.replace('line 20\n', 'line twenty\n'));
  await bridge(base, { type: 'run.completed', session_id: sid, run_id: run });
  return { ws, sid, change: `run:${run}` };
}

// The box at the top of the window, half way down, and scrolled to the end of its list (where the
// box growing for the open patch had no rows below to show and the browser pulled the rows down).
for (const at of ['top', 'middle', 'end'] as const) {
  test(`a row opened in the Show-all list stays under the pointer (${at})`, async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 900 });
    const { ws, sid, change } = await bigRun();
    try {
      await openSession(page, base, sid);
      const block = page.locator(`[data-testid="change-block"][data-change-id="${change}"]`);
      await block.getByTestId('change-show-all').click();
      const viewport = block.getByTestId('virtual-viewport');
      await expect(viewport).toHaveAttribute('aria-label', /all 120 listed/);
      // The box placed in the window: its top near the top, or half way down.
      await viewport.evaluate((el, where) => {
        const top = el.getBoundingClientRect().top + window.scrollY;
        window.scrollTo(0, where === 'middle' ? top - window.innerHeight / 2 : top - 10);
        if (where === 'end') el.scrollTop = el.scrollHeight;
      }, at);
      const target = row(page, change, names[at === 'end' ? 117 : 54]!);
      const button = target.getByTestId('change-row-button');
      await expect(button).toBeInViewport();
      const before = (await button.boundingBox())!;
      const boxBefore = (await viewport.boundingBox())!;
      await button.click();
      await expect(target.getByTestId('patch')).toHaveAttribute('data-rendered', 'true');
      // Two frames: every measurement the opened patch caused has been laid out.
      await page.evaluate(
        () => new Promise((r) => window.requestAnimationFrame(() => window.requestAnimationFrame(r))),
      );
      const after = (await button.boundingBox())!;
      expect(Math.abs(after.y - before.y), `row top moved from ${before.y} to ${after.y}`).toBeLessThanOrEqual(3);
      // The box still grows for the patch, into the rows it has below (with rows enough, to nearly
      // the window's height).
      const boxAfter = (await viewport.boundingBox())!;
      expect(boxAfter.height).toBeGreaterThan(boxBefore.height + 100);
      if (at === 'top') expect(boxAfter.height).toBeGreaterThan(800);
      // Closing it again leaves it in place too.
      await button.click();
      await expect(target.getByTestId('patch')).toHaveCount(0);
      await page.evaluate(
        () => new Promise((r) => window.requestAnimationFrame(() => window.requestAnimationFrame(r))),
      );
      const closed = (await button.boundingBox())!;
      expect(Math.abs(closed.y - before.y), `row top moved from ${before.y} to ${closed.y}`).toBeLessThanOrEqual(3);
    } finally {
      ws.cleanup();
    }
  });
}

test.describe('accessibility', () => {
  test.use({ bypassCSP: true });
  for (const scheme of ['light', 'dark'] as const) {
    test(`accessibility: a row opened in the Show-all list has no axe violations (${scheme})`, async ({ page }) => {
      await page.emulateMedia({ colorScheme: scheme });
      const { ws, sid, change } = await bigRun();
      try {
        await openSession(page, base, sid);
        const block = page.locator(`[data-testid="change-block"][data-change-id="${change}"]`);
        await block.getByTestId('change-show-all').click();
        const target = row(page, change, names[54]!);
        await target.getByTestId('change-row-button').click();
        await expect(target.getByTestId('patch')).toHaveAttribute('data-rendered', 'true');
        await expectNoAxeViolations(page);
      } finally {
        ws.cleanup();
      }
    });
  }
});

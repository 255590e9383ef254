import { expectNoAxeViolations } from './axe.ts';
import { bridge, expect, openSession, servers, test, uid, workspace } from './support.ts';
import type { Page } from '@playwright/test';

const base = servers.main;

/**
 * A session of three runs: r1 (titled) edits a.txt; r2 (named by its prompt only) writes tmp.txt and
 * b.txt; r3 (neither) removes tmp.txt and edits a.txt again.
 */
async function threeRuns() {
  const ws = workspace({ 'a.txt': 'one\n', 'b.txt': 'bee\n', 'c.txt': 'if (x) {\n  go();\n}\n' });
  const sid = uid('s');
  const [r1, r2, r3] = [uid('r1'), uid('r2'), uid('r3')];
  await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Net', workspace: ws.dir });
  const runOf = async (runId: string, edit: () => void, title?: string, prompt?: string) => {
    await bridge(base, { type: 'run.started', session_id: sid, run_id: runId, ...(title ? { title } : {}) });
    if (prompt) await bridge(base, { type: 'message', session_id: sid, run_id: runId, role: 'user', content: prompt });
    edit();
    await bridge(base, { type: 'run.completed', session_id: sid, run_id: runId });
  };
  await runOf(r1, () => ws.write('a.txt', 'one by r1\n'), 'Fix the greeting');
  await runOf(
    r2,
    () => {
      ws.write('tmp.txt', 'short-lived\n');
      ws.write('b.txt', 'bee by r2\n');
      // Only the indentation changes, and one real edit.
      ws.write('c.txt', 'if (x) {\n    go();\n}\nstop();\n');
    },
    undefined,
    'Rename the bee\nand tidy c.txt',
  );
  await runOf(r3, () => {
    ws.rm('tmp.txt');
    ws.write('a.txt', 'one by r3\n');
  });
  return { ws, sid, r1, r2, r3 };
}

const pickerNames = (page: Page, id: string) => page.getByTestId(id).locator('option').allTextContents();

test('Session changes shows the net change of all runs, and any two runs compared, with flags', async ({ page }) => {
  const { ws, sid, r2, r3 } = await threeRuns();
  try {
    await openSession(page, base, sid);
    await page.getByTestId('session-changes-link').click();
    const net = page.getByTestId('net-change');
    await expect(net.getByTestId('net-heading')).toHaveText('Changed 3 files');
    await expect(net.getByTestId('net-row-path')).toHaveText(['a.txt', 'b.txt', 'c.txt']);
    await expect(net.getByTestId('net-row-flag')).toHaveCount(0);
    await expect(page.getByTestId('net-banner')).toHaveCount(0);

    // The pickers name each run by its title, else its prompt's first line, else its number and time.
    for (const id of ['net-from', 'net-to']) {
      const names = await pickerNames(page, id);
      expect(names.map((n) => n.trim().replace(/ · .*/, ' · time'))).toEqual([
        'Fix the greeting',
        'Rename the bee',
        'Run 3 · time',
      ]);
    }

    // Its patch: from before the first run to after the last.
    const a = net.locator('[data-testid="net-row"][data-path="a.txt"]');
    await a.getByTestId('net-row-button').click();
    await expect(a.locator('.patch-area')).toContainText('one by r3');
    await expect(a.locator('.patch-area')).toContainText('one');

    // Compare runs 2 and 3: a.txt was also changed by run 1, outside that range. The banner says it
    // once for the view; the row carries a short mark.
    await page.getByTestId('net-from').selectOption(`run:${r2}`);
    await expect(page).toHaveURL(new RegExp(`from=run:${r2}&to=run:${r3}`));
    await expect(net).toHaveAttribute('data-loading', 'false');
    await expect(net.getByTestId('net-row-path')).toHaveText(['a.txt', 'b.txt', 'c.txt']);
    await expect(net.locator('[data-testid="net-row"][data-path="a.txt"]').getByTestId('net-row-flag')).toHaveText(
      'outside range',
    );
    await expect(net.getByTestId('net-row-flag')).toHaveCount(1);
    await expect(page.getByTestId('net-banner')).toHaveText([
      '1 file was also changed by runs outside this range (marked "outside range").',
    ]);
    await expect(
      net.locator('[data-testid="net-row"][data-path="a.txt"]').getByTestId('net-row-button'),
    ).toHaveAccessibleName(/also changed by a run outside this range/);
    await page.getByTestId('net-to').selectOption(`run:${r2}`);
    await expect(net.getByTestId('net-row-path')).toHaveText(['b.txt', 'c.txt', 'tmp.txt']);
  } finally {
    ws.cleanup();
  }
});

test('the compared range is in the URL: a reload, a link and back/forward show the same runs', async ({ page }) => {
  const { ws, sid, r1, r2, r3 } = await threeRuns();
  try {
    const net = page.getByTestId('net-change');
    // A link naming runs 2..2 opens on that range.
    await page.goto(`${base}/sessions/${encodeURIComponent(sid)}/changes?from=run:${r2}&to=run:${r2}`);
    await expect(page.getByTestId('net-from')).toHaveValue(`run:${r2}`);
    await expect(page.getByTestId('net-to')).toHaveValue(`run:${r2}`);
    await expect(net.getByTestId('net-row-path')).toHaveText(['b.txt', 'c.txt', 'tmp.txt']);

    await page.getByTestId('net-from').selectOption(`run:${r1}`);
    await expect(net.getByTestId('net-row-path')).toHaveText(['a.txt', 'b.txt', 'c.txt', 'tmp.txt']);
    await page.reload();
    await expect(page.getByTestId('net-from')).toHaveValue(`run:${r1}`);
    await expect(page.getByTestId('net-to')).toHaveValue(`run:${r2}`);
    await expect(net.getByTestId('net-row-path')).toHaveText(['a.txt', 'b.txt', 'c.txt', 'tmp.txt']);

    // Back returns to the range before the pick, Forward to the pick.
    await page.goBack();
    await expect(page.getByTestId('net-from')).toHaveValue(`run:${r2}`);
    await expect(net.getByTestId('net-row-path')).toHaveText(['b.txt', 'c.txt', 'tmp.txt']);
    await page.goForward();
    await expect(page.getByTestId('net-from')).toHaveValue(`run:${r1}`);
    await expect(net.getByTestId('net-row-path')).toHaveText(['a.txt', 'b.txt', 'c.txt', 'tmp.txt']);

    // A run the session does not hold falls back to the whole session.
    await page.goto(`${base}/sessions/${encodeURIComponent(sid)}/changes?from=run:nope&to=run:${r3}`);
    await expect(page.getByTestId('net-from')).toHaveValue(`run:${r1}`);
    await expect(net.getByTestId('net-heading')).toHaveText('Changed 3 files');
  } finally {
    ws.cleanup();
  }
});

test('a net patch has the split/unified toggle and Hide whitespace of a change block', async ({ page }) => {
  const { ws, sid } = await threeRuns();
  try {
    await page.goto(`${base}/sessions/${encodeURIComponent(sid)}/changes`);
    const c = page.locator('[data-testid="net-row"][data-path="c.txt"]');
    await c.getByTestId('net-row-button').click();
    const patch = c.getByTestId('patch');
    await expect(patch).toHaveAttribute('data-layout', 'unified');
    await c.getByTestId('layout-split').click();
    await expect(patch).toHaveAttribute('data-layout', 'split');
    await expect(c.getByTestId('layout-split')).toHaveAttribute('aria-pressed', 'true');
    await c.getByTestId('layout-unified').click();
    await expect(patch).toHaveAttribute('data-layout', 'unified');

    await expect(patch.locator('tr.pl-del')).toHaveCount(1);
    await expect(patch.locator('tr.pl-add')).toHaveCount(2);
    await c.getByTestId('hide-whitespace').click();
    await expect(c.getByTestId('hide-whitespace')).toHaveAttribute('aria-pressed', 'true');
    // The indentation-only line is no longer a change; the real edit still is.
    await expect(patch.locator('tr.pl-del')).toHaveCount(0);
    await expect(patch.locator('tr.pl-add')).toHaveCount(1);
    await expect(patch.locator('tr.pl-add')).toContainText('stop();');
    await c.getByTestId('hide-whitespace').click();
  } finally {
    ws.cleanup();
  }
});

test.describe('accessibility', () => {
  // axe-core is injected as a script, which the app's Content-Security-Policy rightly refuses.
  test.use({ bypassCSP: true });
  for (const scheme of ['light', 'dark'] as const) {
    test(`accessibility: the Session changes view, its banner, marks and patch tools (${scheme})`, async ({ page }) => {
      await page.emulateMedia({ colorScheme: scheme });
      const { ws, sid, r2, r3 } = await threeRuns();
      try {
        await page.goto(`${base}/sessions/${encodeURIComponent(sid)}/changes?from=run:${r2}&to=run:${r3}`);
        await expect(page.getByTestId('net-banner')).toHaveCount(1);
        await page.locator('[data-testid="net-row"][data-path="a.txt"]').getByTestId('net-row-button').click();
        await expect(page.getByTestId('patch-tools')).toBeVisible();
        await page.getByTestId('layout-split').click();
        await expectNoAxeViolations(page);
        await page.getByTestId('layout-unified').click();
        await page.getByTestId('view-tree').click();
        await expect(page.getByTestId('file-tree')).toBeVisible();
        await expectNoAxeViolations(page);
      } finally {
        ws.cleanup();
      }
    });
  }
});

test('Session changes lists its files as a folder tree too, the same choice as a change block', async ({ page }) => {
  const ws = workspace({ 'src/app.ts': 'a\n', 'src/lib/util.ts': 'b\n', 'README.md': 'c\n' });
  const sid = uid('s');
  const run = uid('r');
  try {
    await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Tree', workspace: ws.dir });
    await bridge(base, { type: 'run.started', session_id: sid, run_id: run });
    ws.write('src/app.ts', 'A\n');
    ws.write('src/lib/util.ts', 'B\n');
    ws.write('README.md', 'C\n');
    await bridge(base, { type: 'run.completed', session_id: sid, run_id: run });
    await page.goto(`${base}/sessions/${encodeURIComponent(sid)}/changes`);
    const net = page.getByTestId('net-change');
    await expect(net.getByTestId('net-row-path')).toHaveText(['README.md', 'src/app.ts', 'src/lib/util.ts']);
    await net.getByTestId('view-tree').click();
    const tree = net.getByTestId('file-tree');
    await expect(tree.getByTestId('tree-folder-name')).toHaveText(['src/', 'lib/']);
    await expect(tree.getByTestId('net-row-path')).toHaveText(['util.ts', 'app.ts', 'README.md']);
    await expect(
      tree.locator('[data-testid="tree-folder"][data-path="src"]').getByTestId('tree-folder-stats'),
    ).toHaveText('2 files +2 -2');
    // A row in the tree still says its whole path, and opens its net patch.
    const util = tree.locator('[data-testid="net-row"][data-path="src/lib/util.ts"]');
    await expect(util.getByTestId('net-row-button')).toHaveAccessibleName(/src\/lib\/util\.ts/);
    await util.getByTestId('net-row-button').click();
    await expect(util.getByTestId('patch')).toContainText('B');
    // Folding a folder hides what it holds.
    await tree.locator('[data-testid="tree-folder"][data-path="src"]').getByTestId('tree-folder-button').click();
    await expect(tree.getByTestId('net-row-path')).toHaveText(['README.md']);
    // The choice is the app's: the session's own change block opens as a tree too.
    await openSession(page, base, sid);
    await expect(page.getByTestId('change-block').getByTestId('view-tree')).toHaveAttribute('aria-pressed', 'true');
    await page.getByTestId('change-block').getByTestId('view-flat').click();
  } finally {
    ws.cleanup();
  }
});

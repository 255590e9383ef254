import fs from 'node:fs';
import zlib from 'node:zlib';
import path from 'node:path';
import { bridge, expect, lines, openSession, row, servers, test, uid, workspace } from './support.ts';
import { expectNoAxeViolations } from './axe.ts';

// Browser globals, for code inside page.evaluate (the root tsconfig has no DOM lib on purpose).
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const navigator: any, localStorage: any;
/* eslint-enable @typescript-eslint/no-explicit-any */

const base = servers.main;

/** Runs `edit` inside one recorded run of a new session; answers the session and change ids. */
async function recordRun(files: Record<string, string | Buffer>, edit: (ws: ReturnType<typeof workspace>) => void) {
  const ws = workspace(files);
  const sid = uid('s');
  const run = uid('r');
  await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Review', workspace: ws.dir });
  await bridge(base, { type: 'run.started', session_id: sid, run_id: run });
  edit(ws);
  await bridge(base, {
    type: 'message',
    session_id: sid,
    role: 'assistant',
    content: 'Done.',
    message_id: `${sid}-a`,
    run_id: run,
  });
  await bridge(base, { type: 'run.completed', session_id: sid, run_id: run });
  return { ws, sid, change: `run:${run}` };
}

test('a binary moved without a byte changed reads as a rename without changes, not a binary change', async ({
  page,
}) => {
  const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(76, 0)]);
  const { ws, sid, change } = await recordRun({ 'pic.gif': gif }, (w) =>
    fs.renameSync(path.join(w.dir, 'pic.gif'), path.join(w.dir, 'moved.gif')),
  );
  try {
    await openSession(page, base, sid);
    const moved = row(page, change, 'moved.gif');
    await expect(moved.getByTestId('change-row-stats')).toHaveText('binary unchanged');
    await moved.getByTestId('change-row-button').click();
    await expect(moved.getByTestId('patch-label')).toHaveText(['renamed from pic.gif without changes']);
    await expect(moved.getByTestId('patch-binary')).toHaveCount(0);
  } finally {
    ws.cleanup();
  }
});

test('git header lines are said in words: rename, mode, symlink; the copied patch keeps them', async ({
  page,
  context,
}) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const { ws, sid, change } = await recordRun(
    { 'src/utils/format.ts': lines(20), 'run.sh': 'echo hi\n', 'app.ts': 'let a = 1;\n' },
    (w) => {
      fs.mkdirSync(path.join(w.dir, 'src/lib'));
      fs.renameSync(path.join(w.dir, 'src/utils/format.ts'), path.join(w.dir, 'src/lib/format.ts'));
      fs.chmodSync(path.join(w.dir, 'run.sh'), 0o755);
      fs.symlinkSync('app.ts', path.join(w.dir, 'current'));
      w.write('app.ts', 'let a = 2;\n');
    },
  );
  try {
    await openSession(page, base, sid);
    const renamed = row(page, change, 'src/lib/format.ts');
    await renamed.getByTestId('change-row-button').click();
    await expect(renamed.getByTestId('patch-label')).toHaveText(['renamed from src/utils/format.ts without changes']);
    await expect(renamed.locator('tr')).toHaveCount(0);

    const script = row(page, change, 'run.sh');
    await script.getByTestId('change-row-button').click();
    await expect(script.getByTestId('patch-label')).toHaveText(['mode 644 -> 755']);

    const link = row(page, change, 'current');
    await link.getByTestId('change-row-button').click();
    await expect(link.getByTestId('patch-label')).toHaveText(['symlink -> app.ts']);

    // An ordinary edit: no labels, and none of git's header lines in the view...
    const app = row(page, change, 'app.ts');
    await app.getByTestId('change-row-button').click();
    const patch = app.getByTestId('patch');
    await expect(patch.locator('tr.pl-add')).toContainText(['let a = 2;']);
    await expect(app.getByTestId('patch-labels')).toHaveCount(0);
    for (const header of ['diff --git', 'index ', '--- a/app.ts', '+++ b/app.ts']) {
      await expect(patch.getByText(header, { exact: false })).toHaveCount(0);
    }
    // ...while the copied patch is the stored one, headers included (the positive control).
    await app.getByTestId('copy-patch').click();
    await expect(app.getByTestId('copy-status')).toHaveText('Copied patch');
    const copied = (await page.evaluate(() => navigator.clipboard.readText())) as string;
    expect(copied).toContain('diff --git a/app.ts b/app.ts');
    expect(copied).toContain('+++ b/app.ts');

    // The change type is spelled out for screen readers in the row's accessible name.
    await expect(renamed.getByTestId('change-row-button')).toHaveAccessibleName(
      /^renamed src\/utils\/format\.ts -> src\/lib\/format\.ts/,
    );
  } finally {
    ws.cleanup();
  }
});

test('a change block folds away and back, and closes all its open patches at once', async ({ page }) => {
  const { ws, sid, change } = await recordRun({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, (w) => {
    w.write('a.txt', 'a2\n');
    w.write('b.txt', 'b2\n');
  });
  try {
    await openSession(page, base, sid);
    const block = page.locator(`[data-testid="change-block"][data-change-id="${change}"]`);
    // One at a time: the first patch opening moves the second row, so its click waits for that.
    for (const p of ['a.txt', 'b.txt']) {
      await row(page, change, p).getByTestId('change-row-button').click();
      await expect(row(page, change, p).getByTestId('patch')).toBeVisible();
    }
    await expect(block.getByTestId('patch')).toHaveCount(2);
    await block.getByTestId('collapse-patches').click();
    await expect(block.getByTestId('patch')).toHaveCount(0);
    await expect(block.getByTestId('change-row')).toHaveCount(2);
    await expect(block.getByTestId('collapse-patches')).toHaveCount(0);

    const fold = block.getByTestId('change-collapse');
    await expect(fold).toHaveAttribute('aria-expanded', 'true');
    await fold.click();
    await expect(fold).toHaveAttribute('aria-expanded', 'false');
    await expect(block.getByTestId('change-row')).toHaveCount(0);
    // The heading and its count stay visible while the list is folded.
    await expect(block.getByTestId('change-heading')).toHaveText('Changed 2 files');
    await fold.click();
    await expect(block.getByTestId('change-row')).toHaveCount(2);
  } finally {
    ws.cleanup();
  }
});

test('hide whitespace: a re-indent reads as unchanged, a real edit stays, the choice is remembered', async ({
  page,
}) => {
  const before = ['function f() {', 'if (a) {', 'return 1;', '}', '}', ...lines(30).split('\n').slice(0, 30), 'tail'];
  const after = [
    'function f() {',
    '  if (a) {',
    '    return 2;',
    '  }',
    '}',
    ...lines(30).split('\n').slice(0, 30),
    'tail  ',
  ];
  const { ws, sid, change } = await recordRun({ 'src/f.ts': before.join('\n') + '\n' }, (w) =>
    w.write('src/f.ts', after.join('\n') + '\n'),
  );
  try {
    await openSession(page, base, sid);
    const file = row(page, change, 'src/f.ts');
    await file.getByTestId('change-row-button').click();
    const patch = file.getByTestId('patch');
    // As stored: both hunks, every re-indented line removed and added.
    await expect(patch.locator('tr.pl-del')).toHaveCount(4);
    await expect(patch.locator('tr.pl-hunk')).toHaveCount(2);

    const toggle = file.getByTestId('hide-whitespace');
    await expect(toggle).toHaveAttribute('aria-pressed', 'false');
    await toggle.click();
    await expect(toggle).toHaveAttribute('aria-pressed', 'true');
    await expect(patch.locator('tr.pl-del')).toHaveCount(1);
    await expect(patch.locator('tr.pl-del')).toContainText('return 1;');
    await expect(patch.locator('tr.pl-add')).toHaveCount(1);
    await expect(patch.locator('tr.pl-add')).toContainText('return 2;');
    // The re-indented lines read as unchanged lines numbered on both sides, in their new form.
    await expect(patch.locator('tr.pl-context', { hasText: '  if (a) {' })).toHaveCount(1);
    // The last hunk only added trailing spaces: it is left out, and that is said.
    await expect(patch.locator('tr.pl-hunk')).toHaveCount(1);
    await expect(file.getByTestId('patch-whitespace-hidden')).toHaveText('1 hunk that only changed whitespace hidden');
    // The server computed it from the stored sides (the viewer hides whitespace itself only until then).
    await expect(patch).toHaveAttribute('data-whitespace', 'server');

    await page.reload();
    await expect(page.getByTestId('timeline')).toHaveAttribute('data-loaded', 'true');
    // The URL links the open file: the reload opens it again.
    await expect(file.getByTestId('hide-whitespace')).toHaveAttribute('aria-pressed', 'true');
    await expect(file.getByTestId('patch').locator('tr.pl-del')).toHaveCount(1);
    await file.getByTestId('hide-whitespace').click();
    await expect(file.getByTestId('patch').locator('tr.pl-del')).toHaveCount(4);
  } finally {
    ws.cleanup();
  }
});

test('hide whitespace on a file that only changed whitespace says so once', async ({ page }) => {
  const { ws, sid, change } = await recordRun({ 'src/w.ts': 'if (a) {\nreturn 1;\n}\n' }, (w) =>
    w.write('src/w.ts', 'if (a) {\n  return 1;\n}\n'),
  );
  try {
    await openSession(page, base, sid);
    const file = row(page, change, 'src/w.ts');
    await file.getByTestId('change-row-button').click();
    await expect(file.getByTestId('patch').locator('tr.pl-del')).toHaveCount(1);
    await file.getByTestId('hide-whitespace').click();
    await expect(file.getByTestId('patch')).toHaveAttribute('data-whitespace', 'server');
    await expect(file.getByTestId('patch-whitespace-hidden')).toHaveText(['Only whitespace changed']);
    // Not a second box saying the same in other words: the stored patch did change content lines.
    await expect(file.getByTestId('patch-labels')).toHaveCount(0);
    await expect(file.getByText('no content changes')).toHaveCount(0);
  } finally {
    ws.cleanup();
  }
});

test('tree view: folders in natural order with totals, fold and unfold, compact renames, remembered', async ({
  page,
}) => {
  const { ws, sid, change } = await recordRun(
    {
      'src/utils/format.ts': lines(20),
      'src/old-name.ts': lines(20, 'row'),
      'src/f10.ts': 'a\n',
      'src/f2.ts': 'a\n',
      'README.md': 'x\n',
    },
    (w) => {
      fs.mkdirSync(path.join(w.dir, 'src/lib'));
      fs.renameSync(path.join(w.dir, 'src/utils/format.ts'), path.join(w.dir, 'src/lib/format.ts'));
      fs.renameSync(path.join(w.dir, 'src/old-name.ts'), path.join(w.dir, 'src/new-name.ts'));
      w.write('src/f10.ts', 'b\nc\n');
      w.write('src/f2.ts', 'b\n');
      w.write('README.md', 'y\n');
    },
  );
  try {
    await openSession(page, base, sid);
    const block = page.locator(`[data-testid="change-block"][data-change-id="${change}"]`);
    // The run's total over all its files.
    await expect(block.getByTestId('change-totals')).toHaveText('+4 -3');
    await block.getByTestId('view-tree').click();
    await expect(block.getByTestId('view-tree')).toHaveAttribute('aria-pressed', 'true');
    const tree = block.getByTestId('file-tree');
    // What a sighted reader sees on each line (the screen-reader-only words left out).
    const shown = () =>
      tree.locator(':scope > li').evaluateAll(
        (
          els: {
            cloneNode(deep: boolean): { querySelectorAll(s: string): { remove(): void }[]; textContent: string };
          }[],
        ) =>
          els.map((e) => {
            const copy = e.cloneNode(true);
            for (const hidden of copy.querySelectorAll('.sr-only')) hidden.remove();
            for (const box of copy.querySelectorAll('.viewed-toggle')) box.remove();
            return copy.textContent.replace(/\s+/g, ' ').trim();
          }),
      );
    // A rename reads relative to its folders: the names alone within one folder, and a move from
    // the deepest folder shown that holds both paths (src/), not the whole path again.
    expect(await shown()).toEqual([
      '▾src/4 files +3 -2',
      '▾lib/1 file +0 -0',
      '▸R{utils -> lib}/format.ts+0 -0',
      '▸Mf2.ts+1 -1',
      '▸Mf10.ts+2 -1',
      '▸R{old-name.ts -> new-name.ts}+0 -0',
      '▸MREADME.md+1 -1',
    ]);
    // A row of the tree opens its patch like a row of the flat list.
    await row(page, change, 'src/f10.ts').getByTestId('change-row-button').click();
    await expect(row(page, change, 'src/f10.ts').getByTestId('patch')).toContainText('c');
    // Folding a folder hides what is under it and keeps its totals.
    const src = tree.locator('[data-testid="tree-folder"][data-path="src"]').getByTestId('tree-folder-button');
    await src.click();
    await expect(src).toHaveAttribute('aria-expanded', 'false');
    expect(await shown()).toEqual(['▸src/4 files +3 -2', '▸MREADME.md+1 -1']);
    await src.click();
    await expect(tree.getByTestId('change-row')).toHaveCount(5);

    // The choice is remembered; Flat brings the full paths back.
    await page.reload();
    await expect(page.getByTestId('timeline')).toHaveAttribute('data-loaded', 'true');
    await expect(block.getByTestId('file-tree')).toBeVisible();
    await block.getByTestId('view-flat').click();
    await expect(block.getByTestId('file-tree')).toHaveCount(0);
    await expect(row(page, change, 'src/lib/format.ts').getByTestId('change-row-path')).toHaveText(
      'src/utils/format.ts -> src/lib/format.ts',
    );
  } finally {
    ws.cleanup();
  }
});

test('tree view of a paged change: the tree of the rows loaded so far, then all of them on request', async ({
  page,
}) => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 260; i++) files[`pkg${i % 3}/file${i}.txt`] = 'old\n';
  const { ws, sid, change } = await recordRun(files, (w) => {
    for (let i = 0; i < 260; i++) w.write(`pkg${i % 3}/file${i}.txt`, 'new\n');
  });
  try {
    await page.addInitScript(() => localStorage.setItem('rundiff.fileView', 'tree'));
    await openSession(page, base, sid);
    const block = page.locator(`[data-testid="change-block"][data-change-id="${change}"]`);
    await expect(block.getByTestId('tree-partial')).toContainText('The tree holds the 50 of 260 files loaded so far.');
    // Not every row is loaded yet, and the heading totals them all (the server's totals).
    await expect(block.getByTestId('change-totals')).toHaveText('+260 -260');
    await block.getByTestId('tree-load-all').click();
    await expect(block.getByTestId('tree-partial')).toHaveCount(0);
    await expect(block.getByTestId('change-totals')).toHaveText('+260 -260');
    // The folders' totals count every file; the list itself is windowed.
    const folders = block.getByTestId('tree-folder');
    await expect(folders.first()).toContainText('pkg0/');
    await expect(folders.first()).toContainText('87 files +87 -87');
    expect(await block.getByTestId('change-row').count()).toBeLessThan(100);
  } finally {
    ws.cleanup();
  }
});

test.describe('accessibility', () => {
  // axe-core is injected as a script, which the app's Content-Security-Policy rightly refuses.
  test.use({ bypassCSP: true });
  for (const scheme of ['light', 'dark'] as const) {
    test(`accessibility: a session with an open patch, its tree and a large diff has no axe violations (${scheme})`, async ({
      page,
    }) => {
      await page.emulateMedia({ colorScheme: scheme });
      const { ws, sid, change } = await recordRun(
        { 'src/app.ts': 'export const a = 1;\n', 'run.sh': 'echo\n', 'big.txt': 'x\n' },
        (w) => {
          w.write('src/app.ts', 'export const a = 2;\nexport function f() {\n  return a;\n}\n');
          fs.chmodSync(path.join(w.dir, 'run.sh'), 0o755);
          w.write('big.txt', lines(1_200));
        },
      );
      try {
        await openSession(page, base, sid);
        const app = row(page, change, 'src/app.ts');
        await app.getByTestId('change-row-button').click();
        await expect(app.getByTestId('patch')).toHaveAttribute('data-highlighted', 'true');
        await row(page, change, 'run.sh').getByTestId('change-row-button').click();
        await row(page, change, 'big.txt').getByTestId('change-row-button').click();
        await expect(row(page, change, 'big.txt').getByTestId('load-diff')).toBeVisible();
        await expectNoAxeViolations(page);
        // The split layout, whitespace hidden and the tree view, checked too.
        await app.getByTestId('layout-split').click();
        await app.getByTestId('hide-whitespace').click();
        await page.locator(`[data-change-id="${change}"]`).getByTestId('view-tree').click();
        await expect(page.locator(`[data-change-id="${change}"]`).getByTestId('file-tree')).toBeVisible();
        await expectNoAxeViolations(page);
      } finally {
        ws.cleanup();
      }
    });
  }
});

test('deep link: opening a file puts it in the URL, and that URL opens the session at that file', async ({ page }) => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 40; i++) files[`src/f${String(i).padStart(2, '0')}.ts`] = 'a\n';
  const { ws, sid, change } = await recordRun(files, (w) => {
    for (let i = 0; i < 40; i++) w.write(`src/f${String(i).padStart(2, '0')}.ts`, `b${i}\n`);
  });
  try {
    await openSession(page, base, sid);
    const target = row(page, change, 'src/f37.ts');
    await target.getByTestId('change-row-button').click();
    const fileId = await target.getAttribute('data-file-id');
    await expect(page).toHaveURL(new RegExp(`[?&]file=${fileId}`));
    const url = page.url();
    expect(new URL(url).searchParams.get('change')).toBe(change);
    // Closing the file takes it out of the URL again.
    await target.getByTestId('change-row-button').click();
    await expect(page).not.toHaveURL(/[?&]file=/);

    // A fresh page on the link: that file is open, in view and focused.
    const other = await page.context().newPage();
    await other.goto(url);
    const linked = row(other, change, 'src/f37.ts');
    await expect(linked.getByTestId('patch')).toContainText('b37');
    await expect(linked.getByTestId('change-row-button')).toBeFocused();
    await expect(linked).toBeInViewport();
    await expect(row(other, change, 'src/f00.ts').getByTestId('patch')).toHaveCount(0);
    await other.close();
  } finally {
    ws.cleanup();
  }
});

test('wider layout: at 1280 px an 80-character line (Prettier default) fits one side of the split view; a phone breaks paths at slashes', async ({
  page,
}) => {
  const long = `export const ${'x'.repeat(47)} = 'a longer value';`;
  expect(long).toHaveLength(80);
  const { ws, sid, change } = await recordRun({ 'src/components/deeply/nested/folder/app.ts': 'a\n' }, (w) =>
    w.write('src/components/deeply/nested/folder/app.ts', `${long}\n`),
  );
  try {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.addInitScript(() => localStorage.setItem('rundiff.patchLayout', 'split'));
    await openSession(page, base, sid);
    const file = row(page, change, 'src/components/deeply/nested/folder/app.ts');
    await file.getByTestId('change-row-button').click();
    const added = file.locator('td.side-new.pl-add');
    await expect(added).toContainText('a longer value');
    // The lines the added code takes: the distinct tops of its text's boxes (a row's cells all share
    // the row's height, so the cell's own height cannot tell).
    const linesTaken = () =>
      added.evaluate(
        (td: {
          querySelectorAll(s: string): Iterable<{ getClientRects(): Iterable<{ top: number; width: number }> }>;
        }) => {
          const tops = new Set<number>();
          for (const span of td.querySelectorAll('span:not(.sign)'))
            for (const r of span.getClientRects()) if (r.width > 0) tops.add(Math.round(r.top));
          return tops.size;
        },
      );
    expect(await linesTaken()).toBe(1);
    // Positive control: on a narrower window the same line wraps.
    await page.setViewportSize({ width: 900, height: 800 });
    await expect.poll(linesTaken).toBeGreaterThan(1);

    // On a phone the path wraps at its slashes, not inside a folder name.
    await page.setViewportSize({ width: 360, height: 740 });
    const path = file.getByTestId('change-row-path');
    const shape = await path.evaluate((el: { getBoundingClientRect(): { height: number }; textContent: string }) => ({
      height: el.getBoundingClientRect().height,
      text: el.textContent,
    }));
    expect(shape.text).toBe('src/components/deeply/nested/folder/app.ts');
    // More than one line high: it wrapped (one line of 12.5 px text is under 20 px).
    expect(shape.height).toBeGreaterThan(25);
    expect(await path.locator('wbr').count()).toBe(5);
  } finally {
    ws.cleanup();
  }
});

test('context above and below a hunk and the whole file come from the stored contents', async ({ page }) => {
  const { ws, sid, change } = await recordRun({ 'a.txt': lines(40) }, (w) =>
    w.write('a.txt', lines(40).replace('line 30\n', 'line thirty\n')),
  );
  try {
    await openSession(page, base, sid);
    const asked = page.waitForResponse((r) => /\/files\/[^/]+\/content\?side=after$/.test(r.url()));
    const file = row(page, change, 'a.txt');
    await file.getByTestId('change-row-button').click();
    // The viewer asks once for the file as the change recorded it; the server keeps it.
    expect((await asked).status()).toBe(200);
    const patch = file.getByTestId('patch');
    await expect(patch.locator('tr.pl-add')).toContainText('line thirty');
    await expect(patch.getByText('line 40', { exact: true })).toHaveCount(0);
    await patch.getByTestId('patch-expand-below').click();
    await expect(patch.getByText('line 40', { exact: true })).toHaveCount(1);
    await expect(patch.getByText('line 2', { exact: true })).toHaveCount(0);
    await file.getByTestId('whole-file-after').click();
    await expect(patch.getByText('line 2', { exact: true })).toHaveCount(1);
  } finally {
    ws.cleanup();
  }
});

test('whole file: both sides of a modified file, changed lines marked, real old and new numbers', async ({ page }) => {
  // 60 lines; five inserted after line 10, line 30 removed: old line 51 is new line 55.
  const before = lines(60);
  const inserted = Array.from({ length: 5 }, (_, k) => `inserted ${k + 1}\n`).join('');
  const after = before.replace('line 10\n', `line 10\n${inserted}`).replace('line 30\n', '');
  const { ws, sid, change } = await recordRun({ 'a.txt': before }, (w) => w.write('a.txt', after));
  try {
    await openSession(page, base, sid);
    const file = row(page, change, 'a.txt');
    await file.getByTestId('change-row-button').click();
    const patch = file.getByTestId('patch');
    await expect(patch.locator('tr.pl-add').first()).toBeVisible();
    /** The old number, the new number and the text of the row holding `text`. */
    const numbers = async (text: string) => {
      const tr = patch.locator('tr', { has: page.getByText(text, { exact: true }) });
      return [
        (await tr.locator('td.ln-old').textContent())!.trim(),
        (await tr.locator('td.ln-new').textContent())!.trim(),
      ];
    };

    await file.getByTestId('whole-file-after').click();
    await expect(file.getByTestId('whole-file-after')).toHaveAttribute('aria-pressed', 'true');
    await expect(patch.locator('tr[data-testid="patch-line"]')).toHaveCount(64);
    // The inserted lines read as added, with no old number; the others keep both of theirs.
    await expect(patch.locator('tr.pl-add')).toHaveCount(5);
    await expect(patch.locator('tr.pl-add')).toContainText([
      'inserted 1',
      'inserted 2',
      'inserted 3',
      'inserted 4',
      'inserted 5',
    ]);
    expect(await numbers('inserted 1')).toEqual(['', '11']);
    expect(await numbers('line 10')).toEqual(['10', '10']);
    expect(await numbers('line 11')).toEqual(['11', '16']);
    expect(await numbers('line 51')).toEqual(['51', '55']);
    await expect(patch.getByText('line 30', { exact: true })).toHaveCount(0);
    await expect(patch.locator('tr.pl-hunk')).toHaveCount(0);

    // The before side: the removed line marked, no inserted line, both numbers again.
    await file.getByTestId('whole-file-before').click();
    await expect(file.getByTestId('whole-file-before')).toHaveAttribute('aria-pressed', 'true');
    await expect(file.getByTestId('whole-file-after')).toHaveAttribute('aria-pressed', 'false');
    await expect(patch.locator('tr[data-testid="patch-line"]')).toHaveCount(60);
    await expect(patch.locator('tr.pl-del')).toHaveCount(1);
    await expect(patch.locator('tr.pl-add')).toHaveCount(0);
    expect(await numbers('line 30')).toEqual(['30', '']);
    expect(await numbers('line 51')).toEqual(['51', '55']);
    await expect(patch.getByText('inserted 1', { exact: true })).toHaveCount(0);

    // Pressed again: back to the patch.
    await file.getByTestId('whole-file-before').click();
    await expect(patch.locator('tr.pl-hunk')).not.toHaveCount(0);
  } finally {
    ws.cleanup();
  }
});

/** What the test reads of an <img> (the root tsconfig has no DOM lib). */
interface ImageLike {
  naturalWidth: number;
  naturalHeight: number;
}

/** A w x h PNG of one colour (RGB), encoded here so the test needs no image files. */
function png(w: number, h: number, rgb: [number, number, number]): Buffer {
  const table = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer) => {
    let c = 0xffffffff;
    for (const x of b) c = table[(c ^ x) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), body.length + 4);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: w }, () => rgb).flat())]);
  const raw = Buffer.concat(Array.from({ length: h }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

test('a changed image shows its before and after from the stored contents; an added one has no before', async ({
  page,
}) => {
  const { ws, sid, change } = await recordRun({ 'logo.png': png(3, 2, [200, 0, 0]) }, (w) => {
    w.write('logo.png', png(5, 4, [0, 0, 200]));
    w.write('icons/new.png', png(2, 2, [0, 150, 0]));
  });
  try {
    await openSession(page, base, sid);
    const logo = row(page, change, 'logo.png');
    await logo.getByTestId('change-row-button').click();
    const before = logo.getByTestId('image-before');
    const after = logo.getByTestId('image-after');
    await expect(before).toBeVisible();
    await expect(after).toBeVisible();
    // Really decoded images of the recorded sizes, not placeholders.
    expect(await before.evaluate((img: ImageLike) => [img.naturalWidth, img.naturalHeight])).toEqual([3, 2]);
    expect(await after.evaluate((img: ImageLike) => [img.naturalWidth, img.naturalHeight])).toEqual([5, 4]);
    await expect(before).toHaveAttribute('alt', 'logo.png, before the change');
    const added = row(page, change, 'icons/new.png');
    await added.getByTestId('change-row-button').click();
    await expect(added.getByTestId('image-before-none')).toHaveText('New image');
    expect(await added.getByTestId('image-after').evaluate((img: ImageLike) => img.naturalWidth)).toBe(2);
  } finally {
    ws.cleanup();
  }
});

test('an image side without a picture says why; a tiny image is drawn larger with its real size stated', async ({
  page,
}) => {
  // An 8x8 two-colour GIF.
  const gif = Buffer.from(
    'R0lGODlhCAAIAIAAAP8AAAAA/ywAAAAACAAIAAACMQRDMARDMAzBEAzBEARDMARDMAzBEAzBEARDMARDMAzBEAzBEARDMARDMAzBEAzBEAUAOw==',
    'base64',
  );
  const noise = (seed: number) => Buffer.from(Array.from({ length: 256 }, (_, i) => (i * 37 + seed * 101 + 7) % 251));
  const { ws, sid, change } = await recordRun(
    { 'gone.png': png(4, 4, [0, 0, 0]), 'noise.png': noise(1), 'icon.gif': png(2, 2, [1, 2, 3]) },
    (w) => {
      fs.rmSync(path.join(w.dir, 'gone.png'));
      w.write('noise.png', noise(2));
      w.write('icon.gif', gif);
    },
  );
  try {
    await openSession(page, base, sid);
    const gone = row(page, change, 'gone.png');
    await gone.getByTestId('change-row-button').click();
    await expect(gone.getByTestId('image-before')).toBeVisible();
    await expect(gone.getByTestId('image-after-none')).toHaveText('Deleted');

    // Bytes stored on both sides, but not an image: said so, not "not kept".
    const noisy = row(page, change, 'noise.png');
    await noisy.getByTestId('change-row-button').click();
    await expect(noisy.getByTestId('image-before-none')).toHaveText('Not a previewable image');
    await expect(noisy.getByTestId('image-after-none')).toHaveText('Not a previewable image');

    // 8x8 px drawn at 64 px with sharp pixels; the caption keeps the real size.
    const icon = row(page, change, 'icon.gif');
    await icon.getByTestId('change-row-button').click();
    const img = icon.getByTestId('image-after');
    await expect(icon.getByTestId('image-after-size')).toHaveText('· 8 × 8 px, shown at 8×');
    expect(await img.evaluate((el: ImageLike) => [el.naturalWidth, el.naturalHeight])).toEqual([8, 8]);
    const drawn = await img.evaluate((el: { getBoundingClientRect(): { width: number; height: number } }) =>
      el.getBoundingClientRect(),
    );
    expect([drawn.width, drawn.height]).toEqual([64, 64]);
    await expect(img).toHaveCSS('image-rendering', 'pixelated');
  } finally {
    ws.cleanup();
  }
});

test("an open file's line stays on screen while its long patch scrolls past, and never covers the focused line", async ({
  page,
}) => {
  const { ws, sid, change } = await recordRun({ 'keep.txt': 'a\n' }, (w) => w.write('src/long.ts', lines(4_000)));
  try {
    await page.setViewportSize({ width: 1280, height: 800 });
    await openSession(page, base, sid);
    const file = row(page, change, 'src/long.ts');
    await file.getByTestId('change-row-button').click();
    await file.getByTestId('load-diff').click();
    const patch = file.getByTestId('patch');
    await expect(patch).toHaveAttribute('data-rendered', 'true');
    const header = file.locator('.change-row-line');
    type Box = { getBoundingClientRect(): { top: number; bottom: number } };
    const box = (el: Box) => {
      const r = el.getBoundingClientRect();
      return { top: r.top, bottom: r.bottom };
    };

    // Far down the patch: the file's line (path, counts, Viewed) is still at the top of the window.
    await page.evaluate(() => (globalThis as unknown as { scrollBy(x: number, y: number): void }).scrollBy(0, 30_000));
    await expect(patch).not.toHaveAttribute('data-window', '0-2');
    const stuck = await header.evaluate(box);
    expect(Math.abs(stuck.top)).toBeLessThan(1);
    await expect(file.getByTestId('change-row-path')).toBeInViewport();
    await expect(file.getByTestId('viewed-toggle')).toBeInViewport();

    // Moving up line by line from the keyboard scrolls each line to just below the header, not under it.
    const visible = patch.locator('button.cgut').nth(30);
    await visible.focus();
    for (let i = 0; i < 40; i++) await page.keyboard.press('ArrowUp');
    const focused = page.locator('button.cgut:focus');
    await expect(focused).toHaveCount(1);
    const at = await focused.evaluate(box);
    const head = await header.evaluate(box);
    expect(head.top).toBeGreaterThanOrEqual(-1);
    expect(at.top).toBeGreaterThanOrEqual(head.bottom - 1);

    // Closed, the line scrolls with the page again (only an open file's line sticks).
    await file.getByTestId('change-row-button').click();
    await expect(patch).toHaveCount(0);
    await expect(file).not.toHaveClass(/is-open/);
  } finally {
    ws.cleanup();
  }
});

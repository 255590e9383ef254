import fs from 'node:fs';
import path from 'node:path';
import { expectNoAxeViolations } from './axe.ts';
import { bridge, expect, openSession, row, servers, test, uid, workspace } from './support.ts';

const base = servers.main;

/** One run that edits a file, adds one and (for the XSS check) writes markup as file text. */
async function sessionWithRun() {
  const ws = workspace({ 'a.txt': 'one\ntwo\n', 'page.html': '<p>plain</p>\n' });
  const sid = uid('s');
  const r1 = uid('r1');
  await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Undo me', workspace: ws.dir });
  await bridge(base, { type: 'run.started', session_id: sid, run_id: r1 });
  ws.write('a.txt', 'one\nTWO\n');
  ws.write('new.txt', 'made by the run\n');
  ws.write('page.html', '<img src=x onerror="window.__pwned=1">\n');
  await bridge(base, { type: 'run.completed', session_id: sid, run_id: r1 });
  return { ws, sid, changeId: `run:${r1}` };
}

const block = (page: import('@playwright/test').Page, changeId: string) =>
  page.locator(`[data-testid="change-block"][data-change-id="${changeId}"]`);

test('preview then revert a whole run from the timeline; the revert shows as its own run', async ({ page }) => {
  const { ws, sid, changeId } = await sessionWithRun();
  try {
    await openSession(page, base, sid);
    const b = block(page, changeId);
    // The block's own Revert (the first; each expanded row has one too).
    const revert = b.getByTestId('revert').first();
    await revert.getByTestId('revert-button').click();
    const preview = revert.getByTestId('revert-preview');
    await expect(preview.getByTestId('revert-summary')).toHaveText('3 of 3 files will be written');
    const a = preview.locator('[data-testid="revert-file"]', { hasText: 'a.txt' });
    await expect(a.getByTestId('revert-file-action')).toHaveText('will be restored');
    await expect(a.getByTestId('revert-patch')).toContainText('-TWO');
    await expect(a.getByTestId('revert-patch')).toContainText('+two');
    // File text is shown as text: the markup is visible, never an element.
    const html = preview.locator('[data-testid="revert-file"]', { hasText: 'page.html' });
    await expect(html.getByTestId('revert-patch')).toContainText('-<img src=x onerror="window.__pwned=1">');
    expect(await preview.locator('img').count()).toBe(0);
    // A preview writes nothing.
    expect(fs.readFileSync(path.join(ws.dir, 'a.txt'), 'utf8')).toBe('one\nTWO\n');

    await revert.getByTestId('revert-apply').click();
    await expect(preview.getByTestId('revert-summary')).toHaveText('Reverted 3 of 3 files');
    expect(fs.readFileSync(path.join(ws.dir, 'a.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(fs.existsSync(path.join(ws.dir, 'new.txt'))).toBe(false);
    expect(fs.readFileSync(path.join(ws.dir, 'page.html'), 'utf8')).toBe('<p>plain</p>\n');
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();

    // The revert is recorded live as a run of its own with its change.
    const revertRun = page.locator('[data-testid="timeline"] > li[data-key^="run:revert-"]');
    await expect(revertRun).toHaveCount(1);
    await expect(revertRun).toContainText('revert');
    const revertBlock = page.locator('[data-testid="change-block"][data-source="revert"]');
    await expect(revertBlock).toHaveCount(1);
    await expect(revertBlock.getByTestId('change-heading')).toHaveText('Changed 3 files');
  } finally {
    ws.cleanup();
  }
});

test('revert one file from its row; a later edit on the same lines is refused and shown', async ({ page }) => {
  const { ws, sid, changeId } = await sessionWithRun();
  try {
    ws.write('a.txt', 'one\nTwo by hand\n');
    await openSession(page, base, sid);
    const a = row(page, changeId, 'a.txt');
    await a.getByTestId('change-row-button').click();
    const revert = a.getByTestId('revert');
    await revert.getByTestId('revert-button').click();
    const file = revert.getByTestId('revert-file');
    await expect(file).toHaveCount(1);
    await expect(file).toHaveAttribute('data-action', 'conflict');
    await expect(file.getByTestId('revert-conflict')).toContainText('<<<<<<< now');
    await expect(file.getByTestId('revert-conflict')).toContainText('Two by hand');
    await expect(revert.getByTestId('revert-apply')).toBeDisabled();
    await revert.getByTestId('revert-close').click();

    // The added file alone: only it goes.
    const added = row(page, changeId, 'new.txt');
    await added.getByTestId('change-row-button').click();
    const r2 = added.getByTestId('revert');
    await r2.getByTestId('revert-button').click();
    await expect(r2.getByTestId('revert-summary')).toHaveText('1 of 1 file will be written');
    await r2.getByTestId('revert-apply').click();
    await expect(r2.getByTestId('revert-summary')).toHaveText('Reverted 1 of 1 file');
    expect(fs.existsSync(path.join(ws.dir, 'new.txt'))).toBe(false);
    expect(fs.readFileSync(path.join(ws.dir, 'a.txt'), 'utf8')).toBe('one\nTwo by hand\n');
    await expect(page.getByTestId('content-store-use')).toContainText('kept for undo');
  } finally {
    ws.cleanup();
  }
});

test('a run with one conflicting file: Apply is off and says why, the partial revert says what it leaves', async ({
  page,
}) => {
  const { ws, sid, changeId } = await sessionWithRun();
  try {
    ws.write('a.txt', 'one\nTwo by hand\n');
    await openSession(page, base, sid);
    const revert = block(page, changeId).getByTestId('revert').first();
    await revert.getByTestId('revert-button').click();
    const preview = revert.getByTestId('revert-preview');
    await expect(preview.getByTestId('revert-summary')).toHaveText('2 of 3 files will be written, 1 conflicts');
    await expect(preview.getByTestId('revert-blocked')).toContainText('a revert is all or nothing, so Apply is off');
    await expect(revert.getByTestId('revert-apply')).toBeDisabled();
    const partial = revert.getByTestId('revert-apply-partial');
    await expect(partial).toHaveText('Revert only 2 files, leave 1');
    await partial.click();
    await expect(preview.getByTestId('revert-summary')).toHaveText('Reverted 2 of 3 files');
    expect(fs.existsSync(path.join(ws.dir, 'new.txt'))).toBe(false);
    expect(fs.readFileSync(path.join(ws.dir, 'a.txt'), 'utf8')).toBe('one\nTwo by hand\n');
  } finally {
    ws.cleanup();
  }
});

test("a hunk's Undo in the patch view previews and undoes that hunk alone", async ({ page }) => {
  const numbered = (edit: Record<number, string> = {}) =>
    Array.from({ length: 30 }, (_, i) => `${edit[i + 1] ?? `line ${i + 1}`}\n`).join('');
  const ws = workspace({ 'f.txt': numbered() });
  const sid = uid('s');
  const run = uid('r');
  try {
    await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Hunks', workspace: ws.dir });
    await bridge(base, { type: 'run.started', session_id: sid, run_id: run });
    ws.write('f.txt', numbered({ 3: 'THREE', 27: 'TWENTY-SEVEN' }));
    await bridge(base, { type: 'run.completed', session_id: sid, run_id: run });
    await openSession(page, base, sid);
    const f = row(page, `run:${run}`, 'f.txt');
    await f.getByTestId('change-row-button').click();
    const undos = f.getByTestId('hunk-undo');
    await expect(undos).toHaveCount(2);
    await undos.nth(1).click();
    const preview = f.getByTestId('hunk-undo-preview');
    await expect(preview.getByTestId('revert-summary')).toHaveText('1 of 1 file will be written');
    await expect(preview.getByTestId('revert-patch')).toContainText('-TWENTY-SEVEN');
    await expect(preview.getByTestId('revert-patch')).not.toContainText('THREE');
    await preview.getByTestId('revert-apply').click();
    await expect(preview.getByTestId('revert-summary')).toHaveText('Reverted 1 of 1 file');
    expect(fs.readFileSync(path.join(ws.dir, 'f.txt'), 'utf8')).toBe(numbered({ 3: 'THREE' }));
  } finally {
    ws.cleanup();
  }
});

test('picked lines that a later edit changed conflict: nothing is written, the conflict is shown', async ({ page }) => {
  const numbered = (edit: Record<number, string> = {}) =>
    Array.from({ length: 30 }, (_, i) => `${edit[i + 1] ?? `line ${i + 1}`}\n`).join('');
  const ws = workspace({ 'f.txt': numbered() });
  const sid = uid('s');
  const run = uid('r');
  try {
    await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Lines', workspace: ws.dir });
    await bridge(base, { type: 'run.started', session_id: sid, run_id: run });
    ws.write('f.txt', numbered({ 3: 'THREE', 4: 'FOUR' }));
    await bridge(base, { type: 'run.completed', session_id: sid, run_id: run });
    const edited = numbered({ 3: 'Three by hand', 4: 'FOUR' });
    ws.write('f.txt', edited);
    await openSession(page, base, sid);
    const f = row(page, `run:${run}`, 'f.txt');
    await f.getByTestId('change-row-button').click();
    await f.getByRole('button', { name: 'Select added line 3 to undo' }).click();
    await f.getByTestId('hunk-undo-lines').click();
    const preview = f.getByTestId('hunk-undo-preview');
    const file = preview.getByTestId('revert-file');
    await expect(file).toHaveAttribute('data-action', 'conflict');
    await expect(file.getByTestId('revert-conflict')).toContainText('Three by hand');
    await expect(preview.getByTestId('revert-apply')).toBeDisabled();
    expect(fs.readFileSync(path.join(ws.dir, 'f.txt'), 'utf8')).toBe(edited);
  } finally {
    ws.cleanup();
  }
});

for (const scheme of ['light', 'dark'] as const) {
  // Light picks the two lines with the mouse (click, shift-click), dark with the keyboard.
  test(`picked lines of a hunk are undone alone and recorded as a revert, axe clean (${scheme})`, async ({ page }) => {
    await page.emulateMedia({ colorScheme: scheme });
    const numbered = (edit: Record<number, string | null> = {}) =>
      Array.from({ length: 30 }, (_, i) => (edit[i + 1] === null ? '' : `${edit[i + 1] ?? `line ${i + 1}`}\n`)).join(
        '',
      );
    const ws = workspace({ 'f.txt': numbered() });
    const sid = uid('s');
    const run = uid('r');
    try {
      await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Lines', workspace: ws.dir });
      await bridge(base, { type: 'run.started', session_id: sid, run_id: run });
      // One hunk: -line 3 -line 4 -line 5 +THREE +FOUR +FIVE.
      ws.write('f.txt', numbered({ 3: 'THREE', 4: 'FOUR', 5: 'FIVE' }));
      await bridge(base, { type: 'run.completed', session_id: sid, run_id: run });
      await openSession(page, base, sid);
      const f = row(page, `run:${run}`, 'f.txt');
      await f.getByTestId('change-row-button').click();
      const removed5 = f.getByRole('button', { name: 'Select removed line 5 to undo' });
      const added3 = f.getByRole('button', { name: 'Select added line 3 to undo' });
      // Context lines have no such button; changed lines do, next to their comment button.
      await expect(f.getByTestId('undo-line')).toHaveCount(6);
      await expect(f.getByTestId('comment-gutter')).toHaveCount(11);
      if (scheme === 'light') {
        await removed5.click();
        await added3.click({ modifiers: ['Shift'] });
      } else {
        await f.getByRole('button', { name: 'Select removed line 3 to undo' }).focus();
        await page.keyboard.press('ArrowDown');
        await page.keyboard.press('ArrowDown');
        await expect(removed5).toBeFocused();
        await page.keyboard.press('Space');
        await page.keyboard.press('Shift+ArrowDown');
        await expect(added3).toBeFocused();
      }
      await expect(removed5).toHaveAttribute('aria-pressed', 'true');
      await expect(added3).toHaveAttribute('aria-pressed', 'true');
      await expect(f.getByTestId('undo-line').and(f.locator('[aria-pressed="true"]'))).toHaveCount(2);
      // Picked for undo is not a comment's selection.
      await expect(f.locator('tr.pl-picked')).toHaveCount(2);
      await expect(f.locator('tr.pl-selected')).toHaveCount(0);
      await expectNoAxeViolations(page, '[data-testid="patch"]');

      await f.getByTestId('hunk-undo-lines').click();
      await expect(f.getByTestId('hunk-undo-lines')).toHaveText('Undo 2 selected lines');
      const preview = f.getByTestId('hunk-undo-preview');
      await expect(preview.getByTestId('revert-summary')).toHaveText('1 of 1 file will be written');
      await expect(preview.getByTestId('revert-patch')).toContainText('+line 5');
      await expect(preview.getByTestId('revert-patch')).toContainText('-THREE');
      await expect(preview.getByTestId('revert-patch')).not.toContainText('-FOUR');
      await expectNoAxeViolations(page, '[data-testid="hunk-undo-preview"]');
      await preview.getByTestId('revert-apply').click();
      await expect(preview.getByTestId('revert-summary')).toHaveText('Reverted 1 of 1 file');
      // git apply -R of the hunk reduced to those lines: -line 5 comes back, +THREE goes, the rest stays.
      expect(fs.readFileSync(path.join(ws.dir, 'f.txt'), 'utf8')).toBe(
        numbered({ 3: null, 4: 'line 5', 5: 'FOUR\nFIVE' }),
      );
      const revertRun = page.locator('[data-testid="timeline"] > li[data-key^="run:revert-"]');
      await expect(revertRun).toHaveCount(1);
      await expect(page.locator('[data-testid="change-block"][data-source="revert"]')).toHaveCount(1);

      // Clear drops the selection and its buttons.
      await removed5.click();
      await expect(f.getByTestId('hunk-undo-lines')).toHaveText('Undo 1 selected line');
      await f.getByTestId('hunk-undo-clear').click();
      await expect(f.getByTestId('hunk-undo-lines')).toHaveCount(0);
      await expect(f.locator('tr.pl-picked')).toHaveCount(0);
    } finally {
      ws.cleanup();
    }
  });
}

for (const scheme of ['light', 'dark'] as const) {
  test(`the revert preview is the patch viewer, its head in view, axe clean (${scheme})`, async ({ page }) => {
    await page.emulateMedia({ colorScheme: scheme });
    const { ws, sid, changeId } = await sessionWithRun();
    try {
      ws.write('a.txt', 'one\nTwo by hand\n');
      await openSession(page, base, sid);
      const revert = block(page, changeId).getByTestId('revert').first();
      await revert.getByTestId('revert-button').click();
      const preview = revert.getByTestId('revert-preview');
      // The timeline's viewer: line numbers and coloured rows, not raw text.
      const patch = preview.locator('[data-testid="revert-file"]', { hasText: 'new.txt' }).getByTestId('revert-patch');
      await expect(patch.getByTestId('patch')).toBeVisible();
      await expect(patch.locator('tr.pl-del')).toHaveCount(1);
      // The conflict is its conflicting part, both sides.
      const conflict = preview.getByTestId('revert-conflict');
      await expect(conflict).toContainText('<<<<<<< now');
      await expect(conflict).toContainText('Two by hand');
      await expectNoAxeViolations(page, '[data-testid="revert-preview"]');
      // The summary and buttons stay in view at the top of the preview as it scrolls past.
      await preview.getByTestId('revert-file').last().scrollIntoViewIfNeeded();
      await expect(revert.getByTestId('revert-apply-partial')).toBeInViewport();
    } finally {
      ws.cleanup();
    }
  });
}

import type { Page } from '@playwright/test';
import type { SessionReviewResponse } from '../shared/index.ts';
import { expectNoAxeViolations } from './axe.ts';
import { bridge, expect, openSession, row, servers, test, uid, workspace } from './support.ts';

// Browser globals, for code inside page.evaluate (the root tsconfig has no DOM lib on purpose).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any;

const base = servers.main;

const BEFORE = [
  'export function price(cents: number): string {',
  '  const euros = cents / 100;',
  "  const label = 'EUR';",
  '  const unused = 0;',
  '  return `${euros} ${label}`;',
  '}',
  '',
].join('\n');
// The first run rounds the cents (line 2) and removes the unused line (old line 4).
const AFTER_FIRST = [
  'export function price(cents: number): string {',
  '  const euros = Math.round(cents) / 100;',
  "  const label = 'EUR';",
  '  return `${euros} ${label}`;',
  '}',
  '',
].join('\n');
// A later run changes line 2 again: a comment on it is outdated.
const AFTER_SECOND = AFTER_FIRST.replace('Math.round(cents)', 'Math.floor(cents)');

/** One run of the real bridge that writes `text` into src/price.ts. */
async function run(sid: string, ws: ReturnType<typeof workspace>, text: string): Promise<string> {
  const runId = uid('r');
  await bridge(base, { type: 'run.started', session_id: sid, run_id: runId });
  ws.write('src/price.ts', text);
  await bridge(base, {
    type: 'message',
    session_id: sid,
    role: 'assistant',
    content: `Run ${runId} done.`,
    message_id: `${runId}-a`,
    run_id: runId,
  });
  await bridge(base, { type: 'run.completed', session_id: sid, run_id: runId });
  return `run:${runId}`;
}

async function session() {
  const ws = workspace({ 'src/price.ts': BEFORE });
  const sid = uid('s');
  await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Review comments', workspace: ws.dir });
  const change = await run(sid, ws, AFTER_FIRST);
  return { ws, sid, change };
}

async function openPrice(page: Page, change: string) {
  const price = row(page, change, 'src/price.ts');
  const button = price.getByTestId('change-row-button');
  if ((await button.getAttribute('aria-expanded')) !== 'true') await button.click();
  await expect(price.getByTestId('patch')).toHaveAttribute('data-rendered', 'true');
  return price;
}

const gutter = (scope: ReturnType<typeof row>, side: 'before' | 'after', line: number) =>
  scope.locator(`button.cgut[data-side="${side}"][data-line="${line}"]`);

async function reviewOf(sid: string): Promise<SessionReviewResponse> {
  const res = await fetch(`${base}/api/hermes/sessions/${encodeURIComponent(sid)}/review`);
  expect(res.status).toBe(200);
  return (await res.json()) as SessionReviewResponse;
}

test('comment on an added and a removed line, edit, delete, reload, send, see it delivered, then outdated', async ({
  page,
}) => {
  const { ws, sid, change } = await session();
  try {
    await openSession(page, base, sid);
    const price = await openPrice(page, change);
    await expect(price.getByTestId('patch')).toHaveAttribute('data-layout', 'unified');

    // An added line, unified: click its gutter button (shown on hover), type, Ctrl+Enter.
    await price.locator('tr', { hasText: 'Math.round(cents)' }).hover();
    await expect(gutter(price, 'after', 2)).toBeVisible();
    await gutter(price, 'after', 2).click();
    const composer = price.getByTestId('comment-composer');
    await expect(composer).toContainText('Comment on line 2 (after)');
    await expect(composer.getByTestId('comment-text')).toBeFocused();
    await composer.getByTestId('comment-text').fill('Why round here? <b>not html</b>');
    await expect(composer.getByTestId('comment-count')).toContainText('31 / 8,000');
    await page.keyboard.press('Control+Enter');
    await expect(price.getByTestId('comment-composer')).toHaveCount(0);
    const addedId = await price
      .getByTestId('comment-card')
      .filter({ hasText: 'Why round here?' })
      .getAttribute('data-comment-id');
    // By id: while it is edited its text is in a text box, not in the card's text.
    const added = price.locator(`[data-testid="comment-card"][data-comment-id="${addedId}"]`);
    await expect(added).toHaveAttribute('data-state', 'draft');
    await expect(added.getByTestId('comment-state')).toHaveText('Draft');
    // Plain text: the markup is shown as typed, not rendered.
    await expect(added.getByTestId('comment-body')).toHaveText('Why round here? <b>not html</b>');
    await expect(added.locator('b')).toHaveCount(0);
    // It sits under the line it is on.
    const underAdded = await page.evaluate(() => {
      const card = document.querySelector('[data-testid="comment-card"]');
      return card.closest('tr').previousElementSibling.textContent;
    });
    expect(underAdded).toContain('Math.round(cents)');

    // A range by shift-click: lines 1-3 of the after side, then deleted through its inline confirm.
    await gutter(price, 'after', 1).click();
    await gutter(price, 'after', 3).click({ modifiers: ['Shift'] });
    await expect(price.getByTestId('comment-composer')).toContainText('Comment on lines 1-3 (after)');
    await price.getByTestId('comment-text').fill('A range to delete');
    await price.getByTestId('comment-submit').click();
    const ranged = price.getByTestId('comment-card').filter({ hasText: 'A range to delete' });
    await expect(ranged).toContainText('lines 1-3 (after)');
    await ranged.getByTestId('comment-delete').click();
    await expect(ranged.getByTestId('comment-delete-cancel')).toBeFocused();
    await page.keyboard.press('Escape');
    await expect(ranged.getByTestId('comment-delete')).toBeFocused();
    await ranged.getByTestId('comment-delete').click();
    await ranged.getByTestId('comment-delete-confirm').click();
    await expect(ranged).toHaveCount(0);
    await expect(gutter(price, 'after', 3)).toBeFocused();

    // The removed line, in the split view: its before-side gutter.
    await price.getByTestId('layout-split').click();
    await expect(price.getByTestId('patch')).toHaveAttribute('data-layout', 'split');
    await gutter(price, 'before', 4).hover();
    await gutter(price, 'before', 4).click();
    await expect(price.getByTestId('comment-composer')).toContainText('Comment on line 4 (before)');
    await price.getByTestId('comment-text').fill('Was this really unused?');
    await price.getByTestId('comment-submit').click();
    const removed = price.getByTestId('comment-card').filter({ hasText: 'Was this really unused?' });
    await expect(removed).toHaveAttribute('data-state', 'draft');

    // Edit the first one.
    await added.getByTestId('comment-edit').click();
    const editor = added.getByTestId('comment-text');
    await expect(editor).toHaveValue('Why round here? <b>not html</b>');
    await editor.fill('Why round the cents here?');
    await added.getByTestId('comment-submit').click();
    const edited = price.getByTestId('comment-card').filter({ hasText: 'Why round the cents here?' });
    await expect(edited.getByTestId('comment-body')).toHaveText('Why round the cents here?');
    await expect(edited.getByTestId('comment-edit')).toBeFocused();

    // The file's row counts them, the header counts the drafts.
    await expect(price.getByTestId('change-row-comments')).toHaveText('2 comments');
    await expect(page.getByTestId('review-draft-count')).toHaveText('2 drafts');

    // A reload shows them again (the URL keeps the file open).
    await page.reload();
    await expect(page.getByTestId('timeline')).toHaveAttribute('data-loaded', 'true');
    const again = await openPrice(page, change);
    await expect(again.getByTestId('comment-card')).toHaveCount(2);
    await expect(again.getByTestId('comment-card').filter({ hasText: 'Why round the cents here?' })).toBeVisible();
    await expect(again.getByTestId('comment-card').filter({ hasText: 'Was this really unused?' })).toBeVisible();

    // The review panel: both drafts under the file, an overall note, Send to agent.
    await page.getByTestId('review-toggle').click();
    const panel = page.getByTestId('review-panel');
    await expect(panel.getByRole('heading', { name: 'Review' })).toBeFocused();
    const file = panel.getByTestId('review-file').filter({ hasText: 'src/price.ts' });
    await expect(file.getByTestId('review-item')).toHaveCount(2);
    await expect(file.getByTestId('review-item-link')).toHaveText(['line 4 (before)', 'line 2 (after)']);
    await panel.getByTestId('review-note').fill('Two questions on the price.');
    await expect(panel.getByTestId('review-mode-next')).toBeChecked();
    await panel.getByTestId('review-send').click();
    const sent = panel.getByTestId('review-sent');
    await expect(sent).toHaveCount(1);
    await expect(sent).toHaveAttribute('data-state', 'pending');
    await expect(sent.getByTestId('review-sent-state')).toContainText('Pending');
    await expect(again.getByTestId('comment-state')).toHaveText(['Pending', 'Pending']);
    await expect(page.getByTestId('review-draft-count')).toHaveText('0 drafts');
    await expect(panel.getByTestId('review-note')).toHaveValue('');

    // What was sent is shown exactly, as plain text.
    const server = await reviewOf(sid);
    const review = server.reviews[0]!;
    expect(review.state).toBe('pending');
    await sent.getByTestId('review-show-text').click();
    await expect(sent.getByTestId('review-text')).toHaveText(review.text);
    expect(review.text).toContain('Why round the cents here?');
    expect(review.text).toContain('Two questions on the price.');

    // A runtime without hooks says it handed the review over: Delivered, live.
    const res = await fetch(
      `${base}/api/hermes/sessions/${encodeURIComponent(sid)}/reviews/${encodeURIComponent(review.id)}/delivered`,
      { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ agent: 'e2e-agent' }) },
    );
    expect(res.status).toBe(200);
    await expect(sent).toHaveAttribute('data-state', 'delivered');
    await expect(sent.getByTestId('review-sent-state')).toContainText(/^Delivered .+ via REST to e2e-agent$/);
    await expect(again.getByTestId('comment-state').first()).toContainText(/^Delivered .+ via REST to e2e-agent$/);
    // Delivered comments can be marked addressed, not edited.
    await expect(again.getByTestId('comment-edit')).toHaveCount(0);
    await expect(again.getByTestId('comment-addressed')).toHaveCount(2);

    // A later run changes line 2 again: that comment is outdated, live.
    await run(sid, ws, AFTER_SECOND);
    const outdated = again.getByTestId('comment-card').filter({ hasText: 'Why round the cents here?' });
    await expect(outdated).toHaveAttribute('data-outdated', 'true');
    await expect(outdated.getByTestId('comment-outdated')).toHaveText('Outdated');

    // Mark the other one addressed from the panel: delivered comments are among the done ones, folded.
    const done = panel.getByTestId('review-done-toggle');
    await expect(done).toHaveText('▸ 2 done comments (2 delivered)');
    await done.click();
    const item = panel.getByTestId('review-item').filter({ hasText: 'Was this really unused?' });
    await item.getByTestId('review-item-addressed').click();
    await expect(done).toHaveText('▾ 2 done comments (1 delivered, 1 addressed)');
    await expect(again.getByTestId('comment-card').filter({ hasText: 'Was this really unused?' })).toHaveAttribute(
      'data-state',
      'addressed',
    );
  } finally {
    ws.cleanup();
  }
});

test('keyboard: the gutter is one tab stop, arrows move along it, Enter opens the composer, Escape gives the focus back; a drag selects a range', async ({
  page,
}) => {
  const { ws, sid, change } = await session();
  try {
    await openSession(page, base, sid);
    const price = await openPrice(page, change);
    await price.getByTestId('layout-unified').click();
    // Tab from the patch tools reaches the first gutter button, labelled with its line.
    await price.getByTestId('copy-path').focus();
    let label = '';
    for (let i = 0; i < 10 && !label.startsWith('Comment on line'); i++) {
      await page.keyboard.press('Tab');
      label = await page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? '');
    }
    expect(label).toBe('Comment on line 1 (after)');
    await page.keyboard.press('ArrowDown');
    await expect(gutter(price, 'before', 2)).toBeFocused();
    await page.keyboard.press('ArrowDown');
    await expect(gutter(price, 'after', 2)).toBeFocused();
    await page.keyboard.press('Enter');
    const text = price.getByTestId('comment-text');
    await expect(text).toBeFocused();
    await text.fill('typed');
    await page.keyboard.press('Escape');
    await expect(price.getByTestId('comment-composer')).toHaveCount(0);
    await expect(gutter(price, 'after', 2)).toBeFocused();
    // Shift+Enter on another line of the hunk extends from the anchor into a range.
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Shift+Enter');
    await expect(price.getByTestId('comment-composer')).toContainText('Comment on lines 2-3 (after)');

    // A drag over the gutter selects a range too; the open composer moves there with its text.
    await price.getByTestId('comment-text').fill('kept while moving');
    await gutter(price, 'after', 1).hover();
    await page.mouse.down();
    await price.locator('tr', { hasText: "const label = 'EUR';" }).hover();
    await page.mouse.up();
    await expect(price.getByTestId('comment-composer')).toContainText('Comment on lines 1-3 (after)');
    await expect(price.getByTestId('comment-text')).toHaveValue('kept while moving');
    await expect(price.locator('tr.pl-selected')).toHaveCount(3);
  } finally {
    ws.cleanup();
  }
});

test('errors say why and keep the typed text: no server, a refused edit, a body over the bound', async ({ page }) => {
  const { ws, sid, change } = await session();
  try {
    await openSession(page, base, sid);
    const price = await openPrice(page, change);
    await gutter(price, 'after', 2).hover();
    await gutter(price, 'after', 2).click();
    const text = price.getByTestId('comment-text');
    await text.fill('Keep me');
    // The request fails on the way: the server is not reached.
    await page.route('**/comments', (route) => route.abort('connectionrefused'));
    await price.getByTestId('comment-submit').click();
    await expect(price.getByTestId('comment-error')).toContainText('cannot be reached');
    await expect(text).toHaveValue('Keep me');
    await page.unroute('**/comments');

    // The bound: one character over is counted and held back; at the bound it can be sent.
    await text.fill('x'.repeat(8_001));
    await expect(price.getByTestId('comment-count')).toContainText('8,001 / 8,000 characters: too long');
    await expect(price.getByTestId('comment-submit')).toBeDisabled();
    await text.fill('x'.repeat(8_000));
    await expect(price.getByTestId('comment-submit')).toBeEnabled();
    await text.fill('Keep me');
    await price.getByTestId('comment-submit').click();
    const cardId = await price
      .getByTestId('comment-card')
      .filter({ hasText: 'Keep me' })
      .getAttribute('data-comment-id');
    const card = price.locator(`[data-testid="comment-card"][data-comment-id="${cardId}"]`);
    await expect(card).toBeVisible();

    // Sent, then edited while the agent receives it: the server refuses (400) and the new text stays.
    await page.getByTestId('review-toggle').click();
    await page.getByTestId('review-send').click();
    await expect(card).toHaveAttribute('data-state', 'pending');
    await card.getByTestId('comment-edit').click();
    await card.getByTestId('comment-text').fill('A second thought');
    const { reviews } = await reviewOf(sid);
    const res = await fetch(
      `${base}/api/hermes/sessions/${encodeURIComponent(sid)}/reviews/${encodeURIComponent(reviews[0]!.id)}/delivered`,
      { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' },
    );
    expect(res.status).toBe(200);
    await expect(card).toHaveAttribute('data-state', 'delivered');
    await card.getByTestId('comment-submit').click();
    await expect(card.getByTestId('comment-error')).toContainText('delivered');
    await expect(card.getByTestId('comment-text')).toHaveValue('A second thought');

    // Sending fails on the way: the note stays.
    const panel = page.getByTestId('review-panel');
    await panel.getByTestId('review-note').fill('only a note');
    await page.route('**/reviews', (route) => route.abort('connectionrefused'));
    await panel.getByTestId('review-send').click();
    await expect(panel.getByTestId('review-send-error')).toContainText('Could not send the review');
    await expect(panel.getByTestId('review-note')).toHaveValue('only a note');
  } finally {
    ws.cleanup();
  }
});

test('a comment far down a windowed patch: shown when its rows render, live on another page, reached from the panel and by a link', async ({
  page,
  context,
}) => {
  const ws = workspace({ 'README.md': 'x\n' });
  const sid = uid('s');
  await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Long patch', workspace: ws.dir });
  const runId = uid('r');
  await bridge(base, { type: 'run.started', session_id: sid, run_id: runId });
  ws.write('src/long.ts', Array.from({ length: 600 }, (_, i) => `export const v${i + 1} = ${i + 1};\n`).join(''));
  await bridge(base, { type: 'run.completed', session_id: sid, run_id: runId });
  const change = `run:${runId}`;
  try {
    const other = await context.newPage();
    await openSession(other, base, sid);
    // The newer page is the front tab; a tab behind it gets no animation frames, and the windowed
    // patch moves its window on them (a trace's screencast used to paint both).
    await page.bringToFront();
    await openSession(page, base, sid);
    const long = row(page, change, 'src/long.ts');
    await long.getByTestId('change-row-button').click();
    const patch = long.getByTestId('patch');
    await expect(patch).toHaveAttribute('data-rendered', 'true');
    expect(Number(await patch.getAttribute('data-blocks'))).toBeGreaterThan(4);
    const far = gutter(long, 'after', 550);
    await expect(far).toHaveCount(0); // not rendered: outside the window
    for (let i = 0; i < 80 && (await far.count()) === 0; i++) await page.mouse.wheel(0, 600);
    await far.scrollIntoViewIfNeeded();
    await far.hover();
    await far.click();
    await long.getByTestId('comment-text').fill('Line 550 needs a name');
    await long.getByTestId('comment-submit').click();
    await expect(long.getByTestId('comment-card')).toContainText('Line 550 needs a name');

    // The other page learns it live: its row counts it.
    await expect(row(other, change, 'src/long.ts').getByTestId('change-row-comments')).toHaveText('1 comment');

    // From the top of a fresh page, the panel's link opens the file and brings the line into view.
    const fileId = await long.getAttribute('data-file-id');
    await page.goto(`${base}/sessions/${encodeURIComponent(sid)}`);
    await expect(page.getByTestId('timeline')).toHaveAttribute('data-loaded', 'true');
    await page.getByTestId('review-toggle').click();
    await page.getByTestId('review-item-link').click();
    await expect(far).toBeFocused();
    await expect(long.getByTestId('comment-card')).toBeInViewport();
    expect(new URL(page.url()).searchParams.get('line')).toBe('550');

    // The same place as a link, opened cold.
    await page.goto(
      `${base}/sessions/${encodeURIComponent(sid)}?change=${encodeURIComponent(change)}&file=${encodeURIComponent(fileId!)}&side=after&line=550`,
    );
    await expect(far).toBeFocused();
    await expect(long.getByTestId('comment-card')).toBeInViewport();
  } finally {
    ws.cleanup();
  }
});

test('an outdated comment whose lines moved links to where they are now, in the later run', async ({ page }) => {
  const { ws, sid, change } = await session();
  try {
    await openSession(page, base, sid);
    const price = await openPrice(page, change);
    await gutter(price, 'after', 3).hover();
    await gutter(price, 'after', 3).click();
    await price.getByTestId('comment-text').fill('Label as a constant?');
    await price.getByTestId('comment-submit').click();
    const card = price.getByTestId('comment-card');
    await expect(card).toHaveAttribute('data-outdated', 'false');

    // A later run adds two lines at the top: the commented line is now line 5.
    const later = await run(sid, ws, `// Prices\n// in euros\n${AFTER_FIRST}`);
    await expect(card).toHaveAttribute('data-outdated', 'true');
    await expect(card.getByTestId('comment-current')).toHaveText('now at line 5');
    await card.getByTestId('comment-current').click();
    const moved = row(page, later, 'src/price.ts');
    await expect(moved.getByTestId('change-row-button')).toHaveAttribute('aria-expanded', 'true');
    await expect(gutter(moved, 'after', 5)).toBeFocused();
    const url = new URL(page.url());
    expect([url.searchParams.get('change'), url.searchParams.get('side'), url.searchParams.get('line')]).toEqual([
      later,
      'after',
      '5',
    ]);
  } finally {
    ws.cleanup();
  }
});

/** `line 1` .. `line n`, one a line. */
const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join('');

test('a link to a line between two hunks of the later run opens that gap and focuses the line; a line the file lacks is said', async ({
  page,
}) => {
  const ws = workspace({ 'src/price.ts': numbered(30) });
  const sid = uid('s');
  await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Hidden line', workspace: ws.dir });
  const first = numbered(30).replace('line 10\n', 'line ten\n');
  const change = await run(sid, ws, first);
  try {
    await openSession(page, base, sid);
    const price = await openPrice(page, change);
    await gutter(price, 'after', 10).hover();
    await gutter(price, 'after', 10).click();
    await price.getByTestId('comment-text').fill('Ten as a word?');
    await price.getByTestId('comment-submit').click();
    const card = price.getByTestId('comment-card');
    await expect(card).toHaveAttribute('data-outdated', 'false');

    // The later run adds two lines at the top and changes line 28: line ten is now line 12, in the
    // unchanged lines between its two hunks, which its patch does not hold.
    const later = await run(sid, ws, `top a\ntop b\n${first.replace('line 28\n', 'line twenty-eight\n')}`);
    await expect(card.getByTestId('comment-current')).toHaveText('now at line 12');
    const moved = row(page, later, 'src/price.ts');
    await card.getByTestId('comment-current').click();
    await expect(gutter(moved, 'after', 12)).toBeFocused();
    await expect(moved.locator('tr', { hasText: 'line ten' })).toBeInViewport();
    await expect(moved.getByTestId('patch-line-missing')).toHaveCount(0);

    // The same place as a link, opened cold (the recorded contents arrive after the patch).
    const fileId = await moved.getAttribute('data-file-id');
    const link = (line: number) =>
      `${base}/sessions/${encodeURIComponent(sid)}?change=${encodeURIComponent(later)}&file=${encodeURIComponent(fileId!)}&side=after&line=${line}`;
    await page.goto(link(12));
    await expect(gutter(moved, 'after', 12)).toBeFocused();
    await expect(moved.getByTestId('patch-expand')).toHaveCount(0);

    // A line the file does not have: said in the patch, nothing else opens.
    await page.goto(link(99));
    await expect(moved.getByTestId('patch-line-missing')).toHaveText(
      'Line 99 (after) is not in this file as the change recorded it.',
    );
    await expect(moved.getByTestId('patch-expand')).toHaveText('⋯ Show 20 of 21 unchanged lines above');
  } finally {
    ws.cleanup();
  }
});

test('split view: a comment on the new code sits under the right column, one on the old code under the left', async ({
  page,
}) => {
  const { ws, sid, change } = await session();
  try {
    await openSession(page, base, sid);
    const price = await openPrice(page, change);
    await price.getByTestId('layout-split').click();
    await expect(price.getByTestId('patch')).toHaveAttribute('data-layout', 'split');
    const table = await price.locator('table.patch-table').boundingBox();
    const middle = table!.x + table!.width / 2;

    // The composer of an after-side line opens under the right column.
    await gutter(price, 'after', 2).hover();
    await gutter(price, 'after', 2).click();
    const composer = await price.getByTestId('comment-composer').boundingBox();
    expect(composer!.x).toBeGreaterThanOrEqual(middle - 1);
    await price.getByTestId('comment-text').fill('On the new rounding');
    await price.getByTestId('comment-submit').click();
    const after = await price.getByTestId('comment-card').filter({ hasText: 'On the new rounding' }).boundingBox();
    expect(after!.x).toBeGreaterThanOrEqual(middle - 1);

    // A removed line's comment stays under the left column.
    await gutter(price, 'before', 4).hover();
    await gutter(price, 'before', 4).click();
    await price.getByTestId('comment-text').fill('On the old line');
    await price.getByTestId('comment-submit').click();
    const before = await price.getByTestId('comment-card').filter({ hasText: 'On the old line' }).boundingBox();
    expect(before!.x + before!.width).toBeLessThanOrEqual(middle + 1);
  } finally {
    ws.cleanup();
  }
});

test('a long comment is clamped behind Show more; delivered ones show date and time, fold among the done ones, and the timeline marks the delivery', async ({
  page,
}) => {
  const { ws, sid, change } = await session();
  try {
    await openSession(page, base, sid);
    const price = await openPrice(page, change);
    const long = Array.from({ length: 90 }, (_, i) => `Point ${i + 1}: ${'words '.repeat(12)}`).join('\n');
    expect(long.length).toBeGreaterThan(6_000);
    await gutter(price, 'after', 2).hover();
    await gutter(price, 'after', 2).click();
    await price.getByTestId('comment-text').fill(long);
    await price.getByTestId('comment-submit').click();
    const card = price.getByTestId('comment-card');
    const body = card.getByTestId('comment-body');
    await expect(body).toHaveAttribute('data-clamped', 'true');
    expect((await body.boundingBox())!.height).toBeLessThan(150);
    const more = card.getByTestId('comment-more');
    await expect(more).toHaveText('Show more');
    await expect(more).toHaveAttribute('aria-expanded', 'false');
    await more.click();
    await expect(more).toHaveText('Show less');
    await expect(more).toHaveAttribute('aria-expanded', 'true');
    expect((await body.boundingBox())!.height).toBeGreaterThan(600);
    await more.click();
    await expect(body).toHaveAttribute('data-clamped', 'true');

    // A short one is not clamped.
    await gutter(price, 'after', 1).hover();
    await gutter(price, 'after', 1).click();
    await price.getByTestId('comment-text').fill('Short one');
    await price.getByTestId('comment-submit').click();
    await expect(card.filter({ hasText: 'Short one' }).getByTestId('comment-more')).toHaveCount(0);

    // The panel clamps it too.
    await page.getByTestId('review-toggle').click();
    const panel = page.getByTestId('review-panel');
    const item = panel.getByTestId('review-item').filter({ hasText: 'Point 1:' });
    await expect(item.getByTestId('comment-body')).toHaveAttribute('data-clamped', 'true');
    await expect(item.getByTestId('comment-more')).toHaveAttribute('aria-expanded', 'false');
    await panel.getByTestId('review-send').click();
    await expect(panel.getByTestId('review-item')).toHaveCount(2);
    await expect(page.getByTestId('review-marker')).toHaveCount(0); // pending: not delivered yet

    // Delivered: the state says the date and the time, the exact instant in <time datetime>.
    const { reviews } = await reviewOf(sid);
    const res = await fetch(
      `${base}/api/hermes/sessions/${encodeURIComponent(sid)}/reviews/${encodeURIComponent(reviews[0]!.id)}/delivered`,
      { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ agent: 'e2e-agent' }) },
    );
    expect(res.status).toBe(200);
    const { comments } = await reviewOf(sid);
    const deliveredAt = comments[0]!.delivered_at!;
    const year = String(new Date(deliveredAt).getFullYear());
    const state = card.first().getByTestId('comment-state');
    await expect(state).toContainText(/^Delivered .+ via REST to e2e-agent$/);
    await expect(state).toContainText(year);
    const time = state.locator('time');
    await expect(time).toHaveAttribute('datetime', new Date(deliveredAt).toISOString());
    await expect(time).toHaveAttribute('title', new RegExp(year));

    // The panel: no open comment left; the two delivered ones are folded away and counted.
    await expect(panel.getByTestId('review-empty')).toBeVisible();
    await expect(panel.getByTestId('review-item')).toHaveCount(0);
    const done = panel.getByTestId('review-done-toggle');
    await expect(done).toHaveText('▸ 2 done comments (2 delivered)');
    await expect(done).toHaveAttribute('aria-expanded', 'false');
    await done.click();
    await expect(done).toHaveAttribute('aria-expanded', 'true');
    await expect(panel.getByTestId('review-done').getByTestId('review-item')).toHaveCount(2);
    await panel.getByTestId('review-close').click();

    // The timeline marks the delivery after the run that was reviewed, before the next prompt.
    const marker = page.getByTestId('review-marker');
    await expect(marker).toContainText('Review delivered to e2e-agent via REST · 2 comments');
    await expect(marker.locator('time')).toHaveAttribute('datetime', new Date(deliveredAt).toISOString());
    await bridge(base, {
      type: 'message',
      session_id: sid,
      role: 'user',
      content: 'Next prompt',
      message_id: uid('u'),
    });
    const kinds = page.getByTestId('timeline').locator('> li');
    await expect(kinds.last()).toContainText('Next prompt');
    const order = await Promise.all((await kinds.all()).slice(-3).map((k) => k.getAttribute('data-kind')));
    expect(order).toEqual(['outcome', 'review', 'message']);
    await marker.getByTestId('review-marker-open').click();
    const entry = panel.locator(`[data-testid="review-sent"][data-review-id="${reviews[0]!.id}"]`);
    await expect(entry).toBeFocused();
  } finally {
    ws.cleanup();
  }
});

test.describe('accessibility', () => {
  // axe-core is injected as a script, which the app's Content-Security-Policy rightly refuses.
  test.use({ bypassCSP: true });
  for (const scheme of ['light', 'dark'] as const) {
    test(`accessibility: the composer, comment cards and the review panel have no axe violations (${scheme})`, async ({
      page,
    }) => {
      await page.emulateMedia({ colorScheme: scheme });
      const { ws, sid, change } = await session();
      try {
        await openSession(page, base, sid);
        const price = await openPrice(page, change);
        await gutter(price, 'after', 2).hover();
        await gutter(price, 'after', 2).click();
        await price.getByTestId('comment-text').fill('A saved comment');
        await price.getByTestId('comment-submit').click();
        await expect(price.getByTestId('comment-card')).toHaveCount(1);
        // A second comment being written, the selection highlighted.
        await gutter(price, 'after', 1).click();
        await gutter(price, 'after', 3).click({ modifiers: ['Shift'] });
        await expect(price.getByTestId('comment-composer')).toBeVisible();
        await page.getByTestId('review-toggle').click();
        await expect(page.getByTestId('review-panel')).toBeVisible();
        await page.getByTestId('review-note').fill('note');
        await expectNoAxeViolations(page);
        await page.getByTestId('review-send').click();
        await page.getByTestId('review-show-text').click();
        await expect(page.getByTestId('review-text')).toBeVisible();
        await price.getByTestId('layout-split').click();
        await expectNoAxeViolations(page);
      } finally {
        ws.cleanup();
      }
    });

    test(`accessibility: the panel with done comments folded, a long comment clamped and the timeline's delivery mark have no axe violations (${scheme})`, async ({
      page,
    }) => {
      await page.emulateMedia({ colorScheme: scheme });
      const { ws, sid, change } = await session();
      try {
        await openSession(page, base, sid);
        const price = await openPrice(page, change);
        for (const [i, [line, text]] of (
          [
            [2, 'x '.repeat(400)],
            [3, 'A short one'],
          ] as const
        ).entries()) {
          await gutter(price, 'after', line).hover();
          await gutter(price, 'after', line).click();
          await price.getByTestId('comment-text').fill(text);
          await price.getByTestId('comment-submit').click();
          await expect(price.getByTestId('comment-card')).toHaveCount(i + 1);
        }
        await page.getByTestId('review-toggle').click();
        const panel = page.getByTestId('review-panel');
        await panel.getByTestId('review-send').click();
        // The server has the review once the panel lists it as sent.
        await expect(panel.getByTestId('review-sent')).toHaveCount(1);
        const { reviews } = await reviewOf(sid);
        const res = await fetch(
          `${base}/api/hermes/sessions/${encodeURIComponent(sid)}/reviews/${encodeURIComponent(reviews[0]!.id)}/delivered`,
          { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ agent: 'a11y' }) },
        );
        expect(res.status).toBe(200);
        await expect(panel.getByTestId('review-done-toggle')).toHaveAttribute('aria-expanded', 'false');
        await expect(page.getByTestId('review-marker')).toBeVisible();
        await expect(price.getByTestId('comment-more')).toBeVisible();
        await expectNoAxeViolations(page);
      } finally {
        ws.cleanup();
      }
    });
  }
});

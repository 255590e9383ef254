import type { Page } from '@playwright/test';
import type { SessionReviewResponse } from '../shared/index.ts';
import { expectNoAxeViolations } from './axe.ts';
import { bridge, expect, servers, test, uid, workspace } from './support.ts';

const base = servers.main;
const lines = (n: number, edit: Record<number, string> = {}) =>
  Array.from({ length: n }, (_, i) => edit[i + 1] ?? `line ${i + 1}`).join('\n') + '\n';

/**
 * The Session changes view as a review view: a session where r1 edits line 5 of a.txt and b.txt,
 * and r2 edits line 50 of a.txt, so a.txt's net patch has two hunks whose old side is r1's row and
 * whose new side is r2's.
 */
async function twoRuns() {
  const ws = workspace({ 'a.txt': lines(60), 'b.txt': 'bee\n' });
  const sid = uid('s');
  await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Net review', workspace: ws.dir });
  const run = async (edit: () => void) => {
    const runId = uid('r');
    await bridge(base, { type: 'run.started', session_id: sid, run_id: runId });
    edit();
    await bridge(base, { type: 'run.completed', session_id: sid, run_id: runId });
    return runId;
  };
  const r1 = await run(() => {
    ws.write('a.txt', lines(60, { 5: 'line five' }));
    ws.write('b.txt', 'bee by r1\n');
  });
  const r2 = await run(() => ws.write('a.txt', lines(60, { 5: 'line five', 50: 'line fifty' })));
  return { ws, sid, r1, r2, run };
}

const changesPage = (page: Page, sid: string) => page.goto(`${base}/sessions/${encodeURIComponent(sid)}/changes`);
const netRow = (page: Page, path: string) => page.locator(`[data-testid="net-row"][data-path="${path}"]`);

async function openRow(page: Page, path: string) {
  const row = netRow(page, path);
  await row.getByTestId('net-row-button').click();
  await expect(row.getByTestId('patch')).toHaveAttribute('data-rendered', 'true');
  return row;
}

test('Viewed on the Session changes view survives a reload, hides with Hide viewed, and goes stale when a later run changes the file', async ({
  page,
}) => {
  const { ws, sid, run } = await twoRuns();
  try {
    await changesPage(page, sid);
    await expect(page.getByTestId('net-viewed-count')).toHaveText('0 of 2 viewed');
    const b = netRow(page, 'b.txt');
    await b.getByTestId('net-viewed-toggle').check();
    await expect(b).toHaveAttribute('data-viewed', 'viewed');
    await expect(page.getByTestId('net-viewed-count')).toHaveText('1 of 2 viewed');

    await page.reload();
    await expect(netRow(page, 'b.txt').getByTestId('net-viewed-toggle')).toBeChecked();
    await expect(page.getByTestId('net-viewed-count')).toHaveText('1 of 2 viewed');

    await page.getByTestId('hide-viewed').click();
    await expect(page.getByTestId('net-row-path')).toHaveText(['a.txt']);
    await expect(page.getByTestId('viewed-hidden')).toContainText('1 viewed file hidden');
    await page.getByTestId('show-viewed').click();
    await expect(page.getByTestId('net-row-path')).toHaveText(['a.txt', 'b.txt']);

    // A later run changes b.txt again: the mark no longer counts, and the row says why.
    await run(() => ws.write('b.txt', 'bee by r3\n'));
    await page.reload();
    const stale = netRow(page, 'b.txt');
    await expect(stale).toHaveAttribute('data-viewed', 'stale');
    await expect(stale.getByTestId('net-viewed-toggle')).not.toBeChecked();
    await expect(stale.getByTestId('net-viewed-stale')).toHaveText('changed since viewed');
    await expect(page.getByTestId('net-viewed-count')).toHaveText('0 of 2 viewed');
    // Marked again: viewed, on the patch shown now.
    await stale.getByTestId('net-viewed-toggle').check();
    await expect(stale).toHaveAttribute('data-viewed', 'viewed');
    await expect(stale.getByTestId('net-viewed-stale')).toHaveCount(0);
  } finally {
    ws.cleanup();
  }
});

test('the net patch opens unchanged lines between its hunks, and its lines take comments the review sends to the agent', async ({
  page,
}) => {
  const { ws, sid, r1, r2 } = await twoRuns();
  try {
    await changesPage(page, sid);
    const a = await openRow(page, 'a.txt');
    const patch = a.getByTestId('patch');
    // Lines 9-46 sit between the two hunks: read from the stored contents, 20 at a time or all.
    const second = patch.locator('tr.pl-hunk', { hasText: '@@ -47,7' });
    await expect(second.getByTestId('patch-expand')).toHaveText('⋯ Show 20 of 38 unchanged lines above');
    await second.getByTestId('patch-expand').click();
    await expect(patch.getByText('line 46', { exact: true })).toHaveCount(1);
    await expect(patch.getByText('line 27', { exact: true })).toHaveCount(1);
    await expect(patch.getByText('line 26', { exact: true })).toHaveCount(0);
    await expect(second.getByTestId('patch-expand')).toHaveText('⋯ Show 18 unchanged lines above');
    await second.getByTestId('patch-expand').click();
    await expect(patch.getByText('line 9', { exact: true })).toHaveCount(1);

    // A comment on the new line 50 (the file as it stands) and one on the removed line 5.
    await patch.locator('tr', { hasText: 'line fifty' }).hover();
    await a.locator('button.cgut[data-side="after"][data-line="50"]').click();
    await a.getByTestId('comment-text').fill('Is fifty right?');
    await page.keyboard.press('Control+Enter');
    await expect(a.getByTestId('comment-card').filter({ hasText: 'Is fifty right?' })).toHaveAttribute(
      'data-state',
      'draft',
    );
    await patch
      .locator('tr.pl-del')
      .filter({ has: page.locator('button.cgut[data-side="before"][data-line="5"]') })
      .hover();
    await a.locator('button.cgut[data-side="before"][data-line="5"]').click();
    await a.getByTestId('comment-text').fill('Why was this replaced?');
    await page.keyboard.press('Control+Enter');
    await expect(a.getByTestId('comment-card')).toHaveCount(2);
    await expect(a.getByTestId('net-row-comments')).toHaveText('2 comments');

    // They are the session's review: the new side's on the last run's row, the old side's on the first's.
    const res = await fetch(`${base}/api/hermes/sessions/${encodeURIComponent(sid)}/review`);
    const review = (await res.json()) as SessionReviewResponse;
    expect(review.comments.map((c) => [c.anchor.change_id, c.anchor.side, c.anchor.lines])).toEqual([
      [`run:${r2}`, 'after', ['line fifty']],
      [`run:${r1}`, 'before', ['line 5']],
    ]);

    // Reloaded, they are back under their lines; sent from this page's review panel.
    await page.reload();
    const again = await openRow(page, 'a.txt');
    await expect(again.getByTestId('comment-card')).toHaveCount(2);
    await page.getByTestId('review-toggle').click();
    await expect(page.getByTestId('review-draft-count')).toHaveText('2 drafts');
    await page.getByTestId('review-send').click();
    await expect(page.getByTestId('review-sent')).toHaveCount(1);
    const sent = (await (
      await fetch(`${base}/api/hermes/sessions/${encodeURIComponent(sid)}/review`)
    ).json()) as SessionReviewResponse;
    expect(sent.reviews[0]!.text).toContain('a.txt, line 50 (after the change)');
    expect(sent.reviews[0]!.text).toContain('a.txt, line 5 (before the change');
  } finally {
    ws.cleanup();
  }
});

test.describe('accessibility', () => {
  // axe-core is injected as a script, which the app's Content-Security-Policy rightly refuses.
  test.use({ bypassCSP: true });
  for (const scheme of ['light', 'dark'] as const) {
    test(`accessibility: the Session changes view's viewed marks, comments and context buttons (${scheme})`, async ({
      page,
    }) => {
      await page.emulateMedia({ colorScheme: scheme });
      const { ws, sid, run } = await twoRuns();
      try {
        await changesPage(page, sid);
        await netRow(page, 'b.txt').getByTestId('net-viewed-toggle').check();
        await run(() => ws.write('b.txt', 'bee by r3\n'));
        await page.reload();
        await expect(netRow(page, 'b.txt').getByTestId('net-viewed-stale')).toBeVisible();
        const a = await openRow(page, 'a.txt');
        await expect(a.getByTestId('patch-expand').first()).toBeVisible();
        await a.locator('tr', { hasText: 'line fifty' }).hover();
        await a.locator('button.cgut[data-side="after"][data-line="50"]').click();
        await a.getByTestId('comment-text').fill('A note');
        await page.keyboard.press('Control+Enter');
        await expect(a.getByTestId('comment-card')).toHaveCount(1);
        await page.getByTestId('review-toggle').click();
        await expect(page.getByTestId('review-panel')).toBeVisible();
        await expectNoAxeViolations(page);
      } finally {
        ws.cleanup();
      }
    });
  }
});

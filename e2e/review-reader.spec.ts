import type { Page } from '@playwright/test';
import { expectNoAxeViolations } from './axe.ts';
import { bridge, expect, openSession, row, servers, test, uid, workspace } from './support.ts';

// Browser globals, for code inside page.evaluate (the root tsconfig has no DOM lib on purpose).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const navigator: any;

// "Send to agent" says who will read the review before it is sent: a rundiff run session has no
// reader, so the panel says so and offers the text to copy; a session reported by Claude Code's
// hooks names the hook.

const base = servers.main;

async function runSession(source: 'run' | 'coding-agent', sid = uid('s')) {
  const ws = workspace({ 'a.txt': 'one\ntwo\n' });
  await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Reader', workspace: ws.dir });
  const runId = uid('r');
  await bridge(base, { type: 'run.started', session_id: sid, run_id: runId, source });
  ws.write('a.txt', 'one\nTWO\n');
  await bridge(base, { type: 'run.completed', session_id: sid, run_id: runId });
  return { ws, sid, change: `run:${runId}` };
}

async function comment(page: Page, change: string, text: string) {
  const a = row(page, change, 'a.txt');
  await a.getByTestId('change-row-button').click();
  await expect(a.getByTestId('patch')).toHaveAttribute('data-rendered', 'true');
  const line = a.locator('button.cgut[data-side="after"][data-line="2"]');
  await line.hover();
  await line.click();
  await a.getByTestId('comment-text').fill(text);
  await a.getByTestId('comment-submit').click();
  await expect(a.getByTestId('comment-card')).toHaveCount(1);
}

test('a rundiff run session: the panel says no agent reads it and copies the review text instead', async ({
  page,
  context,
}) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const { ws, sid, change } = await runSession('run');
  try {
    await openSession(page, base, sid);
    await comment(page, change, 'Keep it lower case.');
    await page.getByTestId('review-toggle').click();
    const panel = page.getByTestId('review-panel');
    const reader = panel.getByTestId('review-reader');
    await expect(reader).toHaveAttribute('data-channel', 'none');
    await expect(reader).toContainText('This is a rundiff run session: no agent reads reviews from it.');
    await expect(panel.getByText('gets it at its next prompt')).toHaveCount(0);
    await panel.getByTestId('review-copy').click();
    await expect(panel.getByTestId('review-sent-status')).toContainText('Copied: 1 comment');
    const sent = panel.getByTestId('review-sent').first();
    await expect(sent.getByTestId('review-sent-state')).toContainText('via REST to copied by hand');
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toContain('# Code review from the user (sent with rundiff)');
    expect(copied).toContain('> Keep it lower case.');
  } finally {
    ws.cleanup();
  }
});

test("a session Claude Code's hooks report: the panel names the hook", async ({ page }) => {
  const { ws, sid } = await runSession('coding-agent', `claude-code:${uid('cc')}`);
  try {
    await openSession(page, base, sid);
    await page.getByTestId('review-toggle').click();
    const reader = page.getByTestId('review-reader');
    await expect(reader).toHaveAttribute('data-channel', 'hook');
    await expect(reader).toContainText('claude-code gets it through its rundiff hook with its next prompt');
    await expect(page.getByTestId('review-copy')).toHaveCount(0);
  } finally {
    ws.cleanup();
  }
});

test.describe('accessibility', () => {
  // axe-core is injected as a script, which the app's Content-Security-Policy rightly refuses.
  test.use({ bypassCSP: true });
  for (const scheme of ['light', 'dark'] as const) {
    test(`accessibility: the panel saying no agent reads the session, and a copied review, have no axe violations (${scheme})`, async ({
      page,
      context,
    }) => {
      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      await page.emulateMedia({ colorScheme: scheme });
      const { ws, sid, change } = await runSession('run');
      try {
        await openSession(page, base, sid);
        await comment(page, change, 'A comment');
        await page.getByTestId('review-toggle').click();
        await expect(page.getByTestId('review-reader')).toBeVisible();
        await expectNoAxeViolations(page);
        await page.getByTestId('review-copy').click();
        await expect(page.getByTestId('review-copy-sent')).toBeVisible();
        await expectNoAxeViolations(page);
      } finally {
        ws.cleanup();
      }
    });
  }
});

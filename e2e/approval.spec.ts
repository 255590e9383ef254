import fs from 'node:fs';
import path from 'node:path';
import { approvalServer } from './approval-server.ts';
import { expectNoAxeViolations } from './axe.ts';
import { bridge, expect, openSession, test, uid } from './support.ts';
import type { TempRepo } from '../server/test-support/temp-repo.ts';

// The page's own global, for code inside evaluate (the root tsconfig has no DOM lib).
declare const getComputedStyle: (el: unknown) => { backgroundColor: string };

/**
 * Commit approval in the browser: a server with RUNDIFF_REQUIRE_COMMIT_APPROVAL=1, a real
 * repository, a commit sent over REST that waits while the web UI shows its plan; the buttons decide.
 */

const server = approvalServer('approval');
const post = server.post.bind(server);

/** 200 numbered lines; `long()` with lines 3-32 and 161-190 rewritten: two hunks, 60 lines each way. */
const lines200 = (edit: boolean) =>
  Array.from({ length: 200 }, (_, i) =>
    edit && ((i >= 2 && i < 32) || (i >= 160 && i < 190)) ? `line ${i + 1} EDITED\n` : `line ${i + 1}\n`,
  ).join('');

/**
 * A session on a fresh repository with one edited and one new file, reviewed in tool session `ts`;
 * `long` adds a 200-line file with a long two-hunk edit, `chmod` makes app.txt executable.
 */
async function reviewed(
  ts: string,
  opts: { long?: boolean; chmod?: boolean } = {},
): Promise<{ repo: TempRepo; sessionId: string; head: string }> {
  const repo = server.repo({ 'app.txt': 'one\ntwo\n', ...(opts.long ? { 'long.txt': lines200(false) } : {}) });
  const sessionId = uid('approval');
  await bridge(server.url, { type: 'session.upsert', session_id: sessionId, title: 'Approval', workspace: repo.dir });
  repo.write('app.txt', 'one\nTWO\nthree\n');
  repo.write('notes.md', '# new\n');
  if (opts.long) repo.write('long.txt', lines200(true));
  if (opts.chmod) fs.chmodSync(path.join(repo.dir, 'app.txt'), 0o755);
  const diff = await post('git_diff', { session_id: sessionId, tool_session: ts });
  expect(diff.status).toBe(200);
  return { repo, sessionId, head: repo.git('rev-parse', 'HEAD').trim() };
}

test('a commit over REST waits; the prompt shows the plan as text; Approve lands the commit and the panel lists the calls', async ({
  page,
}) => {
  await page.goto(`${server.url}/tools`);
  await expect(page.getByTestId('git-tools-panel')).toHaveAttribute('data-loaded', 'true');
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  const { repo, sessionId, head } = await reviewed('ts-approve');

  const commit = post('git_commit', {
    session_id: sessionId,
    tool_session: 'ts-approve',
    message: 'Edit <b>app</b>\n\nand add notes',
    paths: ['app.txt', 'notes.md'],
  });
  const prompt = page.getByTestId('approval-prompt');
  await expect(prompt).toBeVisible();
  await expect(page.getByTestId('approval-repository')).toHaveText(path.basename(repo.dir));
  // the message is text, never HTML
  await expect(page.getByTestId('approval-message')).toHaveText('Edit <b>app</b>\n\nand add notes');
  await expect(prompt.locator('b')).toHaveCount(0);
  const app = page.locator('[data-testid="approval-file"][data-path="app.txt"]');
  const notes = page.locator('[data-testid="approval-file"][data-path="notes.md"]');
  await expect(app.getByTestId('approval-file-stats')).toHaveText('+2 -1');
  await expect(app.getByTestId('approval-file-new')).toHaveCount(0);
  await expect(notes.getByTestId('approval-file-stats')).toHaveText('+1 -0');
  await expect(notes.getByTestId('approval-file-new')).toHaveText('new');
  expect(repo.git('rev-parse', 'HEAD').trim()).toBe(head); // still waiting

  await page.getByTestId('approval-approve').click();
  const res = await commit;
  expect(res.status).toBe(200);
  expect(res.body.hash).toBe(repo.git('rev-parse', 'HEAD').trim());
  await expect(prompt).toHaveCount(0);

  const rows = page.getByTestId('tool-call-row');
  await expect(rows.first()).toHaveAttribute('data-tool', 'git_commit');
  await expect(rows.first()).toHaveAttribute('data-outcome', 'ok');
  await expect(rows.first()).toContainText(path.basename(repo.dir));
  // The commit's short hash and message are in the row; opening it shows the arguments.
  await expect(rows.first().getByTestId('tool-call-commit')).toHaveText(
    `${String(res.body.hash).slice(0, 7)} Edit <b>app</b> (2 files changed, +3 -1)`,
  );
  await rows.first().getByTestId('tool-call-open').click();
  const details = page.getByTestId('tool-call-details');
  await expect(details).toContainText(String(res.body.hash));
  await expect(details.getByTestId('tool-call-arguments')).toContainText('"paths": [');
  await expect(details.getByTestId('tool-call-arguments')).toContainText('"tool_session": "ts-approve"');
  await expect(details.locator('b')).toHaveCount(0);
  await expect(rows.first().getByTestId('tool-call-when')).toHaveText('just now');
  await expect(rows.nth(1)).toHaveAttribute('data-tool', 'git_diff');
});

test('Deny answers approval_denied, nothing is committed, and the panel shows the refusal', async ({ page }) => {
  await page.goto(`${server.url}/`);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  const { repo, sessionId, head } = await reviewed('ts-deny');

  const commit = post('git_commit', {
    session_id: sessionId,
    tool_session: 'ts-deny',
    message: 'Nope',
    paths: ['app.txt'],
  });
  // the prompt shows on any page
  await expect(page.getByTestId('approval-message')).toHaveText('Nope');
  await page.getByTestId('approval-deny').click();
  // Deny asks for an optional reason first; the reason reaches the agent in the tool's answer.
  await expect(page.getByTestId('approval-deny-reason')).toBeFocused();
  await page.getByTestId('approval-deny-reason').fill('Add a test for the new line first.');
  await page.getByTestId('approval-deny-confirm').click();
  const res = await commit;
  expect(res.status).toBe(409);
  expect(res.body.error).toMatchObject({
    code: 'approval_denied',
    message: 'a person denied the commit: Add a test for the new line first.',
    details: { reason: 'Add a test for the new line first.' },
  });
  expect(repo.git('rev-parse', 'HEAD').trim()).toBe(head);
  await expect(page.getByTestId('approval-prompt')).toHaveCount(0);

  await page.getByTestId('nav-tools').click();
  const first = page.getByTestId('tool-call-row').first();
  await expect(first).toHaveAttribute('data-outcome', 'approval_denied');
  await expect(first.getByTestId('tool-call-outcome')).toHaveText('approval_denied');
});

test('a page opened while a commit waits shows its prompt (GET /api/tools/approvals)', async ({ page }) => {
  const { sessionId } = await reviewed('ts-late');
  const commit = post('git_commit', {
    session_id: sessionId,
    tool_session: 'ts-late',
    message: 'Late',
    paths: ['app.txt'],
  });
  await expect
    .poll(
      async () =>
        ((await (await fetch(`${server.url}/api/tools/approvals`)).json()) as { approvals: [] }).approvals.length,
    )
    .toBe(1);
  await page.goto(`${server.url}/tools`);
  await expect(page.getByTestId('approval-message')).toHaveText('Late');
  await expect(page.getByTestId('tools-waiting')).toHaveText('1 waiting for a decision.');
  await page.getByTestId('approval-approve').click();
  expect((await commit).status).toBe(200);
});

test('the prompt takes the focus, names agent and session, counts down, opens each file diff; the approved commit joins the session', async ({
  page,
}) => {
  await page.goto(`${server.url}/`);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  const { repo, sessionId } = await reviewed('ts-judge', { chmod: true });
  const commit = post('git_commit', {
    session_id: sessionId,
    tool_session: 'ts-judge',
    agent: 'claude-code',
    message: 'Judge me',
    paths: ['app.txt', 'notes.md'],
  });
  const prompt = page.getByTestId('approval-prompt');
  await expect(prompt).toBeFocused();
  await expect(page.getByTestId('approval-agent')).toHaveText('claude-code');
  await expect(page.getByTestId('approval-session')).toHaveText('Approval');
  const countdown = page.getByTestId('approval-countdown');
  await expect(countdown).toHaveText(/^\s*Expires in 0:(1\d|20); nothing is committed without an answer\.\s*$/);
  const first = await countdown.innerText();
  // The countdown moves on by itself.
  await expect(countdown).not.toHaveText(first);

  const app = page.locator('[data-testid="approval-file"][data-path="app.txt"]');
  await app.getByTestId('approval-file-toggle').click();
  await expect(app.getByTestId('approval-file-toggle')).toHaveAttribute('aria-expanded', 'true');
  const diff = app.getByTestId('approval-diff');
  await expect(diff).toContainText('+TWO');
  await expect(diff).toContainText('-two');
  // Read like the patch viewer: git's header lines said in words, numbered and coloured lines.
  await expect(diff.getByTestId('approval-diff-label')).toHaveText(['mode 644 -> 755']);
  for (const header of ['diff --git', 'index ', '--- a/', '+++ b/', 'old mode'])
    await expect(diff).not.toContainText(header);
  const line = (kind: string) => diff.locator(`[data-testid="approval-diff-line"][data-kind="${kind}"]`);
  await expect(line('add')).toHaveCount(2);
  await expect(line('del').getByTestId('approval-diff-old-no')).toHaveText('2');
  await expect(line('add').first().getByTestId('approval-diff-new-no')).toHaveText('2');
  await expect(line('add').last().getByTestId('approval-diff-new-no')).toHaveText('3');
  const colour = (kind: string) =>
    line(kind)
      .first()
      .locator('td.code')
      .evaluate((td) => getComputedStyle(td).backgroundColor);
  expect(await colour('add')).not.toBe(await colour('context'));
  expect(await colour('del')).not.toBe(await colour('context'));
  expect(await colour('add')).not.toBe(await colour('del'));

  await page.getByTestId('approval-approve').click();
  const res = await commit;
  expect(res.status).toBe(200);
  await openSession(page, server.url, sessionId);
  const note = page.locator('[data-testid="message"][data-role="tool"]');
  await expect(note).toContainText(
    `Commit approved and made in ${path.basename(repo.dir)}: [main ${String(res.body.hash).slice(0, 7)}] Judge me`,
  );

  // The Git tools page marks the diff the prompt read as the prompt's own, not the agent's.
  await page.getByTestId('nav-tools').click();
  const promptRead = page.locator('[data-testid="tool-call-row"][data-origin="approval-prompt"]').first();
  await expect(promptRead).toHaveAttribute('data-tool', 'git_diff');
  await expect(promptRead.getByTestId('tool-call-origin')).toHaveText('read by the approval prompt');
  const agentRead = page.locator('[data-testid="tool-call-row"][data-tool="git_diff"][data-origin="agent"]').first();
  await expect(agentRead).toBeVisible();
  await expect(agentRead.getByTestId('tool-call-origin')).toHaveCount(0);
});

test('two waiting commits: the prompt says "in <repo> for session …. 1 more waiting." with its separators', async ({
  page,
}) => {
  await page.goto(`${server.url}/`);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  const a = await reviewed('ts-two-a');
  const b = await reviewed('ts-two-b');
  const first = post('git_commit', {
    session_id: a.sessionId,
    tool_session: 'ts-two-a',
    message: 'A',
    paths: ['app.txt'],
  });
  await expect(page.getByTestId('approval-message')).toHaveText('A');
  const second = post('git_commit', {
    session_id: b.sessionId,
    tool_session: 'ts-two-b',
    message: 'B',
    paths: ['app.txt'],
  });
  await expect(page.getByTestId('approval-more')).toHaveText('1 more waiting.');
  await expect(page.locator('#approval-asker')).toHaveText(
    `An agent wants to commit 1 file in ${path.basename(a.repo.dir)} for session Approval. 1 more waiting.`,
  );
  await page.getByTestId('approval-approve').click();
  expect((await first).status).toBe(200);
  await expect(page.getByTestId('approval-message')).toHaveText('B');
  await expect(page.getByTestId('approval-more')).toHaveCount(0);
  await expect(page.locator('#approval-asker')).toHaveText(
    `An agent wants to commit 1 file in ${path.basename(b.repo.dir)} for session Approval.`,
  );
  await page.getByTestId('approval-approve').click();
  expect((await second).status).toBe(200);
});

test('the prompt is a labelled non-modal dialog; after Approve the focus returns to where it was', async ({ page }) => {
  await page.goto(`${server.url}/tools`);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  const { sessionId } = await reviewed('ts-focus-approve');
  const navTools = page.getByTestId('nav-tools');
  await navTools.focus();
  const commit = post('git_commit', {
    session_id: sessionId,
    tool_session: 'ts-focus-approve',
    message: 'Focus',
    paths: ['app.txt'],
  });
  const prompt = page.getByTestId('approval-prompt');
  await expect(prompt).toBeFocused();
  await expect(prompt).toHaveAttribute('role', 'dialog');
  await expect(prompt).not.toHaveAttribute('aria-modal', /.*/);
  await expect(page.getByRole('dialog', { name: 'Approve this commit?' })).toBeVisible();
  // Not modal: Tab leaves the prompt for the page behind it.
  await page.getByTestId('approval-deny').focus();
  await page.keyboard.press('Tab');
  await expect(prompt.locator(':focus')).toHaveCount(0);
  await page.getByTestId('approval-approve').click();
  expect((await commit).status).toBe(200);
  await expect(prompt).toHaveCount(0);
  await expect(navTools).toBeFocused();
});

test('Ctrl+Enter in the deny reason denies; the focus then falls back to the main heading when nothing had it', async ({
  page,
}) => {
  await page.goto(`${server.url}/tools`);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  const { repo, sessionId, head } = await reviewed('ts-focus-deny');
  const commit = post('git_commit', {
    session_id: sessionId,
    tool_session: 'ts-focus-deny',
    message: 'Keys',
    paths: ['app.txt'],
  });
  await expect(page.getByTestId('approval-prompt')).toBeFocused();
  await page.getByTestId('approval-deny').click();
  const box = page.getByTestId('approval-deny-reason');
  await expect(box).toBeFocused();
  await box.fill('Not yet.');
  await box.press('Control+Enter');
  const res = await commit;
  expect(res.status).toBe(409);
  expect(res.body.error).toMatchObject({ code: 'approval_denied', details: { reason: 'Not yet.' } });
  expect(repo.git('rev-parse', 'HEAD').trim()).toBe(head);
  await expect(page.getByTestId('approval-prompt')).toHaveCount(0);
  await expect(page.getByRole('heading', { level: 1, name: 'Git tools' })).toBeFocused();

  // Cmd+Enter does the same.
  const again = await reviewed('ts-focus-deny-meta');
  const second = post('git_commit', {
    session_id: again.sessionId,
    tool_session: 'ts-focus-deny-meta',
    message: 'Keys again',
    paths: ['app.txt'],
  });
  await page.getByTestId('approval-deny').click();
  await page.getByTestId('approval-deny-reason').press('Meta+Enter');
  expect((await second).status).toBe(409);
});

for (const scheme of ['light', 'dark'] as const) {
  test(`the approval prompt, with a diff and the deny reason open, has no axe violations (${scheme})`, async ({
    page,
  }) => {
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(`${server.url}/`);
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
    const ts = `ts-axe-${scheme}`;
    const { sessionId } = await reviewed(ts, { long: true });
    const commit = post('git_commit', { session_id: sessionId, tool_session: ts, message: 'Axe', paths: ['long.txt'] });
    const prompt = page.getByTestId('approval-prompt');
    await expect(prompt).toBeVisible();
    await expectNoAxeViolations(page, '[data-testid="approval-prompt"]');
    await prompt.getByTestId('approval-file-toggle').first().click();
    // A diff long enough to scroll (two hunks, 60 lines each way)...
    const diff = prompt.getByTestId('approval-diff');
    await expect(diff).toBeVisible();
    await expect(diff).toContainText('line 190 EDITED');
    expect(await diff.evaluate((el) => el.scrollHeight > el.clientHeight)).toBe(true);
    await expectNoAxeViolations(page, '[data-testid="approval-prompt"]');
    await expect(diff.locator('[data-kind="hunk"]')).toHaveCount(2);
    // ...which a keyboard reaches and scrolls.
    await expect(diff).toHaveAttribute('aria-label', 'Diff of long.txt');
    await diff.focus();
    await expect(diff).toBeFocused();
    await page.keyboard.press('PageDown');
    await expect.poll(() => diff.evaluate((el) => el.scrollTop)).toBeGreaterThan(0);
    await page.getByTestId('approval-deny').click();
    await expectNoAxeViolations(page, '[data-testid="approval-prompt"]');
    await page.getByTestId('approval-deny-confirm').click();
    expect((await commit).status).toBe(409);
  });
}

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expectNoAxeViolations } from './axe.ts';
import { bridge, expect, openSession, ownServer, type OwnServer, test, uid, workspace } from './support.ts';
import type { TempRepo } from '../server/test-support/temp-repo.ts';

/**
 * Commit approval in the browser: a server with RUNDIFF_REQUIRE_COMMIT_APPROVAL=1, a real
 * repository, a commit sent over REST that waits while the web UI shows its plan; the buttons decide.
 */

let server: OwnServer;
let dir: string;
const repos: TempRepo[] = [];

test.beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-e2e-approval-'));
  server = await ownServer(path.join(dir, 'approval.db'), {
    RUNDIFF_REQUIRE_COMMIT_APPROVAL: '1',
    RUNDIFF_APPROVAL_TIMEOUT_MS: '20000',
  });
});
test.afterAll(async () => {
  await server.stop();
  for (const r of repos) r.cleanup();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function post(name: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${server.url}/api/tools/${name}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A session on a fresh repository with one edited and one new file, reviewed in tool session `ts`. */
async function reviewed(ts: string): Promise<{ repo: TempRepo; sessionId: string; head: string }> {
  const repo = workspace({ 'app.txt': 'one\ntwo\n' });
  repos.push(repo);
  repo.git('config', 'user.name', 'Agent');
  repo.git('config', 'user.email', 'agent@example.invalid');
  const sessionId = uid('approval');
  await bridge(server.url, { type: 'session.upsert', session_id: sessionId, title: 'Approval', workspace: repo.dir });
  repo.write('app.txt', 'one\nTWO\nthree\n');
  repo.write('notes.md', '# new\n');
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
  const { repo, sessionId } = await reviewed('ts-judge');
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
  await expect(countdown).toContainText(/0:(1\d|20) left/);
  const first = await countdown.innerText();
  // The countdown moves on by itself.
  await expect(countdown).not.toHaveText(first);

  const app = page.locator('[data-testid="approval-file"][data-path="app.txt"]');
  await app.getByTestId('approval-file-toggle').click();
  await expect(app.getByTestId('approval-file-toggle')).toHaveAttribute('aria-expanded', 'true');
  const diff = app.getByTestId('approval-diff');
  await expect(diff).toContainText('+TWO');
  await expect(diff).toContainText('-two');
  await expect(diff.locator('.pl-add')).toHaveCount(2);

  await page.getByTestId('approval-approve').click();
  const res = await commit;
  expect(res.status).toBe(200);
  await openSession(page, server.url, sessionId);
  const note = page.locator('[data-testid="message"][data-role="tool"]');
  await expect(note).toContainText(
    `Commit approved and made in ${path.basename(repo.dir)}: [main ${String(res.body.hash).slice(0, 7)}] Judge me`,
  );
});

for (const scheme of ['light', 'dark'] as const) {
  test(`the approval prompt, with a diff and the deny reason open, has no axe violations (${scheme})`, async ({
    page,
  }) => {
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(`${server.url}/`);
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
    const ts = `ts-axe-${scheme}`;
    const { sessionId } = await reviewed(ts);
    const commit = post('git_commit', { session_id: sessionId, tool_session: ts, message: 'Axe', paths: ['app.txt'] });
    const prompt = page.getByTestId('approval-prompt');
    await expect(prompt).toBeVisible();
    await expectNoAxeViolations(page, '[data-testid="approval-prompt"]');
    await prompt.getByTestId('approval-file-toggle').first().click();
    await expect(prompt.getByTestId('approval-diff')).toBeVisible();
    await page.getByTestId('approval-deny').click();
    await expectNoAxeViolations(page, '[data-testid="approval-prompt"]');
    await page.getByTestId('approval-deny-confirm').click();
    expect((await commit).status).toBe(409);
  });
}

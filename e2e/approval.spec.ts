import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { bridge, ownServer, uid, workspace, type OwnServer } from './support.ts';
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
  const res = await commit;
  expect(res.status).toBe(409);
  expect((res.body.error as { code: string }).code).toBe('approval_denied');
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

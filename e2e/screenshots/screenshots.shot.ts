import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { bridge, ownServer, workspace } from '../support.ts';

// Browser globals, for code inside page.evaluate (the root tsconfig has no DOM lib on purpose).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const window: any, document: any, localStorage: any;

const OUT = path.resolve(process.cwd(), 'docs/screenshots');

/** Plays the demo through the UI's own button and waits until its last run has ended. */
async function playDemo(page: Page): Promise<string> {
  await page.goto('/');
  await page.getByTestId('play-demo').click();
  await expect(page).toHaveURL(/\/sessions\/demo-/);
  const id = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
  await expect(page.locator('[data-testid="run-marker"][data-run-id="r4"]')).toHaveAttribute(
    'data-status',
    'completed',
    {
      timeout: 90_000,
    },
  );
  return id;
}

/**
 * Opens src/Login.vue's patch. A page opened on a URL that links the file opens it by itself, so
 * the row is clicked only while it is closed.
 */
async function expandLogin(page: Page): Promise<void> {
  const login = page.locator('[data-change-id="run:r1"] [data-testid="change-row"][data-path="src/Login.vue"]');
  const button = login.getByTestId('change-row-button');
  await expect(async () => {
    if ((await button.getAttribute('aria-expanded')) !== 'true') await button.click();
    await expect(button).toHaveAttribute('aria-expanded', 'true', { timeout: 1_000 });
  }).toPass();
  await expect(login.getByTestId('patch')).toHaveAttribute('data-highlighted', 'true');
}

test('screenshots of the demo session', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: 'light' });
  const id = await playDemo(page);
  await page.mouse.move(5, 795); // no hover highlight in the pictures

  const block = page.locator('[data-testid="change-block"][data-change-id="run:r1"]');
  // The top of the session: the request, the run, tool calls with their change blocks.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(OUT, 'timeline.png') });

  // The other states: a capped run with a truncated file and the patch budget spent, a failed run,
  // and a run whose workspace does not exist.
  const r2 = page.locator('[data-testid="change-block"][data-change-id="run:r2"]');
  const scrollTo = async (selector: string, top: number) => {
    await page.evaluate(([sel, y]) => window.scrollBy(0, document.querySelector(sel).getBoundingClientRect().top - y), [
      selector,
      top,
    ] as const);
  };
  await r2.scrollIntoViewIfNeeded();
  await scrollTo('[data-change-id="run:r2"]', 160);
  await page.screenshot({ path: path.join(OUT, 'timeline-limits.png') });
  await scrollTo('[data-change-id="run:r2"] [data-testid="change-more"]', 60);
  await page.screenshot({ path: path.join(OUT, 'timeline-states.png') });

  await page.evaluate(() => localStorage.setItem('rundiff.patchLayout', 'unified'));
  await page.reload();
  await expandLogin(page);
  const login = page.locator('[data-change-id="run:r1"] [data-testid="change-row"][data-path="src/Login.vue"]');
  await login.scrollIntoViewIfNeeded();
  await page.evaluate(() => window.scrollBy(0, 260));
  await login.screenshot({ path: path.join(OUT, 'patch-unified.png') });
  await login.getByTestId('layout-split').click();
  await expect(login.getByTestId('patch')).toHaveAttribute('data-highlighted', 'true');
  await login.screenshot({ path: path.join(OUT, 'patch-split.png') });

  // Review: the run's files as a tree, two marked viewed (dimmed, counted in the heading).
  await login.getByTestId('change-row-button').click();
  await block.getByTestId('view-tree').click();
  await expect(block.getByTestId('file-tree')).toBeVisible();
  for (const box of (await block.getByTestId('viewed-toggle').all()).slice(0, 2)) await box.check();
  await expect(block.getByTestId('change-viewed-count')).toHaveText(/^2 of \d+ viewed$/);
  await block.scrollIntoViewIfNeeded();
  await page.mouse.move(5, 795);
  await block.screenshot({ path: path.join(OUT, 'review.png') });
  await block.getByTestId('view-flat').click();

  // Dark theme: the same session, system colour scheme dark.
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.evaluate(() => localStorage.setItem('rundiff.patchLayout', 'split'));
  await page.goto(`/sessions/${encodeURIComponent(id)}`);
  await expandLogin(page);
  await block.scrollIntoViewIfNeeded();
  await page.evaluate(() => window.scrollBy(0, -120));
  await page.screenshot({ path: path.join(OUT, 'dark.png') });

  // A phone-sized window: no sideways page scroll.
  await page.setViewportSize({ width: 400, height: 800 });
  await page.emulateMedia({ colorScheme: 'light' });
  await page.evaluate(() => localStorage.setItem('rundiff.patchLayout', 'unified'));
  await page.reload();
  await expandLogin(page);
  await block.scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(OUT, 'narrow.png') });

  // The demo's temporary git workspace is not needed any more.
  const workspace = await page.getByTestId('session-workspace').innerText();
  if (workspace.includes('rundiff-demo-')) fs.rmSync(workspace, { recursive: true, force: true });
});

test('screenshots of finding sessions, the shortcuts and a review for the agent', async ({ page, baseURL }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: 'light' });
  const base = baseURL!;
  // Three more sessions beside the demo's: one whose run failed.
  const ws = workspace({ 'src/login.ts': 'export const login = () => true;\n' });
  try {
    const sessions = [
      { id: 'shots-login-fix', title: 'Fix the login redirect', fail: true },
      { id: 'shots-login-form', title: 'Refactor the login form', fail: false },
      { id: 'shots-theme', title: 'Add a dark theme', fail: false },
    ];
    for (const s of sessions) {
      await bridge(base, { type: 'session.upsert', session_id: s.id, title: s.title, workspace: ws.dir });
      await bridge(base, { type: 'run.started', session_id: s.id, run_id: 'r1' });
      if (s.fail) await bridge(base, { type: 'run.failed', session_id: s.id, run_id: 'r1', error: 'exit 1' });
      else {
        ws.write('src/login.ts', `export const login = () => ${JSON.stringify(s.id)};\n`);
        await bridge(base, { type: 'run.completed', session_id: s.id, run_id: 'r1' });
      }
    }
    await page.goto('/');
    await expect(page.getByTestId('session-row')).toHaveCount(4);
    await page.mouse.move(5, 795);
    await page.screenshot({ path: path.join(OUT, 'sessions.png') });
    await page.getByTestId('session-search').fill('login');
    await expect(page).toHaveURL(/\?q=login/);
    await expect(page.locator('[data-testid="session-row"][data-session-id="shots-theme"]')).toHaveCount(0);
    await page.screenshot({ path: path.join(OUT, 'sessions-search.png') });
  } finally {
    ws.cleanup();
  }

  // The demo session: a comment on a line of Login.vue and the review panel, ready to send.
  await page.goto('/');
  await page.getByTestId('session-row').filter({ hasText: /demo/i }).first().getByRole('link').first().click();
  await expect(page).toHaveURL(/\/sessions\/demo-/);
  await page.evaluate(() => localStorage.setItem('rundiff.patchLayout', 'unified'));
  await page.reload();
  await expandLogin(page);
  const login = page.locator('[data-change-id="run:r1"] [data-testid="change-row"][data-path="src/Login.vue"]');
  const gutter = login.locator('button.cgut[data-side="after"]').nth(2);
  await gutter.scrollIntoViewIfNeeded();
  await gutter.click();
  await login.getByTestId('comment-text').fill('Please keep the old error message: the support page links to it.');
  await login.getByTestId('comment-submit').click();
  await expect(login.getByTestId('comment-card')).toHaveCount(1);
  await page.getByTestId('review-toggle').click();
  await expect(page.getByTestId('review-panel')).toBeVisible();
  await page.getByTestId('review-note').fill('Nearly there: two small things before this is merged.');
  await login.getByTestId('comment-card').scrollIntoViewIfNeeded();
  await page.evaluate(() => window.scrollBy(0, 120));
  await page.mouse.move(5, 795);
  await page.screenshot({ path: path.join(OUT, 'review-comments.png') });
  await page.getByTestId('review-close').click();

  // `?` lists the keyboard shortcuts.
  await page.keyboard.press('?');
  await expect(page.getByTestId('shortcuts-dialog')).toBeVisible();
  await page.screenshot({ path: path.join(OUT, 'shortcuts.png') });
  await page.keyboard.press('Escape');
});

test('screenshots of a commit waiting for approval and the git tools log', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: 'light' });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-shots-approval-'));
  const server = await ownServer(path.join(dir, 'approval.db'), {
    RUNDIFF_REQUIRE_COMMIT_APPROVAL: '1',
    RUNDIFF_APPROVAL_TIMEOUT_MS: '300000',
  });
  const repo = workspace({
    'src/session.ts': 'export function expiry(now: number): number {\n  return now + 3600;\n}\n',
    'README.md': '# app\n',
  });
  try {
    repo.git('config', 'user.name', 'Agent');
    repo.git('config', 'user.email', 'agent@example.invalid');
    const post = async (name: string, body: unknown) =>
      fetch(`${server.url}/api/tools/${name}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    await bridge(server.url, {
      type: 'session.upsert',
      session_id: 'shots-approval',
      title: 'Shorter session expiry',
      workspace: repo.dir,
    });
    // The agent's run that made the change, then its review of the diff before it asks to commit.
    await bridge(server.url, { type: 'run.started', session_id: 'shots-approval', run_id: 'r1' });
    repo.write('src/session.ts', 'export function expiry(now: number): number {\n  return now + 15 * 60;\n}\n');
    repo.write('CHANGELOG.md', '# Changes\n\n- Sessions expire after 15 minutes.\n');
    await bridge(server.url, { type: 'run.completed', session_id: 'shots-approval', run_id: 'r1' });
    expect((await post('git_diff', { session_id: 'shots-approval', tool_session: 'shots' })).status).toBe(200);

    await page.goto(`${server.url}/sessions/shots-approval`);
    await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
    const commit = post('git_commit', {
      session_id: 'shots-approval',
      tool_session: 'shots',
      agent: 'claude-code',
      message: 'Sessions expire after 15 minutes',
      paths: ['src/session.ts', 'CHANGELOG.md'],
    });
    const prompt = page.getByTestId('approval-prompt');
    await expect(prompt).toBeVisible();
    const file = page.locator('[data-testid="approval-file"][data-path="src/session.ts"]');
    await file.getByTestId('approval-file-toggle').click();
    await expect(file.getByTestId('approval-diff')).toContainText('15 * 60');
    await page.mouse.move(5, 795);
    await page.screenshot({ path: path.join(OUT, 'approval.png') });
    await page.getByTestId('approval-approve').click();
    expect((await commit).status).toBe(200);

    await page.goto(`${server.url}/tools`);
    await expect(page.getByTestId('git-tools-panel')).toHaveAttribute('data-loaded', 'true');
    await page.getByTestId('tool-call-row').first().getByTestId('tool-call-open').click();
    await expect(page.getByTestId('tool-call-details')).toBeVisible();
    await page.mouse.move(5, 795);
    await page.screenshot({ path: path.join(OUT, 'git-tools.png') });
  } finally {
    await server.stop();
    repo.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

import fs from 'node:fs';
import path from 'node:path';
import { approvalServer } from './approval-server.ts';
import { bridge, expect, test, uid } from './support.ts';
import type { TempRepo } from '../server/test-support/temp-repo.ts';

/**
 * The approval prompt shows the diff the commit would record: HEAD against the index for a commit
 * of the staged set, HEAD against the work tree for a commit with `paths`; a binary file says so.
 */

const server = approvalServer('approval-diff');
const post = server.post.bind(server);

async function session(files: Record<string, string>): Promise<{ repo: TempRepo; sessionId: string }> {
  const repo = server.repo(files);
  const sessionId = uid('approval-diff');
  await bridge(server.url, {
    type: 'session.upsert',
    session_id: sessionId,
    title: 'Approval diff',
    workspace: repo.dir,
  });
  return { repo, sessionId };
}

/** 500 bytes with NULs and a few newlines: git calls it binary. */
const BINARY = Buffer.from(Array.from({ length: 500 }, (_, i) => (i % 125 === 7 ? 10 : i % 3 === 0 ? 0 : i % 256)));

test('a commit of the staged set: each file opens to its staged change (mode, rename halves, new binary)', async ({
  page,
}) => {
  await page.goto(`${server.url}/`);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  const { repo, sessionId } = await session({ 'app.txt': 'one\n', 'old.txt': 'moved\nlines\n' });
  fs.chmodSync(path.join(repo.dir, 'app.txt'), 0o755);
  repo.git('mv', 'old.txt', 'new.txt');
  fs.writeFileSync(path.join(repo.dir, 'img.bin'), BINARY);
  repo.git('add', '-A');
  const head = repo.git('rev-parse', 'HEAD').trim();
  expect((await post('git_diff', { session_id: sessionId, tool_session: 'ts-staged', staged: true })).status).toBe(200);

  const commit = post('git_commit', { session_id: sessionId, tool_session: 'ts-staged', message: 'Staged set' });
  await expect(page.getByTestId('approval-prompt')).toBeVisible();
  const file = (p: string) => page.locator(`[data-testid="approval-file"][data-path="${p}"]`);
  await expect(page.getByTestId('approval-file')).toHaveCount(4);
  await expect(file('img.bin').getByTestId('approval-file-stats')).toHaveText('binary');
  await expect(file('img.bin').getByTestId('approval-file-new')).toHaveText('new');

  const open = async (p: string) => {
    await file(p).getByTestId('approval-file-toggle').click();
    await expect(file(p).getByTestId('approval-diff')).toBeVisible();
    await expect(file(p).getByTestId('approval-diff-empty')).toHaveCount(0);
    return file(p).getByTestId('approval-diff');
  };
  await expect((await open('app.txt')).getByTestId('approval-diff-label')).toHaveText(['mode 644 -> 755']);
  await expect((await open('img.bin')).getByTestId('approval-diff-label')).toHaveText(['new binary file']);
  const added = await open('new.txt');
  await expect(added.locator('[data-testid="approval-diff-line"][data-kind="add"] td.code')).toHaveText([
    '+moved',
    '+lines',
  ]);
  const removed = await open('old.txt');
  await expect(removed.locator('[data-testid="approval-diff-line"][data-kind="del"] td.code')).toHaveText([
    '-moved',
    '-lines',
  ]);

  await page.getByTestId('approval-deny').click();
  await page.getByTestId('approval-deny-confirm').click();
  expect((await commit).status).toBe(409);
  expect(repo.git('rev-parse', 'HEAD').trim()).toBe(head);
});

test('a commit with paths shows HEAD against the work tree: the staged line-1 change and the unstaged line-100 change', async ({
  page,
}) => {
  await page.goto(`${server.url}/`);
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  const hundred = (first: string, last: string) =>
    [first, ...Array.from({ length: 98 }, (_, i) => `line ${i + 2}`), last].join('\n') + '\n';
  const { repo, sessionId } = await session({ 'a.txt': hundred('line 1', 'line 100') });
  repo.write('a.txt', hundred('line 1 STAGED', 'line 100'));
  repo.git('add', 'a.txt');
  repo.write('a.txt', hundred('line 1 STAGED', 'line 100 UNSTAGED'));
  expect((await post('git_diff', { session_id: sessionId, tool_session: 'ts-paths', spec: 'HEAD' })).status).toBe(200);

  const commit = post('git_commit', {
    session_id: sessionId,
    tool_session: 'ts-paths',
    message: 'Both edits',
    paths: ['a.txt'],
  });
  const file = page.locator('[data-testid="approval-file"][data-path="a.txt"]');
  await expect(file.getByTestId('approval-file-stats')).toHaveText('+2 -2');
  await file.getByTestId('approval-file-toggle').click();
  const diff = file.getByTestId('approval-diff');
  await expect(diff.locator('[data-testid="approval-diff-line"][data-kind="add"] td.code')).toHaveText([
    '+line 1 STAGED',
    '+line 100 UNSTAGED',
  ]);
  await expect(diff.locator('[data-testid="approval-diff-line"][data-kind="del"] td.code')).toHaveText([
    '-line 1',
    '-line 100',
  ]);

  await page.getByTestId('approval-approve').click();
  expect((await commit).status).toBe(200);
  expect(repo.git('show', 'HEAD:a.txt')).toBe(hundred('line 1 STAGED', 'line 100 UNSTAGED'));
});

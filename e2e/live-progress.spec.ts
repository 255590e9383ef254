import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { bridge, expect, openSession, ownServer, servers, test, uid, workspace } from './support.ts';

/** Writes `count` files in folders of 200 (a real tree, left uncommitted: the checkpoint takes them as they are). */
function fillTree(dir: string, count: number): void {
  for (let i = 0; i < count; i++) {
    const folder = path.join(dir, `pkg${Math.floor(i / 200)}`, 'src');
    if (i % 200 === 0) fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, `f${i % 200}.ts`), `export const v${i} = ${i};\n`);
  }
}

/** Edits files one by one until the open run's progress lists the last one written; returns how many. */
async function editUntilListed(page: Page, runId: string, write: (n: number) => string): Promise<number> {
  const progress = page.locator(`[data-testid="run-progress"][data-run-id="${runId}"]`);
  let written = 0;
  await expect(async () => {
    const p = write(written++);
    await expect(progress.getByTestId('progress-path').first()).toHaveText(p, { timeout: 2_500 });
  }).toPass({ timeout: 20_000 });
  return written;
}

test('a run in a 6,000-file workspace (over the old cut-off) lists the touched paths live, newest first', async ({
  page,
}) => {
  test.setTimeout(60_000);
  const ws = workspace({ 'README.md': 'r\n' });
  fillTree(ws.dir, 6_000);
  const sid = uid('s');
  const run = uid('r');
  try {
    await bridge(servers.main, { type: 'session.upsert', session_id: sid, title: 'Big tree', workspace: ws.dir });
    await openSession(page, servers.main, sid);
    await bridge(servers.main, { type: 'run.started', session_id: sid, run_id: run });
    const written = await editUntilListed(page, run, (n) => {
      const rel = `pkg${n % 30}/src/f${n}.ts`;
      ws.write(rel, `changed ${n}\n`);
      return rel;
    });
    const progress = page.locator(`[data-testid="run-progress"][data-run-id="${run}"]`);
    await expect(progress).toHaveAttribute('data-mode', 'watch');
    await expect(progress.getByTestId('progress-pace')).toHaveCount(0);
    await expect(progress.getByTestId('progress-heading')).toHaveText(/^Working\.\.\. \d+ files? touched$/);
    // A few more edits: the list stays compact and says how many it does not show.
    for (let n = written; n < written + 8; n++) ws.write(`pkg${n % 30}/src/f${n}.ts`, `changed ${n}\n`);
    await expect(progress.getByTestId('progress-more')).toHaveText(/^\+\d+ more files?$/);
    await expect(progress.getByTestId('progress-path')).toHaveCount(5);
    await bridge(servers.main, { type: 'run.completed', session_id: sid, run_id: run });
    await expect(progress).toHaveCount(0);
    await expect(page.locator(`[data-change-id="run:${run}"] [data-testid="change-heading"]`)).toHaveText(
      `Changed ${written + 8} files`,
    );
  } finally {
    ws.cleanup();
  }
});

test('where the workspace is not watched the timeline still lists touched paths and says how often it checks', async ({
  page,
}) => {
  test.setTimeout(60_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-e2e-poll-'));
  // A watch budget of one folder: any workspace with a subfolder is checked periodically.
  const server = await ownServer(path.join(dir, 'poll.db'), { RUNDIFF_LIVE_FEED_MAX_WATCHES: '1' });
  const ws = workspace({ 'src/a.ts': 'a\n', 'docs/b.md': 'b\n' });
  const sid = uid('s');
  const run = uid('r');
  try {
    await bridge(server.url, { type: 'session.upsert', session_id: sid, title: 'Polled', workspace: ws.dir });
    await openSession(page, server.url, sid);
    await bridge(server.url, { type: 'run.started', session_id: sid, run_id: run });
    ws.write('src/a.ts', 'changed\n');
    ws.write('docs/new.md', 'n\n');
    const progress = page.locator(`[data-testid="run-progress"][data-run-id="${run}"]`);
    await expect(progress.getByTestId('progress-path')).toHaveText(['docs/new.md', 'src/a.ts'], { timeout: 20_000 });
    await expect(progress).toHaveAttribute('data-mode', 'poll');
    await expect(progress.getByTestId('progress-heading')).toHaveText('Working... 2 files touched');
    await expect(progress.getByTestId('progress-pace')).toHaveText(/· checking every \d+ s$/);
    await expect(progress.getByTestId('progress-pace')).toHaveAttribute('title', /more folders than rundiff watches/);
    await bridge(server.url, { type: 'run.completed', session_id: sid, run_id: run });
    await expect(progress).toHaveCount(0);
    await expect(page.locator(`[data-change-id="run:${run}"] [data-testid="change-heading"]`)).toHaveText(
      'Changed 2 files',
    );
  } finally {
    await server.stop();
    ws.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

import fs from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempRepo, type TempRepo } from '../test-support/temp-repo.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const FILES = 120;
const name = (i: number) => `src/f${String(i).padStart(3, '0')}.txt`;

/** A run that changed FILES files: file i gains i+1 lines and loses its one line. */
async function bigRun(): Promise<{ t: TestServer; repo: TempRepo; base: string }> {
  const files: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) files[name(i)] = 'old\n';
  const repo = createTempRepo({ files });
  cleanups.push(() => fs.rmSync(repo.dir, { recursive: true, force: true }));
  const t = await startTestServer();
  cleanups.push(() => t.close());
  await t.post({ type: 'session.upsert', session_id: 's', workspace: repo.dir });
  await t.post({ type: 'run.started', session_id: 's', run_id: 'r' });
  for (let i = 0; i < FILES; i++) repo.write(name(i), 'new\n'.repeat(i + 1));
  expect((await t.post({ type: 'run.completed', session_id: 's', run_id: 'r' })).status).toBe(200);
  return { t, repo, base: '/api/hermes/sessions/s/workspace-run-changes/run%3Ar' };
}

// 1 + 2 + ... + 120 lines added, one deleted per file.
const ADDED = (FILES * (FILES + 1)) / 2;

describe('change totals', () => {
  it('a paged change carries its line totals over every stored row, not only its first page', async () => {
    const { t, base } = await bigRun();
    const { change } = (await t.get(base)).body;
    expect(change.files_total).toBe(FILES);
    expect(change.files).toHaveLength(50);
    expect([change.total_additions, change.total_deletions]).toEqual([ADDED, FILES]);
    const detail = (await t.get('/api/hermes/sessions/s')).body;
    const listed = detail.changes.find((c: { change_id: string }) => c.change_id === 'run:r');
    expect([listed.total_additions, listed.total_deletions]).toEqual([ADDED, FILES]);
    const list = (await t.get('/api/hermes/sessions/s/workspace-run-changes')).body.changes[0];
    expect([list.total_additions, list.total_deletions]).toEqual([ADDED, FILES]);
  });

  it('a change stored without totals (an older release) has them summed from its rows when read', async () => {
    const { t, base } = await bigRun();
    const wipe = 'UPDATE workspace_run_changes SET total_additions = NULL, total_deletions = NULL';
    if (t.databaseUrl === null) {
      const db = new Database(t.dbPath);
      db.prepare(wipe).run();
      db.close();
    } else {
      const client = new pg.Client({ connectionString: t.databaseUrl });
      await client.connect();
      await client.query(wipe);
      await client.end();
    }
    // Nothing was read before the wipe, so no answer of before it is kept.
    const { change } = (await t.get(base)).body;
    expect([change.total_additions, change.total_deletions]).toEqual([ADDED, FILES]);
    const detail = (await t.get('/api/hermes/sessions/s')).body;
    expect([detail.changes[0].total_additions, detail.changes[0].total_deletions]).toEqual([ADDED, FILES]);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, testStoreEngine, type TestServer } from '../test-support/server-harness.ts';
import { createTempRepo, type TempRepo } from '../test-support/index.ts';
import { sqliteDb } from '../test-support/store-engines.ts';

/**
 * A completion whose result the database refuses (a real SQLITE_FULL: the connection's page limit
 * is lowered to the pages in use) must keep its checkpoint, name the storage failure, and be
 * stored by a retry once the database can be written again.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<{ t: TestServer; repo: TempRepo }> {
  const t = await startTestServer();
  cleanups.push(() => t.close());
  const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
  cleanups.push(() => repo.cleanup());
  await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
  return { t, repo };
}

/** Lines enough that the change's patch needs many new database pages. */
const bulky = (tag: string) => Array.from({ length: 2_000 }, (_, i) => `${tag} line ${i} of a long file\n`).join('');

/** The database is full from here on: no new page may be added (SQLite's own SQLITE_FULL). */
function fillDatabase(t: TestServer): void {
  const db = sqliteDb(t.server.store);
  db.pragma('wal_checkpoint(TRUNCATE)');
  const pages = db.pragma('page_count', { simple: true }) as number;
  db.pragma(`max_page_count = ${pages}`);
}
const makeRoom = (t: TestServer) => sqliteDb(t.server.store).pragma('max_page_count = 1073741823');

const count = (t: TestServer, table: string) =>
  (sqliteDb(t.server.store).prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

const paths = (body: { files: { path: string; change_type: string }[] }) =>
  body.files.map((f) => [f.path, f.change_type]).sort();

// A full database is made with SQLite's page limit; PostgreSQL has no such per-database switch.
describe.skipIf(testStoreEngine() !== 'sqlite')('a completion the database refuses', () => {
  it('control: with the page limit lowered a plain insert really fails with SQLITE_FULL', async () => {
    const { t } = await setup();
    fillDatabase(t);
    expect(() =>
      sqliteDb(t.server.store)
        .prepare('INSERT INTO messages (id, session_id, role, content, created_at) VALUES (?, ?, ?, ?, ?)')
        .run('m-big', 's1', 'user', bulky('m'), 1),
    ).toThrow(expect.objectContaining({ code: 'SQLITE_FULL' }));
  });

  it('run.completed on a full database answers storage_failed, keeps the checkpoint, and the retry stores the same change once', async () => {
    const { t, repo } = await setup();
    expect((await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' })).body.tracking).toBe(true);
    repo.write('a.txt', bulky('a'));
    repo.write('b.txt', bulky('b'));
    fillDatabase(t);

    const failed = await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
    expect(failed.status).toBe(500);
    expect(failed.body.error).toMatchObject({ code: 'storage_failed', details: { sqlite_code: 'SQLITE_FULL' } });
    expect(failed.body.error.message).toContain('run:r1');
    expect(t.server.engine.has('s1', 'run:r1')).toBe(true);
    expect(count(t, 'workspace_run_changes')).toBe(0);
    let detail = await t.get('/api/hermes/sessions/s1');
    expect(detail.body.runs[0]).toMatchObject({ run_id: 'r1', status: 'running' });

    // Space comes back; the run's files move on meanwhile, the stored change is the one computed.
    makeRoom(t);
    repo.write('c.txt', 'late\n');
    const retried = await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ change_id: 'run:r1', tracking: true, changed_count: 2 });
    expect(paths(retried.body)).toEqual([
      ['a.txt', 'modified'],
      ['b.txt', 'added'],
    ]);
    expect(t.server.engine.has('s1', 'run:r1')).toBe(false);
    detail = await t.get('/api/hermes/sessions/s1');
    expect(detail.body.runs[0]).toMatchObject({ run_id: 'r1', status: 'completed', tracking: true, reason: null });
    expect(detail.body.changes).toHaveLength(1);

    // A repeat after success answers as the stored completion did: no second row.
    const again = await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(retried.body);
    expect(count(t, 'workspace_run_changes')).toBe(1);
  });

  it('tool.completed on a full database answers storage_failed and the retry stores the tool change', async () => {
    const { t, repo } = await setup();
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
    expect(
      (await t.post({ type: 'tool.started', session_id: 's1', run_id: 'r1', tool_call_id: 'tc1', name: 'edit' })).body
        .tracking,
    ).toBe(true);
    repo.write('t.txt', bulky('t'));
    fillDatabase(t);

    const failed = await t.post({ type: 'tool.completed', session_id: 's1', run_id: 'r1', tool_call_id: 'tc1' });
    expect(failed.status).toBe(500);
    expect(failed.body.error).toMatchObject({ code: 'storage_failed', details: { sqlite_code: 'SQLITE_FULL' } });
    expect(t.server.engine.has('s1', 'tool:tc1')).toBe(true);

    makeRoom(t);
    const retried = await t.post({ type: 'tool.completed', session_id: 's1', run_id: 'r1', tool_call_id: 'tc1' });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ change_id: 'tool:tc1', tracking: true, changed_count: 1 });
    expect(paths(retried.body)).toEqual([['t.txt', 'added']]);
    const detail = await t.get('/api/hermes/sessions/s1');
    expect(detail.body.tool_calls[0]).toMatchObject({ tool_call_id: 'tc1', status: 'completed', tracking: true });
    const again = await t.post({ type: 'tool.completed', session_id: 's1', run_id: 'r1', tool_call_id: 'tc1' });
    expect(again.body).toEqual(retried.body);
    expect(count(t, 'workspace_run_changes')).toBe(1);
  });
});

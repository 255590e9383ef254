import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../store/index.ts';
import { startTestServer, testStoreEngine, type TestServer } from '../test-support/server-harness.ts';
import { selectRows } from '../test-support/store-engines.ts';
import { createTempDir, createTempRepo, type TempRepo } from '../test-support/temp-repo.ts';

/**
 * A completion is answered once its change is stored; the contents kept for undo are hashed,
 * compressed and written after the answer. Until then they are `pending`; undo and the content
 * routes wait for them; shutdown waits for them; a server that stops first leaves them `pending`,
 * and undo says so instead of guessing.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(dbPath?: string): Promise<{ t: TestServer; repo: TempRepo }> {
  const t = await startTestServer(dbPath ? { dbPath } : {});
  cleanups.push(() => t.close());
  const repo = createTempRepo({ files: { 'a.txt': 'one\n', 'b.txt': 'bee\n' }, git: false });
  cleanups.push(() => repo.cleanup());
  await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
  return { t, repo };
}

const reasons = async (store: Store, changeId: string) =>
  (
    await selectRows<{ before_reason: string | null; after_reason: string | null }>(
      store,
      'SELECT before_reason, after_reason FROM change_file_contents WHERE change_id = ? ORDER BY file_id',
      [changeId],
    )
  ).flatMap((r) => [r.before_reason, r.after_reason]);

/**
 * The contents still pending right after the answer. Checked on SQLite only: there the read is
 * synchronous and lands before the fill's first turn; on PostgreSQL the read itself takes round
 * trips while the fill runs, so the state it sees depends on timing (what follows is checked on both).
 */
async function expectPending(t: TestServer, changeId: string, expected: (string | null)[]) {
  const seen = await reasons(t.server.store, changeId);
  if (testStoreEngine() === 'sqlite') expect(seen).toEqual(expected);
}

/** Starts and completes run `runId` in process; resolves with the completion's answer, contents not written yet. */
async function completeInProcess(t: TestServer, runId: string, edit: () => void) {
  const started = await t.server.recorder.runStarted({ session_id: 's1', run_id: runId });
  expect(started.tracking).toBe(true);
  edit();
  return t.server.recorder.runCompleted({ session_id: 's1', run_id: runId });
}

describe('contents written after the answer', () => {
  it('are pending when the completion is answered and written once the fill settles', async () => {
    const { t, repo } = await setup();
    const done = await completeInProcess(t, 'r1', () => repo.write('a.txt', 'one\ntwo\n'));
    expect(done).toMatchObject({ change_id: 'run:r1', changed_count: 1 });
    // Answered, stored, and the contents not written yet.
    expect(await t.server.store.changes.get('s1', 'run:r1')).not.toBeNull();
    await expectPending(t, 'run:r1', ['pending', 'pending']);
    await t.server.recorder.contentsSettled('s1', 'run:r1');
    expect(await reasons(t.server.store, 'run:r1')).toEqual([null, null]);
  });

  it('an undo asked right after the answer waits for them and restores the file', async () => {
    const { t, repo } = await setup();
    await completeInProcess(t, 'r1', () => repo.write('a.txt', 'one\ntwo\n'));
    // Positive control: at this moment an undo reading the store alone would find nothing to restore.
    await expectPending(t, 'run:r1', ['pending', 'pending']);
    const res = await t.server.reverter.revert('s1', 'run:r1', {});
    expect(res.files.map((f) => [f.path, f.action, f.applied])).toEqual([['a.txt', 'restore', true]]);
    expect(repo.read('a.txt').toString()).toBe('one\n');
  });

  it("the content route answers the change's bytes right after the answer", async () => {
    const { t, repo } = await setup();
    await completeInProcess(t, 'r1', () => repo.write('b.txt', 'bee\nsting\n'));
    const fileId = (await t.server.store.changes.filesPage('s1', 'run:r1', -1, 10))!.files[0]!.id;
    const res = await t.get(
      `/api/hermes/sessions/s1/workspace-run-changes/run%3Ar1/files/${fileId}/content?side=after`,
    );
    expect(res.status).toBe(200);
    expect(res.body.content.text).toBe('bee\nsting\n');
  });

  it('a comment on a line its patch does not show, asked right after the answer, is anchored from the contents', async () => {
    const { t, repo } = await setup();
    const long = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
    repo.write('a.txt', `${long.join('\n')}\n`);
    await completeInProcess(t, 'r1', () => repo.write('a.txt', `${['first', ...long.slice(1)].join('\n')}\n`));
    // Positive control: the after side is not written yet, and line 15 is outside the patch's hunk.
    const sides = await reasons(t.server.store, 'run:r1');
    if (testStoreEngine() === 'sqlite') expect(sides[1]).toBe('pending'); // see expectPending
    const fileId = (await t.server.store.changes.filesPage('s1', 'run:r1', -1, 10))!.files[0]!.id;
    const res = await t.request('POST', '/api/hermes/sessions/s1/comments', {
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        change_id: 'run:r1',
        file_id: fileId,
        side: 'after',
        start_line: 15,
        end_line: 15,
        body: 'why?',
      }),
    });
    expect(res.status).toBe(201);
    expect(res.body.comment.anchor.lines).toEqual(['line 15']);
  });

  it('shutdown waits for them before the database closes', async () => {
    const dir = createTempDir('rundiff-fill-close-');
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const dbPath = path.join(dir, 'db.sqlite');
    const { t, repo } = await setup(dbPath);
    await completeInProcess(t, 'r1', () => repo.write('a.txt', 'one\ntwo\n'));
    await expectPending(t, 'run:r1', ['pending', 'pending']);
    await t.server.close();
    // Read back from the database the server wrote (on SQLite, the file it closed).
    const store = t.databaseUrl ? t.server.store : openStore(dbPath);
    if (!t.databaseUrl) cleanups.push(() => store.close());
    expect(await reasons(store, 'run:r1')).toEqual([null, null]);
  });

  // The crash is a copy of the SQLite file taken between the answer and the fill.
  it.skipIf(testStoreEngine() !== 'sqlite')(
    'a server stopped between the answer and the fill leaves them pending, and undo says so and writes nothing',
    async () => {
      const { t, repo } = await setup();
      await completeInProcess(t, 'r1', () => repo.write('a.txt', 'one\ntwo\n'));
      // The database as a crash at this moment would leave it: committed rows, contents not written.
      const dir = createTempDir('rundiff-fill-crash-');
      cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
      const copy = path.join(dir, 'db.sqlite');
      for (const suffix of ['', '-wal'])
        if (fs.existsSync(t.dbPath + suffix)) fs.copyFileSync(t.dbPath + suffix, copy + suffix);
      const after = await startTestServer({ dbPath: copy });
      cleanups.push(() => after.close());
      expect(await reasons(after.server.store, 'run:r1')).toEqual(['pending', 'pending']);
      const dry = await after.server.reverter.revert('s1', 'run:r1', { dry_run: true });
      expect(dry.files[0]).toMatchObject({ action: 'unavailable', applied: false });
      expect(dry.files[0]!.reason).toMatch(/^pending: .*server stopped/);
      expect(repo.read('a.txt').toString()).toBe('one\ntwo\n');
    },
  );
});

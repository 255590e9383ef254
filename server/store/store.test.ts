import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { describeEachEngine } from '../test-support/store-engines.ts';
import { createTempDir } from '../test-support/temp-repo.ts';
import {
  applyMigrations,
  readMigrations,
  createStore,
  MIGRATIONS_DIR,
  openDatabase,
  openStore,
  type PendingContent,
  type SqliteStore,
} from './index.ts';
import { SESSION_COLUMNS } from './sessions.ts';
import { storedChange as change, storedFile as file } from '../test-support/store-fixtures.ts';

const dirs: string[] = [];
const stores: SqliteStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempStore(): SqliteStore {
  const dir = createTempDir();
  dirs.push(dir);
  const store = openStore(path.join(dir, 'nested', 'folder', 'rundiff.db'));
  stores.push(store);
  return store;
}

describe('SQLite database', () => {
  it('migrations apply to an empty database, are recorded, and a re-run applies nothing', () => {
    const dir = createTempDir();
    dirs.push(dir);
    const file = path.join(dir, 'a', 'b', 'x.db');
    const db = openDatabase(file);
    expect(fs.existsSync(file)).toBe(true);
    const tables = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]
    ).map((r) => r.name);
    expect(tables).toEqual(
      expect.arrayContaining([
        'messages',
        'runs',
        'schema_migrations',
        'sessions',
        'tool_calls',
        'workspace_run_change_files',
        'workspace_run_changes',
      ]),
    );
    const known = readMigrations(MIGRATIONS_DIR).map((m) => ({ version: m.version, name: m.name }));
    expect(known[0]).toEqual({ version: 1, name: 'init' });
    expect(db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all()).toEqual(known);
    expect(applyMigrations(db, MIGRATIONS_DIR)).toEqual([]);
    db.close();
    const again = openDatabase(file);
    onTestFinished(() => void again.close());
    expect(again.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get()).toEqual({ n: known.length });
  });

  it('sets the pragmas: WAL, foreign keys, busy timeout, synchronous NORMAL', () => {
    const s = tempStore();
    expect(s.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(s.db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(s.db.pragma('busy_timeout', { simple: true })).toBe(5000);
    expect(s.db.pragma('synchronous', { simple: true })).toBe(1);
  });

  it('refuses a database written by a newer schema', () => {
    const s = tempStore();
    s.db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, ?, 0)').run('future');
    expect(() => applyMigrations(s.db, MIGRATIONS_DIR)).toThrow(/newer than this rundiff knows/);
  });

  it('a failing migration leaves the previous version intact', () => {
    const dir = createTempDir();
    dirs.push(dir);
    fs.copyFileSync(new URL('0001_init.sql', MIGRATIONS_DIR), path.join(dir, '0001_init.sql'));
    fs.writeFileSync(path.join(dir, '0002_broken.sql'), 'CREATE TABLE extra (x INTEGER);\nTHIS IS NOT SQL;');
    const db = new Database(':memory:');
    onTestFinished(() => void db.close());
    expect(() => applyMigrations(db, dir)).toThrow();
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'extra'").get()).toBeUndefined();
    expect(db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get()).toEqual({ v: 1 });
  });

  it('the changed-path total kept between reads of a session moves with every write of its changes: own, retention, another connection', async () => {
    const s = tempStore();
    await s.sessions.touch('s1', 1);
    await s.changes.insert(change('s1', 'r1', 10), [file('a.txt')], 2);
    expect((await s.sessions.get('s1'))!.changed_count).toBe(1);
    await s.changes.insert(change('s1', 'r2', 11), [file('b.txt')], 2);
    expect((await s.sessions.get('s1'))!.changed_count).toBe(2);
    // Retention keeps two changes here: r1's goes, and a.txt with it.
    await s.changes.insert(change('s1', 'r3', 12), [file('b.txt', { change_type: 'modified' })], 2);
    expect((await s.sessions.get('s1'))!.changed_count).toBe(1);
    // Writes to other rows of the session leave the total as it is.
    await s.sessions.touch('s1', 2);
    await s.messages.insert({
      id: 'm',
      session_id: 's1',
      role: 'user',
      content: 'x',
      run_id: null,
      tool_call_id: null,
      created_at: 3,
    });
    expect(await s.sessions.get('s1')).toMatchObject({ changed_count: 1, updated_at: 2 });
    const other = openStore(s.db.name);
    stores.push(other);
    await other.changes.insert(change('s1', 'r4', 13), [file('c.txt'), file('d.txt')], 200);
    expect((await s.sessions.get('s1'))!.changed_count).toBe(3);
    await s.sessions.delete('s1');
    await s.sessions.touch('s1', 4);
    expect((await s.sessions.get('s1'))!.changed_count).toBe(0);
  });

  it('the distinct-path total reads the session/path index, not every file row', () => {
    const s = tempStore();
    // The statement the session row is read with, not the subquery alone: correlated to the outer
    // row, the planner chose another index for it.
    const plan = s.db
      .prepare(`EXPLAIN QUERY PLAN SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.id = ?`)
      .all('s') as {
      detail: string;
    }[];
    const details = plan.map((p) => p.detail).join('\n');
    expect(details).toMatch(/f USING COVERING INDEX idx_workspace_run_change_files_session_path/);
    expect(details).not.toMatch(/TEMP B-TREE/);
  });

  it('the store is usable on a second connection to the same file (WAL)', async () => {
    const s = tempStore();
    await s.sessions.touch('s1', 1);
    const other = createStore(openDatabase(s.db.name));
    stores.push(other);
    expect((await other.sessions.get('s1'))?.id).toBe('s1');
  });
});

describeEachEngine('changes', (engine) => {
  it('B23: a failure while storing the file rows leaves no summary behind', async () => {
    const s = await engine.open();
    await s.sessions.touch('s1', 1);
    const bad = file('b.txt', { change_type: 'exploded' as never });
    await expect(s.changes.insert(change('s1', 'r1', 100), [file('a.txt'), bad], 200)).rejects.toThrow();
    expect(await engine.count(s, 'workspace_run_changes')).toBe(0);
    expect(await engine.count(s, 'workspace_run_change_files')).toBe(0);
  });

  it('B23: a summary without its session is refused whole (no files without summary)', async () => {
    const s = await engine.open();
    await expect(s.changes.insert(change('ghost', 'r1', 100), [file('a.txt')], 200)).rejects.toThrow();
    expect(await engine.count(s, 'workspace_run_change_files')).toBe(0);
  });

  it('summaries carry file rows in path order and never a patch body; the file route reads one', async () => {
    const s = await engine.open();
    await s.sessions.touch('s1', 1);
    const stored = await s.changes.insert(
      change('s1', 'r1', 100, { changed_count: 2 }),
      [file('a.txt'), file('b.txt')],
      200,
    );
    const [listed] = await s.changes.listForSession('s1');
    expect(listed).toEqual(stored);
    expect(listed!.files.map((f) => f.path)).toEqual(['a.txt', 'b.txt']);
    for (const f of listed!.files) expect(f).not.toHaveProperty('patch');
    expect(await s.changes.getFile('s1', 'run:r1', stored.files[1]!.id)).toEqual({
      ...stored.files[1],
      patch: 'diff --git a/b.txt b/b.txt\n',
    });
    expect(await s.changes.getFile('s1', 'run:r2', stored.files[1]!.id)).toBeNull();
  });

  it('B22: keeps the newest N run-level changes; an evicted run takes its tool changes along', async () => {
    const s = await engine.open();
    await s.sessions.touch('s1', 1);
    await s.sessions.touch('s2', 1);
    await s.changes.insert(
      change('s1', 'r1', 100, { change_id: 'tool:t1', source: 'tool', tool_call_id: 't1' }),
      [file('t.txt')],
      2,
    );
    await s.changes.insert(change('s1', 'r1', 110), [file('a.txt')], 2);
    await s.changes.insert(change('s2', 'r9', 115), [file('z.txt')], 2);
    await s.changes.insert(change('s1', 'r2', 120), [file('b.txt')], 2);
    expect((await s.changes.listForSession('s1')).map((c) => c.change_id)).toEqual(['tool:t1', 'run:r1', 'run:r2']);
    await s.changes.insert(change('s1', 'r3', 130), [file('c.txt')], 2);
    expect((await s.changes.listForSession('s1')).map((c) => c.change_id)).toEqual(['run:r2', 'run:r3']);
    expect((await s.changes.listForSession('s2')).map((c) => c.change_id)).toEqual(['run:r9']);
    expect(await engine.count(s, 'workspace_run_change_files')).toBe(3);
  });

  it('B22: the age sweep removes changes stored before the cutoff with their files', async () => {
    const s = await engine.open();
    await s.sessions.touch('s1', 1);
    await s.changes.insert(change('s1', 'old', 1_000), [file('a.txt')], 200);
    await s.changes.insert(change('s1', 'new', 5_000), [file('b.txt')], 200);
    expect(await s.changes.deleteOlderThan(2_000)).toBe(1);
    expect((await s.changes.listForSession('s1')).map((c) => c.run_id)).toEqual(['new']);
    expect(await engine.count(s, 'workspace_run_change_files')).toBe(1);
  });

  it('a change of more rows than one statement takes stores every row, in order, paged by position', async () => {
    const s = await engine.open();
    await s.sessions.touch('s1', 1);
    const names = Array.from({ length: 1_201 }, (_, i) => `src/f${String(i).padStart(4, '0')}.txt`);
    const stored = await s.changes.insert(
      change('s1', 'r1', 100),
      names.map((n) => file(n)),
      200,
    );
    expect(stored.files_total).toBe(1_201);
    expect(await engine.count(s, 'workspace_run_change_files')).toBe(1_201);
    const seen: string[] = [];
    for (let after = -1; ;) {
      const page = (await s.changes.filesPage('s1', 'run:r1', after, 500))!;
      seen.push(...page.files.map((f) => f.path));
      if (page.next_file_cursor === null) break;
      after = Number(page.next_file_cursor);
    }
    expect(seen).toEqual(names);
    expect((await s.changes.filesWithPatches('s1', 'run:r1')).map((f) => f.path)).toEqual(names);
  });
});

describeEachEngine('contents', (engine) => {
  const raw = (text: string) => {
    const data = Buffer.from(text);
    return {
      mode: '100644',
      sha256: createHash('sha256').update(data).digest('hex'),
      size: data.length,
      codec: 'raw' as const,
      data,
    };
  };

  it('a fill whose eviction releases a content a later side of it names writes that content again', async () => {
    const s = await engine.open();
    await s.sessions.touch('s', 1);
    const small = raw('s'.repeat(100));
    const large = raw('l'.repeat(1_000));
    const middle = raw('m'.repeat(500));
    await s.changes.insert(change('s', 'r1', 10), [file('a'), file('b')], 10);
    const p1 = await s.contents.record('s', 'run:r1', [
      { before: { mode: null }, after: small },
      { before: { mode: null }, after: large },
    ]);
    await s.contents.fill(p1 as PendingContent[], 10_000, 11);
    // Room for the small and the middle content, not for the large one besides: the middle one
    // evicts r1 (small and large go), then the small one is named again and fits.
    const budget = small.data.length + middle.data.length + 10;
    await s.changes.insert(change('s', 'r2', 20), [file('c'), file('d')], 10);
    const p2 = await s.contents.record('s', 'run:r2', [
      { before: { mode: null }, after: middle },
      { before: { mode: null }, after: small },
    ]);
    await s.contents.fill(p2 as PendingContent[], budget, 21);
    expect([...(await s.contents.forChange('s', 'run:r1')).values()].map((c) => c.after.reason)).toEqual([
      'evicted',
      'evicted',
    ]);
    const second = [...(await s.contents.forChange('s', 'run:r2')).values()].map((c) => c.after);
    expect(second.map((side) => [side.sha256, side.reason]).sort()).toEqual(
      [
        [middle.sha256, null],
        [small.sha256, null],
      ].sort(),
    );
    expect((await s.contents.blob(small.sha256))?.toString()).toBe('s'.repeat(100));
    expect(await s.contents.blob(large.sha256)).toBeNull();
    expect(await s.contents.stats(budget)).toEqual({
      bytes_used: small.data.length + middle.data.length,
      max_bytes: budget,
      blobs: 2,
    });
  });
});

describeEachEngine('sessions and messages', (engine) => {
  it('B22: deleting a session removes its messages, runs, tool calls, changes and files at once', async () => {
    const s = await engine.open();
    for (const id of ['s1', 's2']) {
      await s.sessions.touch(id, 1);
      await s.messages.insert({
        id: 'm',
        session_id: id,
        role: 'user',
        content: 'hi',
        run_id: null,
        tool_call_id: null,
        created_at: 1,
      });
      await s.runs.insertRun({
        run_id: 'r1',
        session_id: id,
        title: null,
        status: 'running',
        source: 'run',
        workspace: null,
        started_at: 1,
        finished_at: null,
        error: null,
        change_id: 'run:r1',
        tracking: false,
        reason: null,
      });
      await s.runs.insertToolCall({
        tool_call_id: 't1',
        run_id: 'r1',
        session_id: id,
        name: null,
        status: 'running',
        workspace: null,
        started_at: 1,
        finished_at: null,
        error: null,
        change_id: 'tool:t1',
        tracking: false,
        reason: null,
      });
      await s.changes.insert(change(id, 'r1', 10), [file('a.txt')], 200);
    }
    expect(await s.sessions.delete('s1')).toBe(true);
    expect(await s.sessions.delete('s1')).toBe(false);
    for (const table of [
      'sessions',
      'messages',
      'runs',
      'tool_calls',
      'workspace_run_changes',
      'workspace_run_change_files',
    ]) {
      expect(await engine.count(s, table)).toBe(1);
    }
  });

  /** A run of `session_id` just started, with nothing else said of it. */
  const runningRun = (session_id: string, run_id: string) => ({
    run_id,
    session_id,
    title: null,
    status: 'running' as const,
    source: 'coding-agent' as const,
    workspace: null,
    started_at: 1,
    finished_at: null,
    error: null,
    change_id: `run:${run_id}`,
    tracking: false,
    reason: null,
  });

  it("a run's usage is stored once (a repeat keeps the first figures) and its session sums the runs that have one", async () => {
    const s = await engine.open();
    await s.sessions.touch('s1', 1);
    for (const id of ['r1', 'r2', 'r3']) await s.runs.insertRun(runningRun('s1', id));
    expect((await s.sessions.get('s1'))!.usage).toBeNull();
    await s.runs.recordUsage('s1', 'r1', { input: 10, output: 20, cache_read: 3_000_000_000, cache_write: 40 });
    await s.runs.recordUsage('s1', 'r1', { input: 99, output: 99, cache_read: 99, cache_write: 99 });
    await s.runs.recordUsage('s1', 'r2', { input: 1, output: 2, cache_read: 3, cache_write: 4 });
    expect((await s.runs.listRuns('s1')).map((r) => [r.run_id, r.usage])).toEqual([
      ['r1', { input: 10, output: 20, cache_read: 3_000_000_000, cache_write: 40 }],
      ['r2', { input: 1, output: 2, cache_read: 3, cache_write: 4 }],
      ['r3', null],
    ]);
    expect((await s.runs.getRun('s1', 'r2'))!.record.usage).toEqual({
      input: 1,
      output: 2,
      cache_read: 3,
      cache_write: 4,
    });
    expect((await s.sessions.get('s1'))!.usage).toEqual({
      input: 11,
      output: 22,
      cache_read: 3_000_000_003,
      cache_write: 44,
    });
    expect((await s.sessions.page(10, null)).sessions[0]!.usage).toEqual({
      input: 11,
      output: 22,
      cache_read: 3_000_000_003,
      cache_write: 44,
    });
  });

  it("a run's price is kept with its tokens, once; the session sums the priced runs and has none while none is", async () => {
    const s = await engine.open();
    await s.sessions.touch('s2', 1);
    for (const id of ['p1', 'p2', 'p3']) await s.runs.insertRun(runningRun('s2', id));
    const tokens = { input: 1, output: 2, cache_read: 3, cache_write: 4 };
    await s.runs.recordUsage('s2', 'p1', tokens); // tokens, no price
    expect((await s.sessions.get('s2'))!.usage).toEqual(tokens); // no money: none reported
    await s.runs.recordUsage('s2', 'p2', { ...tokens, cost_usd: 0.25 });
    await s.runs.recordUsage('s2', 'p2', { ...tokens, cost_usd: 9 }); // a repeat keeps the first
    await s.runs.recordUsage('s2', 'p3', { ...tokens, cost_usd: 0.0625 });
    expect((await s.runs.listRuns('s2')).map((r) => r.usage?.cost_usd)).toEqual([undefined, 0.25, 0.0625]);
    const session = (await s.sessions.get('s2'))!.usage!;
    expect(session.cost_usd).toBe(0.3125);
    expect(session.input).toBe(3);
  });

  it('session counts: run_count counts runs, changed_count counts distinct paths of run-level changes only', async () => {
    const s = await engine.open();
    await s.sessions.upsert('s1', { title: 'T' }, 5);
    await s.runs.insertRun({
      run_id: 'r1',
      session_id: 's1',
      title: null,
      status: 'running',
      source: 'run',
      workspace: null,
      started_at: 1,
      finished_at: null,
      error: null,
      change_id: 'run:r1',
      tracking: false,
      reason: null,
    });
    await s.changes.insert(change('s1', 'r1', 10, { changed_count: 2 }), [file('a.txt'), file('b.txt')], 200);
    // A second run changing a.txt again: the total names each path once.
    await s.changes.insert(
      change('s1', 'r2', 11, { changed_count: 2 }),
      [file('a.txt', { change_type: 'modified' }), file('c.txt')],
      200,
    );
    // Files past the stored-files limit cannot be told apart: they are added as counted.
    await s.changes.insert(change('s1', 'r3', 12, { changed_count: 5, omitted_count: 4 }), [file('a.txt')], 200);
    await s.changes.insert(
      change('s1', 'r1', 9, { change_id: 'tool:t', source: 'tool', tool_call_id: 't', changed_count: 7 }),
      [file('tool-only.txt')],
      200,
    );
    expect(await s.sessions.get('s1')).toEqual({
      id: 's1',
      title: 'T',
      workspace: null,
      created_at: 5,
      updated_at: 5,
      run_count: 1,
      changed_count: 3 + 4,
      failed_run_count: 0,
      running_run_count: 1,
      last_run_status: 'running',
      usage: null,
    });
    await s.sessions.upsert('s1', { workspace: '/w' }, 6);
    expect(await s.sessions.get('s1')).toMatchObject({ title: 'T', workspace: '/w', updated_at: 6 });
  });

  it('session pages are newest first and a cursor on updated_at never skips sessions that share it', async () => {
    const s = await engine.open();
    const times = [10, 20, 20, 20, 30];
    for (const [i, t] of times.entries()) await s.sessions.touch(`s${i}`, t);
    const first = await s.sessions.page(2, null);
    expect(first.sessions.map((x) => x.id)).toEqual(['s4', 's3', 's2', 's1']);
    expect(first.next_before).toBe(20);
    const second = await s.sessions.page(2, first.next_before);
    expect(second.sessions.map((x) => x.id)).toEqual(['s0']);
    expect(second.next_before).toBeNull();
    expect((await s.sessions.page(5, null)).next_before).toBeNull();
  });

  it('message pages: newest N, returned oldest first, ties at the boundary kept together', async () => {
    const s = await engine.open();
    await s.sessions.touch('s', 1);
    const at = [1, 2, 3, 3, 4];
    for (const [i, t] of at.entries())
      await s.messages.insert({
        id: `m${i}`,
        session_id: 's',
        role: 'user',
        content: String(i),
        run_id: null,
        tool_call_id: null,
        created_at: t,
      });
    expect((await s.messages.page('s', 500, null)).map((m) => m.id)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
    expect((await s.messages.page('s', 2, null)).map((m) => m.id)).toEqual(['m2', 'm3', 'm4']);
    expect((await s.messages.page('s', 2, 3)).map((m) => m.id)).toEqual(['m0', 'm1']);
  });
});

/** A promise with its resolve function (a flow waits on another flow's signal). */
function signal(): { promise: Promise<void>; fire: () => void } {
  let fire!: () => void;
  const promise = new Promise<void>((resolve) => (fire = resolve));
  return { promise, fire };
}

describeEachEngine('transactions', (engine) => {
  it("commits everything written through tx together when fn resolves, and answers fn's result", async () => {
    const s = await engine.open();
    const out = await s.transaction(async (tx) => {
      await tx.sessions.touch('s1', 1);
      await tx.changes.insert(change('s1', 'r1', 10), [file('a.txt')], 200);
      return 'done';
    });
    expect(out).toBe('done');
    expect((await s.changes.listForSession('s1')).map((c) => c.change_id)).toEqual(['run:r1']);
  });

  it('rolls back everything written through tx when fn rejects, and passes the rejection on', async () => {
    const s = await engine.open();
    await expect(
      s.transaction(async (tx) => {
        await tx.sessions.touch('s1', 1);
        await tx.changes.insert(change('s1', 'r1', 10), [file('a.txt')], 200);
        throw new Error('refused halfway');
      }),
    ).rejects.toThrow('refused halfway');
    expect(await s.sessions.exists('s1')).toBe(false);
    expect(await engine.count(s, 'workspace_run_change_files')).toBe(0);
  });

  it('a nested transaction that rejects undoes only its own writes', async () => {
    const s = await engine.open();
    await s.transaction(async (tx) => {
      await tx.sessions.touch('outer', 1);
      await expect(
        tx.transaction(async (inner) => {
          await inner.sessions.touch('inner', 1);
          throw new Error('inner refused');
        }),
      ).rejects.toThrow('inner refused');
      await tx.transaction(async (inner) => inner.sessions.touch('kept', 1));
    });
    expect(await s.sessions.exists('outer')).toBe(true);
    expect(await s.sessions.exists('inner')).toBe(false);
    expect(await s.sessions.exists('kept')).toBe(true);
  });

  it("refuses a transaction's modules once the transaction has ended", async () => {
    const s = await engine.open();
    let kept: Parameters<Parameters<typeof s.transaction>[0]>[0] | null = null;
    await s.transaction(async (tx) => {
      kept = tx;
    });
    await expect(kept!.sessions.touch('late', 1)).rejects.toThrow(/after the transaction ended/);
    await expect(kept!.transaction(async (inner) => inner.sessions.touch('later', 1))).rejects.toThrow(
      /after the transaction ended/,
    );
    expect(await s.sessions.exists('late')).toBe(false);
    expect(await s.sessions.exists('later')).toBe(false);
  });

  it('a call of another flow made while a transaction is open is not rolled back with it', async () => {
    const s = await engine.open();
    const issued = signal();
    const other: Promise<void>[] = [];
    const failing = s.transaction(async (tx) => {
      await tx.sessions.touch('a', 1);
      other.push(s.sessions.touch('b', 2));
      issued.fire();
      await issued.promise;
      throw new Error('a refused');
    });
    await expect(failing).rejects.toThrow('a refused');
    await Promise.all(other);
    expect(await s.sessions.exists('a')).toBe(false);
    expect(await s.sessions.exists('b')).toBe(true);
  });

  it("a read of another flow never sees a transaction's writes before they commit", async () => {
    const s = await engine.open();
    const issued = signal();
    const seen: Promise<boolean>[] = [];
    const failing = s.transaction(async (tx) => {
      await tx.sessions.touch('a', 1);
      seen.push(s.sessions.exists('a'));
      issued.fire();
      await issued.promise;
      throw new Error('a refused');
    });
    await expect(failing).rejects.toThrow('a refused');
    expect(await Promise.all(seen)).toEqual([false]);
  });

  it('transactions of two flows run one after the other, each seeing the other whole or not at all', async () => {
    const s = await engine.open();
    await s.sessions.touch('s1', 1);
    const order: string[] = [];
    const flow = (name: string, runId: string, at: number) =>
      s.transaction(async (tx) => {
        order.push(`${name} begins`);
        const before = (await tx.changes.listForSession('s1')).length;
        await tx.changes.insert(change('s1', runId, at), [file(`${runId}.txt`)], 200);
        await tx.sessions.touch('s1', at);
        order.push(`${name} ends`);
        return before;
      });
    const [first, second] = await Promise.all([flow('A', 'r1', 10), flow('B', 'r2', 20)]);
    expect(order).toEqual(['A begins', 'A ends', 'B begins', 'B ends']);
    expect([first, second]).toEqual([0, 1]);
  });

  it('calls and transactions made while a transaction is open take effect in the order they were made', async () => {
    const s = await engine.open();
    await s.sessions.touch('s', 1);
    const issued = signal();
    const steps: Promise<unknown>[] = [];
    const title = (t: string) => s.sessions.upsert('s', { title: t }, 1);
    const first = s.transaction(async (tx) => {
      await tx.sessions.upsert('s', { title: 'first' }, 1);
      steps.push(title('second'));
      steps.push(s.transaction(async (tx2) => tx2.sessions.upsert('s', { title: 'third' }, 1)));
      steps.push(s.sessions.get('s').then((x) => x?.title));
      steps.push(title('fourth'));
      issued.fire();
      await issued.promise;
    });
    await first;
    const [, , seen] = await Promise.all(steps);
    expect(seen).toBe('third');
    expect((await s.sessions.get('s'))?.title).toBe('fourth');
  });

  it("the write clock moves when a session's rows change", async () => {
    const s = await engine.open();
    await s.sessions.touch('s1', 1);
    await s.sessions.touch('s2', 1);
    const v1 = await s.clock.version('s1');
    expect(await s.clock.version('s1')).toBe(v1);
    await s.sessions.touch('s2', 2);
    await s.changes.insert(change('s1', 'r1', 10), [file('a.txt')], 200);
    const v2 = await s.clock.version('s1');
    expect(v2).not.toBe(v1);
    await s.changes.deleteOlderThan(0);
    expect(await s.clock.version('s1')).not.toBe(v2);
  });

  it('close waits for an open transaction to finish', async () => {
    const s = await engine.open();
    const issued = signal();
    const writing = s.transaction(async (tx) => {
      await issued.promise;
      await tx.sessions.touch('s1', 1);
    });
    const closing = s.close();
    issued.fire();
    await writing;
    await closing;
  });
});

describe('SQLite serialising', () => {
  // Without the gate, a call of another flow runs on the shared connection inside the open
  // transaction: the two guarantees above are lost. This shows those tests can fail.
  const noGate = {
    held: false,
    run: <T>(op: () => T) => Promise.resolve().then(op),
    tryAcquire: () => true,
    acquire: () => Promise.resolve(),
    release: () => {},
  };

  function ungated(): SqliteStore {
    const dir = createTempDir();
    dirs.push(dir);
    const store = createStore(openDatabase(path.join(dir, 'rundiff.db')), { gate: noGate });
    stores.push(store);
    return store;
  }

  it("positive control: without the gate another flow's write is rolled back with the transaction", async () => {
    const s = ungated();
    const issued = signal();
    const other: Promise<void>[] = [];
    const failing = s.transaction(async (tx) => {
      await tx.sessions.touch('a', 1);
      other.push(s.sessions.touch('b', 2));
      issued.fire();
      await issued.promise;
      throw new Error('a refused');
    });
    await expect(failing).rejects.toThrow('a refused');
    await Promise.all(other);
    expect(await s.sessions.exists('b')).toBe(false);
  });

  it('positive control: without the gate another flow reads rows not yet committed', async () => {
    const s = ungated();
    const issued = signal();
    const seen: Promise<boolean>[] = [];
    const failing = s.transaction(async (tx) => {
      await tx.sessions.touch('a', 1);
      seen.push(s.sessions.exists('a'));
      issued.fire();
      await issued.promise;
      throw new Error('a refused');
    });
    await expect(failing).rejects.toThrow('a refused');
    expect(await Promise.all(seen)).toEqual([true]);
  });

  it('a plain call runs at once while no transaction is open (no wait behind the gate)', async () => {
    const s = tempStore();
    const pending = s.sessions.touch('now', 1);
    // Already written before the promise is awaited: the fast path ran it in the call.
    expect(s.db.prepare('SELECT id FROM sessions').pluck().all()).toEqual(['now']);
    await pending;
  });
});

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { createTempDir } from '../test-support/temp-repo.ts';
import {
  applyMigrations,
  readMigrations,
  createStore,
  MIGRATIONS_DIR,
  openDatabase,
  openStore,
  type NewChange,
  type NewFile,
  type Store,
} from './index.ts';
import { SESSION_COLUMNS } from './sessions.ts';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempStore(): Store {
  const dir = createTempDir();
  dirs.push(dir);
  const store = openStore(path.join(dir, 'nested', 'folder', 'rundiff.db'));
  stores.push(store);
  return store;
}

function change(sessionId: string, runId: string, createdAt: number, extra: Partial<NewChange> = {}): NewChange {
  return {
    change_id: `run:${runId}`,
    session_id: sessionId,
    run_id: runId,
    tool_call_id: null,
    source: 'run',
    workspace: '/w',
    workspace_kind: 'git',
    started_at: createdAt - 10,
    finished_at: createdAt,
    changed_count: 1,
    added_count: 1,
    modified_count: 0,
    deleted_count: 0,
    renamed_count: 0,
    binary_count: 0,
    truncated: false,
    truncated_reasons: [],
    total_patch_bytes: 10,
    overlapping: false,
    omitted_count: 0,
    created_at: createdAt,
    ...extra,
  };
}

function file(p: string, extra: Partial<NewFile> = {}): NewFile {
  return {
    path: p,
    old_path: null,
    change_type: 'added',
    additions: 1,
    deletions: 0,
    binary: false,
    truncated: false,
    size_before: null,
    size_after: 2,
    patch_bytes: 10,
    omitted_reason: null,
    patch: `diff --git a/${p} b/${p}\n`,
    ...extra,
  };
}

const count = (s: Store, table: string) =>
  (s.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

describe('database', () => {
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
});

describe('changes', () => {
  it('B23: a failure while storing the file rows leaves no summary behind', () => {
    const s = tempStore();
    s.sessions.touch('s1', 1);
    const bad = file('b.txt', { change_type: 'exploded' as never });
    expect(() => s.changes.insert(change('s1', 'r1', 100), [file('a.txt'), bad], 200)).toThrow();
    expect(count(s, 'workspace_run_changes')).toBe(0);
    expect(count(s, 'workspace_run_change_files')).toBe(0);
  });

  it('B23: a summary without its session is refused whole (no files without summary)', () => {
    const s = tempStore();
    expect(() => s.changes.insert(change('ghost', 'r1', 100), [file('a.txt')], 200)).toThrow();
    expect(count(s, 'workspace_run_change_files')).toBe(0);
  });

  it('summaries carry file rows in path order and never a patch body; the file route reads one', () => {
    const s = tempStore();
    s.sessions.touch('s1', 1);
    const stored = s.changes.insert(change('s1', 'r1', 100, { changed_count: 2 }), [file('a.txt'), file('b.txt')], 200);
    const [listed] = s.changes.listForSession('s1');
    expect(listed).toEqual(stored);
    expect(listed!.files.map((f) => f.path)).toEqual(['a.txt', 'b.txt']);
    for (const f of listed!.files) expect(f).not.toHaveProperty('patch');
    expect(s.changes.getFile('s1', 'run:r1', stored.files[1]!.id)).toEqual({
      ...stored.files[1],
      patch: 'diff --git a/b.txt b/b.txt\n',
    });
    expect(s.changes.getFile('s1', 'run:r2', stored.files[1]!.id)).toBeNull();
  });

  it('B22: keeps the newest N run-level changes; an evicted run takes its tool changes along', () => {
    const s = tempStore();
    s.sessions.touch('s1', 1);
    s.sessions.touch('s2', 1);
    s.changes.insert(
      change('s1', 'r1', 100, { change_id: 'tool:t1', source: 'tool', tool_call_id: 't1' }),
      [file('t.txt')],
      2,
    );
    s.changes.insert(change('s1', 'r1', 110), [file('a.txt')], 2);
    s.changes.insert(change('s2', 'r9', 115), [file('z.txt')], 2);
    s.changes.insert(change('s1', 'r2', 120), [file('b.txt')], 2);
    expect(s.changes.listForSession('s1').map((c) => c.change_id)).toEqual(['tool:t1', 'run:r1', 'run:r2']);
    s.changes.insert(change('s1', 'r3', 130), [file('c.txt')], 2);
    expect(s.changes.listForSession('s1').map((c) => c.change_id)).toEqual(['run:r2', 'run:r3']);
    expect(s.changes.listForSession('s2').map((c) => c.change_id)).toEqual(['run:r9']);
    expect(count(s, 'workspace_run_change_files')).toBe(3);
  });

  it('B22: the age sweep removes changes stored before the cutoff with their files', () => {
    const s = tempStore();
    s.sessions.touch('s1', 1);
    s.changes.insert(change('s1', 'old', 1_000), [file('a.txt')], 200);
    s.changes.insert(change('s1', 'new', 5_000), [file('b.txt')], 200);
    expect(s.changes.deleteOlderThan(2_000)).toBe(1);
    expect(s.changes.listForSession('s1').map((c) => c.run_id)).toEqual(['new']);
    expect(count(s, 'workspace_run_change_files')).toBe(1);
  });
});

describe('sessions and messages', () => {
  it('B22: deleting a session removes its messages, runs, tool calls, changes and files at once', () => {
    const s = tempStore();
    for (const id of ['s1', 's2']) {
      s.sessions.touch(id, 1);
      s.messages.insert({
        id: 'm',
        session_id: id,
        role: 'user',
        content: 'hi',
        run_id: null,
        tool_call_id: null,
        created_at: 1,
      });
      s.runs.insertRun({
        run_id: 'r1',
        session_id: id,
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
      s.runs.insertToolCall({
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
      s.changes.insert(change(id, 'r1', 10), [file('a.txt')], 200);
    }
    expect(s.sessions.delete('s1')).toBe(true);
    expect(s.sessions.delete('s1')).toBe(false);
    for (const table of [
      'sessions',
      'messages',
      'runs',
      'tool_calls',
      'workspace_run_changes',
      'workspace_run_change_files',
    ]) {
      expect(count(s, table)).toBe(1);
    }
  });

  it('session counts: run_count counts runs, changed_count counts distinct paths of run-level changes only', () => {
    const s = tempStore();
    s.sessions.upsert('s1', { title: 'T' }, 5);
    s.runs.insertRun({
      run_id: 'r1',
      session_id: 's1',
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
    s.changes.insert(change('s1', 'r1', 10, { changed_count: 2 }), [file('a.txt'), file('b.txt')], 200);
    // A second run changing a.txt again: the total names each path once.
    s.changes.insert(
      change('s1', 'r2', 11, { changed_count: 2 }),
      [file('a.txt', { change_type: 'modified' }), file('c.txt')],
      200,
    );
    // Files past the stored-files limit cannot be told apart: they are added as counted.
    s.changes.insert(change('s1', 'r3', 12, { changed_count: 5, omitted_count: 4 }), [file('a.txt')], 200);
    s.changes.insert(
      change('s1', 'r1', 9, { change_id: 'tool:t', source: 'tool', tool_call_id: 't', changed_count: 7 }),
      [file('tool-only.txt')],
      200,
    );
    expect(s.sessions.get('s1')).toEqual({
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
    });
    s.sessions.upsert('s1', { workspace: '/w' }, 6);
    expect(s.sessions.get('s1')).toMatchObject({ title: 'T', workspace: '/w', updated_at: 6 });
  });

  it('the changed-path total kept between reads of a session moves with every write of its changes: own, retention, another connection', () => {
    const s = tempStore();
    s.sessions.touch('s1', 1);
    s.changes.insert(change('s1', 'r1', 10), [file('a.txt')], 2);
    expect(s.sessions.get('s1')!.changed_count).toBe(1);
    s.changes.insert(change('s1', 'r2', 11), [file('b.txt')], 2);
    expect(s.sessions.get('s1')!.changed_count).toBe(2);
    // Retention keeps two changes here: r1's goes, and a.txt with it.
    s.changes.insert(change('s1', 'r3', 12), [file('b.txt', { change_type: 'modified' })], 2);
    expect(s.sessions.get('s1')!.changed_count).toBe(1);
    // Writes to other rows of the session leave the total as it is.
    s.sessions.touch('s1', 2);
    s.messages.insert({
      id: 'm',
      session_id: 's1',
      role: 'user',
      content: 'x',
      run_id: null,
      tool_call_id: null,
      created_at: 3,
    });
    expect(s.sessions.get('s1')).toMatchObject({ changed_count: 1, updated_at: 2 });
    const other = openStore(s.db.name);
    stores.push(other);
    other.changes.insert(change('s1', 'r4', 13), [file('c.txt'), file('d.txt')], 200);
    expect(s.sessions.get('s1')!.changed_count).toBe(3);
    s.sessions.delete('s1');
    s.sessions.touch('s1', 4);
    expect(s.sessions.get('s1')!.changed_count).toBe(0);
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

  it('session pages are newest first and a cursor on updated_at never skips sessions that share it', () => {
    const s = tempStore();
    const times = [10, 20, 20, 20, 30];
    times.forEach((t, i) => s.sessions.touch(`s${i}`, t));
    const first = s.sessions.page(2, null);
    expect(first.sessions.map((x) => x.id)).toEqual(['s4', 's3', 's2', 's1']);
    expect(first.next_before).toBe(20);
    const second = s.sessions.page(2, first.next_before);
    expect(second.sessions.map((x) => x.id)).toEqual(['s0']);
    expect(second.next_before).toBeNull();
    expect(s.sessions.page(5, null).next_before).toBeNull();
  });

  it('message pages: newest N, returned oldest first, ties at the boundary kept together', () => {
    const s = tempStore();
    s.sessions.touch('s', 1);
    const at = [1, 2, 3, 3, 4];
    at.forEach((t, i) =>
      s.messages.insert({
        id: `m${i}`,
        session_id: 's',
        role: 'user',
        content: String(i),
        run_id: null,
        tool_call_id: null,
        created_at: t,
      }),
    );
    expect(s.messages.page('s', 500, null).map((m) => m.id)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
    expect(s.messages.page('s', 2, null).map((m) => m.id)).toEqual(['m2', 'm3', 'm4']);
    expect(s.messages.page('s', 2, 3).map((m) => m.id)).toEqual(['m0', 'm1']);
  });

  it('the store is usable on a second connection to the same file (WAL)', () => {
    const s = tempStore();
    s.sessions.touch('s1', 1);
    const other = createStore(openDatabase(s.db.name));
    stores.push(other);
    expect(other.sessions.get('s1')?.id).toBe('s1');
  });
});

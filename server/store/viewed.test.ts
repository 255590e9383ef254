import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempDir } from '../test-support/temp-repo.ts';
import { openStore, type NewChange, type NewFile, type Store } from './index.ts';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempStore(): Store {
  const dir = createTempDir();
  dirs.push(dir);
  const store = openStore(path.join(dir, 'rundiff.db'));
  stores.push(store);
  return store;
}

let clock = 1_000;

function change(sessionId: string, runId: string): NewChange {
  clock += 10;
  return {
    change_id: `run:${runId}`,
    session_id: sessionId,
    run_id: runId,
    tool_call_id: null,
    source: 'run',
    workspace: '/w',
    workspace_kind: 'git',
    started_at: clock - 5,
    finished_at: clock,
    changed_count: 1,
    added_count: 0,
    modified_count: 1,
    deleted_count: 0,
    renamed_count: 0,
    binary_count: 0,
    truncated: false,
    truncated_reasons: [],
    total_patch_bytes: 10,
    overlapping: false,
    omitted_count: 0,
    created_at: clock,
  };
}

function file(p: string, extra: Partial<NewFile> = {}): NewFile {
  return {
    path: p,
    old_path: null,
    change_type: 'modified',
    additions: 1,
    deletions: 1,
    binary: false,
    truncated: false,
    size_before: 2,
    size_after: 2,
    patch_bytes: 10,
    omitted_reason: null,
    patch: `diff --git a/${p} b/${p}\n`,
    ...extra,
  };
}

/** Stores a change of `paths` the way a completion does (the reset in the storing transaction). */
function store(s: Store, sessionId: string, runId: string, files: NewFile[]): Map<string, string> {
  s.sessions.touch(sessionId, clock);
  const stored = s.transaction(() => {
    const c = s.changes.insert(change(sessionId, runId), files, 100);
    s.viewed.resetByChange(sessionId, c.change_id);
    return c;
  });
  return new Map(stored.files.map((f) => [f.path, f.id]));
}

const markedPaths = (s: Store, sessionId: string) => s.viewed.list(sessionId).viewed.map((m) => m.path);
const coveredRows = (s: Store, sessionId: string) =>
  s.viewed
    .list(sessionId)
    .rows.map((r) => `${r.change_id}#${r.ord}`)
    .sort();

describe('viewed marks in the store', () => {
  it('a mark covers its path in its change and in earlier changes, never in a later one', () => {
    const s = tempStore();
    const r1 = store(s, 's', 'r1', [file('a.ts'), file('b.ts')]);
    const r2 = store(s, 's', 'r2', [file('a.ts'), file('c.ts')]);
    expect(s.viewed.mark('s', 'run:r1', r1.get('a.ts')!, 5)).toBe('changed');
    expect(coveredRows(s, 's')).toEqual(['run:r1#0']);

    expect(s.viewed.mark('s', 'run:r2', r2.get('a.ts')!, 6)).toBe('changed');
    expect(coveredRows(s, 's')).toEqual(['run:r1#0', 'run:r2#0']);
    expect(s.viewed.list('s').viewed).toEqual([
      { path: 'a.ts', change_id: 'run:r2', file_id: r2.get('a.ts'), viewed_at: 6 },
    ]);
  });

  it('marking an earlier row of a path marked on a later change keeps the later mark (a stale page cannot move it back)', () => {
    const s = tempStore();
    const r1 = store(s, 's', 'r1', [file('a.ts')]);
    const r2 = store(s, 's', 'r2', [file('a.ts')]);
    s.viewed.mark('s', 'run:r2', r2.get('a.ts')!, 5);
    expect(s.viewed.mark('s', 'run:r1', r1.get('a.ts')!, 6)).toBe('unchanged');
    expect(s.viewed.list('s').viewed[0]).toMatchObject({ change_id: 'run:r2', viewed_at: 5 });
  });

  it('unmarking removes the mark of the row`s path; a row the mark does not cover changes nothing', () => {
    const s = tempStore();
    const r1 = store(s, 's', 'r1', [file('a.ts')]);
    const r2 = store(s, 's', 'r2', [file('a.ts')]);
    s.viewed.mark('s', 'run:r1', r1.get('a.ts')!, 5);
    expect(s.viewed.unmark('s', 'run:r2', r2.get('a.ts')!)).toBe('unchanged');
    expect(markedPaths(s, 's')).toEqual(['a.ts']);
    expect(s.viewed.unmark('s', 'run:r1', r1.get('a.ts')!)).toBe('changed');
    expect(markedPaths(s, 's')).toEqual([]);
    expect(s.viewed.unmark('s', 'run:r1', r1.get('a.ts')!)).toBe('unchanged');
  });

  it('unknown session, change or file, or a file of another change, is no_such_file and stores nothing', () => {
    const s = tempStore();
    const r1 = store(s, 's', 'r1', [file('a.ts')]);
    store(s, 's', 'r2', [file('b.ts')]);
    store(s, 'other', 'r1', [file('a.ts')]);
    const id = r1.get('a.ts')!;
    expect(s.viewed.mark('nope', 'run:r1', id, 1)).toBe('no_such_file');
    expect(s.viewed.mark('s', 'run:nope', id, 1)).toBe('no_such_file');
    expect(s.viewed.mark('s', 'run:r1', 'nope', 1)).toBe('no_such_file');
    expect(s.viewed.mark('s', 'run:r2', id, 1)).toBe('no_such_file');
    expect(s.viewed.mark('other', 'run:r1', id, 1)).toBe('no_such_file');
    expect(s.viewed.unmark('other', 'run:r1', id)).toBe('no_such_file');
    expect(s.db.prepare('SELECT COUNT(*) AS n FROM viewed_marks').get()).toEqual({ n: 0 });
    // control: the same row in its own session and change is marked
    expect(s.viewed.mark('s', 'run:r1', id, 1)).toBe('changed');
  });

  it('a later change touching a path resets its mark (also as a rename`s old path); other marks stay', () => {
    const s = tempStore();
    const r1 = store(s, 's', 'r1', [file('a.ts'), file('b.ts'), file('c.ts'), file('d.ts')]);
    for (const p of ['a.ts', 'b.ts', 'c.ts', 'd.ts']) s.viewed.mark('s', 'run:r1', r1.get(p)!, 5);
    expect(markedPaths(s, 's')).toEqual(['a.ts', 'b.ts', 'c.ts', 'd.ts']);

    store(s, 's', 'r2', [file('a.ts'), file('e.ts', { change_type: 'renamed', old_path: 'c.ts' })]);
    expect(markedPaths(s, 's')).toEqual(['b.ts', 'd.ts']);
    expect(coveredRows(s, 's')).toEqual(['run:r1#1', 'run:r1#3']);
  });

  it('a change in another session resets nothing; a change with no marked path resets nothing', () => {
    const s = tempStore();
    const r1 = store(s, 's', 'r1', [file('a.ts')]);
    s.viewed.mark('s', 'run:r1', r1.get('a.ts')!, 5);
    store(s, 'other', 'r2', [file('a.ts')]);
    store(s, 's', 'r3', [file('z.ts')]);
    expect(markedPaths(s, 's')).toEqual(['a.ts']);
    // control: the same path in this session does reset it
    store(s, 's', 'r4', [file('a.ts')]);
    expect(markedPaths(s, 's')).toEqual([]);
  });

  it('names that are not UTF-8 are told apart by their raw bytes, not by the text shown for them', () => {
    const s = tempStore();
    const shown = 'caf\uFFFD.txt';
    const r1 = store(s, 's', 'r1', [file(shown, { path_base64: 'Y2Fm6S50eHQ=' })]);
    s.viewed.mark('s', 'run:r1', r1.get(shown)!, 5);
    expect(s.viewed.list('s').viewed[0]).toMatchObject({ path: shown, path_base64: 'Y2Fm6S50eHQ=' });
    // Another name with the same replacement text does not reset it.
    store(s, 's', 'r2', [file(shown, { path_base64: 'Y2Fm_y50eHQ=' })]);
    expect(markedPaths(s, 's')).toEqual([shown]);
    expect(coveredRows(s, 's')).toEqual(['run:r1#0']);
    store(s, 's', 'r3', [file(shown, { path_base64: 'Y2Fm6S50eHQ=' })]);
    expect(markedPaths(s, 's')).toEqual([]);
  });

  it('a session delete removes its marks; the marks of other sessions stay', () => {
    const s = tempStore();
    const a = store(s, 's', 'r1', [file('a.ts')]);
    const b = store(s, 'keep', 'r1', [file('a.ts')]);
    s.viewed.mark('s', 'run:r1', a.get('a.ts')!, 5);
    s.viewed.mark('keep', 'run:r1', b.get('a.ts')!, 5);
    expect(s.sessions.delete('s')).toBe(true);
    expect(s.db.prepare('SELECT session_id FROM viewed_marks').all()).toEqual([{ session_id: 'keep' }]);
  });

  it('a mark goes with the row it was made on when retention removes that change', () => {
    const s = tempStore();
    const r1 = store(s, 's', 'r1', [file('a.ts')]);
    s.viewed.mark('s', 'run:r1', r1.get('a.ts')!, 5);
    s.sessions.touch('s', clock);
    // Keeping one change per session evicts r1.
    s.changes.insert(change('s', 'r2'), [file('z.ts')], 1);
    expect(s.changes.exists('s', 'run:r1')).toBe(false);
    expect(s.viewed.list('s')).toEqual({ viewed: [], rows: [] });
  });
});

import { expect, it } from 'vitest';
import { describeEachEngine } from '../test-support/store-engines.ts';
import { storedChange, storedFile } from '../test-support/store-fixtures.ts';
import type { NewChange, NewFile, Store } from './index.ts';

let clock = 1_000;

function change(sessionId: string, runId: string): NewChange {
  clock += 10;
  return storedChange(sessionId, runId, clock, { started_at: clock - 5, added_count: 0, modified_count: 1 });
}

const file = (p: string, extra: Partial<NewFile> = {}): NewFile =>
  storedFile(p, { change_type: 'modified', deletions: 1, size_before: 2, ...extra });

/** Stores a change of `paths` the way a completion does (the reset in the storing transaction). */
async function store(s: Store, sessionId: string, runId: string, files: NewFile[]): Promise<Map<string, string>> {
  await s.sessions.touch(sessionId, clock);
  const stored = await s.transaction(async (tx) => {
    const c = await tx.changes.insert(change(sessionId, runId), files, 100);
    await tx.viewed.resetByChange(sessionId, c.change_id);
    return c;
  });
  return new Map(stored.files.map((f) => [f.path, f.id]));
}

const markedPaths = async (s: Store, sessionId: string) => (await s.viewed.list(sessionId)).viewed.map((m) => m.path);
const coveredRows = async (s: Store, sessionId: string) =>
  (await s.viewed.list(sessionId)).rows.map((r) => `${r.change_id}#${r.ord}`).sort();

describeEachEngine('viewed marks in the store', (engine) => {
  it('a mark covers its path in its change and in earlier changes, never in a later one', async () => {
    const s = await engine.open();
    const r1 = await store(s, 's', 'r1', [file('a.ts'), file('b.ts')]);
    const r2 = await store(s, 's', 'r2', [file('a.ts'), file('c.ts')]);
    expect(await s.viewed.mark('s', 'run:r1', r1.get('a.ts')!, 5)).toBe('changed');
    expect(await coveredRows(s, 's')).toEqual(['run:r1#0']);

    expect(await s.viewed.mark('s', 'run:r2', r2.get('a.ts')!, 6)).toBe('changed');
    expect(await coveredRows(s, 's')).toEqual(['run:r1#0', 'run:r2#0']);
    expect((await s.viewed.list('s')).viewed).toEqual([
      { path: 'a.ts', change_id: 'run:r2', file_id: r2.get('a.ts'), viewed_at: 6 },
    ]);
  });

  it('marking an earlier row of a path marked on a later change keeps the later mark (a stale page cannot move it back)', async () => {
    const s = await engine.open();
    const r1 = await store(s, 's', 'r1', [file('a.ts')]);
    const r2 = await store(s, 's', 'r2', [file('a.ts')]);
    await s.viewed.mark('s', 'run:r2', r2.get('a.ts')!, 5);
    expect(await s.viewed.mark('s', 'run:r1', r1.get('a.ts')!, 6)).toBe('unchanged');
    expect((await s.viewed.list('s')).viewed[0]).toMatchObject({ change_id: 'run:r2', viewed_at: 5 });
  });

  it('unmarking removes the mark of the row`s path; a row the mark does not cover changes nothing', async () => {
    const s = await engine.open();
    const r1 = await store(s, 's', 'r1', [file('a.ts')]);
    const r2 = await store(s, 's', 'r2', [file('a.ts')]);
    await s.viewed.mark('s', 'run:r1', r1.get('a.ts')!, 5);
    expect(await s.viewed.unmark('s', 'run:r2', r2.get('a.ts')!)).toBe('unchanged');
    expect(await markedPaths(s, 's')).toEqual(['a.ts']);
    expect(await s.viewed.unmark('s', 'run:r1', r1.get('a.ts')!)).toBe('changed');
    expect(await markedPaths(s, 's')).toEqual([]);
    expect(await s.viewed.unmark('s', 'run:r1', r1.get('a.ts')!)).toBe('unchanged');
  });

  it('unknown session, change or file, or a file of another change, is no_such_file and stores nothing', async () => {
    const s = await engine.open();
    const r1 = await store(s, 's', 'r1', [file('a.ts')]);
    await store(s, 's', 'r2', [file('b.ts')]);
    await store(s, 'other', 'r1', [file('a.ts')]);
    const id = r1.get('a.ts')!;
    expect(await s.viewed.mark('nope', 'run:r1', id, 1)).toBe('no_such_file');
    expect(await s.viewed.mark('s', 'run:nope', id, 1)).toBe('no_such_file');
    expect(await s.viewed.mark('s', 'run:r1', 'nope', 1)).toBe('no_such_file');
    expect(await s.viewed.mark('s', 'run:r2', id, 1)).toBe('no_such_file');
    expect(await s.viewed.mark('other', 'run:r1', id, 1)).toBe('no_such_file');
    expect(await s.viewed.unmark('other', 'run:r1', id)).toBe('no_such_file');
    expect(await engine.count(s, 'viewed_marks')).toBe(0);
    // control: the same row in its own session and change is marked
    expect(await s.viewed.mark('s', 'run:r1', id, 1)).toBe('changed');
  });

  it('a later change touching a path resets its mark (also as a rename`s old path); other marks stay', async () => {
    const s = await engine.open();
    const r1 = await store(s, 's', 'r1', [file('a.ts'), file('b.ts'), file('c.ts'), file('d.ts')]);
    for (const p of ['a.ts', 'b.ts', 'c.ts', 'd.ts']) await s.viewed.mark('s', 'run:r1', r1.get(p)!, 5);
    expect(await markedPaths(s, 's')).toEqual(['a.ts', 'b.ts', 'c.ts', 'd.ts']);

    await store(s, 's', 'r2', [file('a.ts'), file('e.ts', { change_type: 'renamed', old_path: 'c.ts' })]);
    expect(await markedPaths(s, 's')).toEqual(['b.ts', 'd.ts']);
    expect(await coveredRows(s, 's')).toEqual(['run:r1#1', 'run:r1#3']);
  });

  it('a change in another session resets nothing; a change with no marked path resets nothing', async () => {
    const s = await engine.open();
    const r1 = await store(s, 's', 'r1', [file('a.ts')]);
    await s.viewed.mark('s', 'run:r1', r1.get('a.ts')!, 5);
    await store(s, 'other', 'r2', [file('a.ts')]);
    await store(s, 's', 'r3', [file('z.ts')]);
    expect(await markedPaths(s, 's')).toEqual(['a.ts']);
    // control: the same path in this session does reset it
    await store(s, 's', 'r4', [file('a.ts')]);
    expect(await markedPaths(s, 's')).toEqual([]);
  });

  it('names that are not UTF-8 are told apart by their raw bytes, not by the text shown for them', async () => {
    const s = await engine.open();
    const shown = 'caf\uFFFD.txt';
    const r1 = await store(s, 's', 'r1', [file(shown, { path_base64: 'Y2Fm6S50eHQ=' })]);
    await s.viewed.mark('s', 'run:r1', r1.get(shown)!, 5);
    expect((await s.viewed.list('s')).viewed[0]).toMatchObject({ path: shown, path_base64: 'Y2Fm6S50eHQ=' });
    // Another name with the same replacement text does not reset it.
    await store(s, 's', 'r2', [file(shown, { path_base64: 'Y2Fm_y50eHQ=' })]);
    expect(await markedPaths(s, 's')).toEqual([shown]);
    expect(await coveredRows(s, 's')).toEqual(['run:r1#0']);
    await store(s, 's', 'r3', [file(shown, { path_base64: 'Y2Fm6S50eHQ=' })]);
    expect(await markedPaths(s, 's')).toEqual([]);
  });

  it('a session delete removes its marks; the marks of other sessions stay', async () => {
    const s = await engine.open();
    const a = await store(s, 's', 'r1', [file('a.ts')]);
    const b = await store(s, 'keep', 'r1', [file('a.ts')]);
    await s.viewed.mark('s', 'run:r1', a.get('a.ts')!, 5);
    await s.viewed.mark('keep', 'run:r1', b.get('a.ts')!, 5);
    expect(await s.sessions.delete('s')).toBe(true);
    expect(await engine.count(s, 'viewed_marks')).toBe(1);
    expect((await s.viewed.list('keep')).viewed).toMatchObject([{ path: 'a.ts' }]);
  });

  it('a mark goes with the row it was made on when retention removes that change', async () => {
    const s = await engine.open();
    const r1 = await store(s, 's', 'r1', [file('a.ts')]);
    await s.viewed.mark('s', 'run:r1', r1.get('a.ts')!, 5);
    await s.sessions.touch('s', clock);
    // Keeping one change per session evicts r1.
    await s.changes.insert(change('s', 'r2'), [file('z.ts')], 1);
    expect(await s.changes.exists('s', 'run:r1')).toBe(false);
    expect(await s.viewed.list('s')).toEqual({ viewed: [], rows: [] });
  });
});

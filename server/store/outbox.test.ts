import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempDir } from '../test-support/temp-repo.ts';
import { openStore, type SqliteStore as Store } from './index.ts';

/** The edge's outbox: filled by the storing transactions themselves, and only once attached. */

const stores: Store[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) void s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function open(): Store {
  const dir = createTempDir('rundiff-outbox-');
  dirs.push(dir);
  const s = openStore(path.join(dir, 'r.db'));
  stores.push(s);
  return s;
}

const entries = (s: Store) =>
  s.db.prepare('SELECT kind, item FROM edge_outbox ORDER BY seq').all() as { kind: string; item: string }[];

describe('the edge outbox', () => {
  it('notes nothing while the database is not attached to an upstream (a single-user database stores what it did)', async () => {
    const s = open();
    await s.sessions.upsert('s1', { title: 't' }, 1);
    expect(entries(s)).toEqual([]);
    // Positive control: once attached, the same write is noted.
    await s.outbox!.attach();
    await s.sessions.upsert('s1', { title: 'u' }, 2);
    expect(entries(s).at(-1)).toEqual({ kind: 'session', item: 's1' });
  });

  it('notes a write in its own transaction: a rolled-back write leaves no entry, a committed one always has one', async () => {
    const s = open();
    await s.outbox!.attach();
    await expect(
      s.transaction(async (tx) => {
        await tx.sessions.upsert('gone', {}, 1);
        throw new Error('the write fails after the row');
      }),
    ).rejects.toThrow('the write fails');
    expect(entries(s)).toEqual([]);
    await s.transaction((tx) => tx.sessions.upsert('kept', {}, 1));
    expect(entries(s)).toEqual([{ kind: 'session', item: 'kept' }]);
  });

  it('notes the history stored before attaching once, a session before its rows', async () => {
    const s = open();
    await s.sessions.upsert('s1', {}, 1);
    await s.messages.insert({
      id: 'm1',
      session_id: 's1',
      role: 'user',
      content: 'hi',
      run_id: null,
      tool_call_id: null,
      created_at: 1,
    });
    expect(await s.outbox!.attach()).toBe(true);
    expect(await s.outbox!.attach()).toBe(false);
    expect(entries(s)).toEqual([
      { kind: 'session', item: 's1' },
      { kind: 'message', item: 'm1' },
    ]);
  });

  it('sends a row noted several times once, at its first note, and a deleted row as absent', async () => {
    const s = open();
    await s.outbox!.attach();
    await s.sessions.upsert('s1', { title: 'a' }, 1);
    await s.messages.insert({
      id: 'm1',
      session_id: 's1',
      role: 'user',
      content: 'hi',
      run_id: null,
      tool_call_id: null,
      created_at: 1,
    });
    await s.sessions.upsert('s1', { title: 'b' }, 2);
    const batch = await s.outbox!.read('s1', { maxEntries: 100, maxBytes: 1 << 20 });
    expect(batch.entries.map((e) => [e.kind, e.item])).toEqual([
      ['session', 's1'],
      ['message', 'm1'],
    ]);
    expect(batch.entries[0]!.row).toMatchObject({ title: 'b' });
    expect(batch.seqs).toHaveLength(3);
    await s.sessions.delete('s1');
    const after = await s.outbox!.read('s1', { maxEntries: 100, maxBytes: 1 << 20 });
    expect(after.entries[0]!.row).toBeNull();
    expect(after.entries.at(-1)!.kind).toBe('session_deleted');
  });

  it('stops a batch at its byte bound (a single larger entry still goes alone) and removes only acknowledged entries', async () => {
    const s = open();
    await s.outbox!.attach();
    await s.sessions.upsert('s1', {}, 1);
    for (let i = 0; i < 5; i++)
      await s.messages.insert({
        id: `m${i}`,
        session_id: 's1',
        role: 'user',
        content: 'x'.repeat(1000),
        run_id: null,
        tool_call_id: null,
        created_at: i,
      });
    const small = await s.outbox!.read('s1', { maxEntries: 100, maxBytes: 2500 });
    expect(small.entries.length).toBeGreaterThan(1);
    expect(small.entries.length).toBeLessThan(6);
    const tiny = await s.outbox!.read('s1', { maxEntries: 100, maxBytes: 1 });
    expect(tiny.entries).toHaveLength(1);
    await s.outbox!.acknowledge(small.seqs, []);
    expect((await s.outbox!.status()).pending_entries).toBe(6 - small.seqs.length);
  });
});

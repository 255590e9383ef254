import { expect, it } from 'vitest';
import { describeEachEngine } from '../test-support/store-engines.ts';
import type { StoredNetMark } from './index.ts';

const mark = (path: string, extra: Partial<StoredNetMark> = {}): StoredNetMark => ({
  path,
  path_base64: '',
  net_hash: 'a'.repeat(64),
  to_change_id: 'run:r2',
  viewed_at: 10,
  ...extra,
});

describeEachEngine('net viewed marks in the store', (engine) => {
  it('one mark per range start and path: marking again replaces it, other starts keep their own', async () => {
    const s = await engine.open();
    await s.sessions.touch('s', 1);
    await s.netViewed.mark('s', 'run:r1', mark('a.ts'));
    await s.netViewed.mark('s', 'run:r2', mark('a.ts', { viewed_at: 11 }));
    await s.netViewed.mark(
      's',
      'run:r1',
      mark('a.ts', { net_hash: 'b'.repeat(64), to_change_id: 'run:r3', viewed_at: 12 }),
    );
    expect(await s.netViewed.list('s', 'run:r1')).toEqual([
      mark('a.ts', { net_hash: 'b'.repeat(64), to_change_id: 'run:r3', viewed_at: 12 }),
    ]);
    expect(await s.netViewed.list('s', 'run:r2')).toEqual([mark('a.ts', { viewed_at: 11 })]);
    expect(await engine.count(s, 'net_viewed_marks')).toBe(2);
  });

  it('a raw name is its own path: the same shown path with another base64 name is another mark', async () => {
    const s = await engine.open();
    await s.sessions.touch('s', 1);
    await s.netViewed.mark('s', 'run:r1', mark('f\uFFFD'));
    await s.netViewed.mark('s', 'run:r1', mark('f\uFFFD', { path_base64: 'Zv8=', viewed_at: 11 }));
    expect((await s.netViewed.list('s', 'run:r1')).map((m) => m.path_base64)).toEqual(['', 'Zv8=']);
    expect(await s.netViewed.unmark('s', 'run:r1', 'f\uFFFD', 'Zv8=')).toBe(true);
    expect(await s.netViewed.unmark('s', 'run:r1', 'f\uFFFD', 'Zv8=')).toBe(false);
    expect((await s.netViewed.list('s', 'run:r1')).map((m) => m.path_base64)).toEqual(['']);
  });

  it('marks go with their session', async () => {
    const s = await engine.open();
    await s.sessions.touch('s', 1);
    await s.netViewed.mark('s', 'run:r1', mark('a.ts'));
    await s.sessions.delete('s');
    expect(await engine.count(s, 'net_viewed_marks')).toBe(0);
  });
});

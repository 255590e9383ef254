import { describe, expect, it } from 'vitest';
import type { Session } from '../../../shared/index.ts';
import { appendPage, formatDuration, relativeTime, removeSession, upsertSession } from './sessions-list.ts';

const s = (id: string, updated_at: number): Session => ({
  id,
  title: id,
  workspace: null,
  created_at: 0,
  updated_at,
  run_count: 0,
  changed_count: 0,
  failed_run_count: 0,
  running_run_count: 0,
  last_run_status: null,
  usage: null,
});

describe('sessions list', () => {
  it('keeps newest activity first through live updates, deletes and later pages', () => {
    let list = [s('a', 300), s('b', 200)];
    list = upsertSession(list, s('b', 400));
    expect(list.map((x) => x.id)).toEqual(['b', 'a']);
    list = upsertSession(list, s('c', 100));
    expect(list.map((x) => x.id)).toEqual(['b', 'a', 'c']);
    list = removeSession(list, 'a');
    expect(list.map((x) => x.id)).toEqual(['b', 'c']);
    list = appendPage(list, [s('c', 100), s('d', 50)]);
    expect(list.map((x) => x.id)).toEqual(['b', 'c', 'd']);
  });

  it('formats relative times and durations', () => {
    const now = 10_000_000_000;
    expect(relativeTime(now - 5_000, now)).toBe('just now');
    expect(relativeTime(now - 5 * 60_000, now)).toBe('5 min ago');
    expect(relativeTime(now - 3 * 3_600_000, now)).toBe('3 h ago');
    expect(relativeTime(now - 2 * 86_400_000, now)).toBe('2 days ago');
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(4_200)).toBe('4.2 s');
    expect(formatDuration(185_000)).toBe('3 min 5 s');
    // Rounding never writes `1000 ms` or `60.0 s`.
    expect(formatDuration(999.6)).toBe('1.0 s');
    expect(formatDuration(59_960)).toBe('1 min');
  });
});

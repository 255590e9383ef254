import { describe, expect, it } from 'vitest';
import type { Session } from '../../../shared/index.ts';
import { filterFromQuery, filterToQuery, isFiltered, matchesFilter, toServerFilter } from './session-filter.ts';

const session = (extra: Partial<Session> = {}): Session => ({
  id: 's',
  title: 'Fix the Parser',
  workspace: '/w/app',
  created_at: 1_000,
  updated_at: 2_000,
  run_count: 2,
  changed_count: 3,
  failed_run_count: 0,
  running_run_count: 0,
  last_run_status: 'completed',
  usage: null,
  ...extra,
});

describe('sessions list filter', () => {
  it('round-trips through the URL query and drops what the list cannot use', () => {
    const f = filterFromQuery({ q: 'parser', status: 'failed', workspace: '/w', from: '2026-01-31', to: '2026-02-01' });
    expect(filterToQuery(f)).toEqual({
      q: 'parser',
      status: 'failed',
      workspace: '/w',
      from: '2026-01-31',
      to: '2026-02-01',
    });
    expect(filterFromQuery({ status: 'sometimes', from: '2026-02-30', to: 'yesterday', q: ['a', 'b'] })).toEqual({
      q: 'a',
      status: '',
      workspace: '',
      from: '',
      to: '',
    });
    expect(isFiltered(filterFromQuery({}))).toBe(false);
    expect(filterToQuery(filterFromQuery({}))).toEqual({});
  });

  it('turns calendar days into the first and last millisecond of those local days', () => {
    const f = toServerFilter({ q: '  x ', status: '', workspace: '', from: '2026-03-01', to: '2026-03-01' });
    expect(f.q).toBe('x');
    expect(f.from).toBe(new Date(2026, 2, 1).getTime());
    expect(f.to).toBe(new Date(2026, 2, 2).getTime() - 1);
    expect(toServerFilter({ q: ' ', status: '', workspace: '', from: '', to: '' })).toEqual({});
  });

  it('matches live sessions as the server does: ASCII case, title or workspace, status by runs', () => {
    expect(matchesFilter(session(), { q: 'PARSER' })).toBe(true);
    expect(matchesFilter(session(), { q: 'w/app' })).toBe(true);
    expect(matchesFilter(session(), { q: 'lexer' })).toBe(false);
    expect(matchesFilter(session(), { status: 'completed' })).toBe(true);
    expect(matchesFilter(session({ failed_run_count: 1 }), { status: 'completed' })).toBe(false);
    expect(matchesFilter(session({ failed_run_count: 1 }), { status: 'failed' })).toBe(true);
    expect(matchesFilter(session(), { status: 'running' })).toBe(false);
    expect(matchesFilter(session({ run_count: 0 }), { status: 'none' })).toBe(true);
    expect(matchesFilter(session(), { workspace: '/w' })).toBe(false);
    expect(matchesFilter(session(), { from: 2_001 })).toBe(false);
    expect(matchesFilter(session(), { to: 999 })).toBe(false);
    expect(matchesFilter(session(), { from: 2_000, to: 1_000 })).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import type { ChangeSummary } from '../../../shared/index.ts';
import { comparableChanges, netFlagsText, runOptionLabel } from './net.ts';

const change = (over: Partial<ChangeSummary>): ChangeSummary =>
  ({ change_id: 'run:r1', source: 'run', started_at: 1_000, created_at: 2_000, files: [], ...over }) as ChangeSummary;

describe('session changes words', () => {
  it('offers run-level changes only, labelled by position, time and a non-plain source', () => {
    const list = comparableChanges([
      change({}),
      change({ change_id: 'tool:t1', source: 'tool' }),
      change({ change_id: 'run:revert-1', source: 'revert', started_at: null }),
    ]);
    expect(list.map((c) => c.change_id)).toEqual(['run:r1', 'run:revert-1']);
    const time = (ms: number) => `t${ms}`;
    expect(runOptionLabel(list[0]!, 0, time)).toBe('Run 1 · t1000');
    expect(runOptionLabel(list[1]!, 1, time)).toBe('Run 2 · t2000 · revert');
  });

  it('names what may make a net file inexact', () => {
    expect(netFlagsText({ outside_change_ids: [], interleaved: false })).toEqual([]);
    expect(netFlagsText({ outside_change_ids: ['run:a', 'run:b'], interleaved: true })).toEqual([
      'also changed by 2 runs outside this range',
      'changed between these runs by something no run recorded',
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import type { ChangeSummary } from '../../../shared/index.ts';
import { comparableChanges, netBannerText, netFlagsText, netRowMarks, rangeFromQuery, runOptionLabel } from './net.ts';

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

  it("names a run by its title, else its prompt's first line, else its number and time", () => {
    const time = (ms: number) => `t${ms}`;
    const run = change({});
    expect(runOptionLabel(run, 0, time, { title: '  Fix the parser ', prompt: 'ignored' })).toBe('Fix the parser');
    expect(runOptionLabel(run, 0, time, { title: ' ', prompt: 'Rename foo\nand more' })).toBe('Rename foo');
    expect(runOptionLabel(run, 0, time, { title: null, prompt: '' })).toBe('Run 1 · t1000');
    expect(runOptionLabel(change({ source: 'revert' }), 2, time, { title: 'Undo it' })).toBe('Undo it · revert');
    expect(runOptionLabel(run, 0, time, { prompt: 'x'.repeat(80) })).toBe(`${'x'.repeat(59)}…`);
  });

  it('takes the range from the URL, falling back to the whole session for ends it does not offer', () => {
    const ids = ['run:a', 'run:b', 'run:c'];
    expect(rangeFromQuery({}, ids)).toEqual({ from: 'run:a', to: 'run:c' });
    expect(rangeFromQuery({ from: 'run:b', to: 'run:b' }, ids)).toEqual({ from: 'run:b', to: 'run:b' });
    expect(rangeFromQuery({ from: 'run:gone', to: ['run:b'] }, ids)).toEqual({ from: 'run:a', to: 'run:c' });
    expect(rangeFromQuery({ from: 'run:a' }, [])).toEqual({ from: null, to: null });
  });

  it('says what makes files inexact once for the view, and marks each such row briefly', () => {
    const plain = { outside_change_ids: [], interleaved: false };
    const outside = { outside_change_ids: ['run:x'], interleaved: false };
    const both = { outside_change_ids: ['run:x', 'run:y'], interleaved: true };
    expect(netBannerText([plain, plain])).toEqual([]);
    expect(netBannerText([plain, outside, both])).toEqual([
      '2 files were also changed by runs outside this range (marked "outside range").',
      '1 file was changed between these runs by something no run recorded (marked "unrecorded").',
    ]);
    expect(netRowMarks(plain)).toEqual([]);
    expect(netRowMarks(both)).toEqual(['outside range', 'unrecorded']);
  });
});

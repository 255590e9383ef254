import { describe, expect, it } from 'vitest';
import type { DiffProgressPayload } from '../../../shared/index.ts';
import { progressView } from './progress.ts';

const base: DiffProgressPayload = {
  session_id: 's',
  run_id: 'r',
  change_id: 'run:r',
  available: true,
  mode: 'watch',
  touched: [],
  touched_count: 0,
};

describe('open run progress view', () => {
  it('lists the newest touched paths as sent, bounded, with "+N more files" for the rest', () => {
    const touched = ['g.ts', 'f.ts', 'e.ts', 'd.ts', 'c.ts', 'b.ts', 'a.ts'];
    const v = progressView({ ...base, touched, touched_count: 240 });
    expect(v).toEqual({
      heading: 'Working... 240 files touched',
      paths: ['g.ts', 'f.ts', 'e.ts', 'd.ts', 'c.ts'],
      more: '+235 more files',
      pace: null,
      paceReason: null,
    });
  });

  it('a short list has no "more" line', () => {
    expect(progressView({ ...base, touched: ['a.ts'], touched_count: 1 })).toMatchObject({
      heading: 'Working... 1 file touched',
      paths: ['a.ts'],
      more: null,
    });
  });

  it('periodic checks say their pace in seconds and why, in words', () => {
    const v = progressView({
      ...base,
      mode: 'poll',
      reason: 'watch_budget',
      check_interval_ms: 3_000,
      touched: ['a.ts'],
      touched_count: 1,
    });
    expect(v.pace).toBe('checking every 3 s');
    expect(v.paceReason).toBe('Checked periodically: the workspace has more folders than rundiff watches.');
  });
});

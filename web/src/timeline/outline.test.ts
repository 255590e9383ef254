import { describe, expect, it } from 'vitest';
import type { ChangeSummary, Run } from '../../../shared/index.ts';
import { itemRunId, runInView, runOutline } from './outline.ts';

const run = (run_id: string, t: number, over: Partial<Run> = {}): Run => ({
  run_id,
  session_id: 's',
  title: null,
  status: 'completed',
  source: 'run',
  workspace: '/w',
  started_at: t,
  finished_at: t + 5,
  error: null,
  change_id: `run:${run_id}`,
  tracking: true,
  reason: null,
  usage: null,
  ...over,
});
const change = (run_id: string, tool_call_id: string | null, changed_count: number) =>
  ({ run_id, tool_call_id, changed_count }) as ChangeSummary;

describe('the outline of runs', () => {
  it("names each run by its title, else its prompt's first line, else its short id; counts its run-level files", () => {
    const runs = [
      run('cc3e822d-1111-4111-8111-111111111111', 30),
      run('r1', 10, { title: 'Fix the login form' }),
      run('r2', 20, { status: 'failed' }),
    ];
    const prompts = new Map([['r2', 'add tests\nand more']]);
    const changes = [change('r1', null, 3), change('r1', 't1', 2), change('r2', null, 1)];
    expect(runOutline(runs, changes, prompts).map((e) => [e.label, e.status, e.files])).toEqual([
      ['Fix the login form', 'completed', 3],
      ['add tests', 'failed', 1],
      ['Run cc3e822d', 'completed', null],
    ]);
  });

  it('the run in view is the last whose marker is at or above the line, else the first', () => {
    const tops = [
      { runId: 'a', top: -900 },
      { runId: 'b', top: -10 },
      { runId: 'c', top: 400 },
    ];
    expect(runInView(tops, 80)).toBe('b');
    expect(runInView([{ runId: 'a', top: 300 }], 80)).toBe('a');
    expect(runInView([], 80)).toBeNull();
  });

  it("items of a run name it; the run's own marker names none (it stays when the run is collapsed)", () => {
    const r = run('r1', 1);
    expect(itemRunId({ kind: 'run', key: 'run:r1', run: r })).toBeNull();
    expect(itemRunId({ kind: 'change', key: 'change:run:r1', change: change('r1', null, 1) })).toBe('r1');
  });
});

import { describe, expect, it } from 'vitest';
import type { ChangeSummary } from '../../../shared/index.ts';
import { runChangeOf, toolsByPath } from './run-files.ts';

const change = (over: Partial<ChangeSummary>, paths: string[]): ChangeSummary =>
  ({
    change_id: `${over.source === 'tool' ? 'tool' : 'run'}:${over.tool_call_id ?? over.run_id}`,
    tool_call_id: null,
    files: paths.map((path, i) => ({ id: `${path}-${i}`, path })),
    ...over,
  }) as ChangeSummary;

describe("a run's files, listed once", () => {
  const changes = [
    change({ source: 'tool', run_id: 'r1', tool_call_id: 't1' }, ['a.ts']),
    change({ source: 'tool', run_id: 'r1', tool_call_id: 't2' }, ['a.ts', 'b.ts']),
    change({ source: 'tool', run_id: 'r2', tool_call_id: 't3' }, ['c.ts']),
    change({ source: 'coding-agent', run_id: 'r1' }, ['a.ts', 'b.ts', 'd.ts']),
  ];
  const calls = [
    { tool_call_id: 't1', name: 'Write' },
    { tool_call_id: 't2', name: 'Edit' },
    { tool_call_id: 't3', name: 'Edit' },
  ];

  it("finds the run's own change, not a tool call's", () => {
    expect(runChangeOf(changes, 'r1')?.change_id).toBe('run:r1');
    expect(runChangeOf(changes, 'r2')).toBeNull();
  });

  it('names the tools that changed each path of the run, once each, in order; other runs left out', () => {
    expect(Object.fromEntries(toolsByPath(changes, calls, 'r1'))).toEqual({
      'a.ts': ['Write', 'Edit'],
      'b.ts': ['Edit'],
    });
    expect(toolsByPath(changes, [], 'r2').get('c.ts')).toEqual(['tool call']);
  });
});

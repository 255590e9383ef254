import { describe, expect, it } from 'vitest';
import type { ChangeSummary, RunChangesOutput } from '../../shared/index.ts';
import { runChangesText } from './index.ts';

/** The readable line of a run_changes answer: what it shows, where to go on, and what it cannot show. */

const answer = (over: Partial<RunChangesOutput>, change: Partial<ChangeSummary> = {}): RunChangesOutput =>
  ({
    change: { files: [{ path: 'a' }, { path: 'b' }], omitted_count: 0, ...change },
    open: false,
    tracking: true,
    reason: null,
    files_total: 2,
    next_cursor: null,
    ...over,
  }) as RunChangesOutput;

describe('run_changes text', () => {
  it('a whole small change: "showing 2 of 2 files" and no cursor', () => {
    expect(runChangesText(answer({}))).toBe('showing 2 of 2 files (1-2 in path order)');
  });

  it('a middle page names its range and the cursor that continues', () => {
    expect(runChangesText(answer({ files_total: 100_000, next_cursor: '51' }), '49')).toBe(
      'showing 2 of 100,000 files (51-52 in path order); call again with cursor "51" for the next page',
    );
  });

  it('paths past the stored-row bound are stated, never left out silently', () => {
    expect(runChangesText(answer({}, { omitted_count: 7 }))).toBe(
      'showing 2 of 2 files (1-2 in path order); 7 more changed paths not stored (row bound)',
    );
  });

  it('an untracked run says so instead of "no files"', () => {
    expect(
      runChangesText(answer({ tracking: false, reason: 'workspace_missing', files_total: 0 }, { files: [] })),
    ).toBe("showing 0 of 0 files: the run's workspace was not tracked (workspace_missing)");
    expect(runChangesText(answer({ files_total: 0 }, { files: [] }))).toBe('showing 0 of 0 files');
  });
});

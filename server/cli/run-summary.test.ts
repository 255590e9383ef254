import { describe, expect, it } from 'vitest';
import type { FileSummary } from '../../shared/index.ts';
import { planLines } from './revert.ts';
import { fileRow, outcomeLine, summaryLines } from './run-summary.ts';

const file = (over: Partial<FileSummary>): FileSummary => ({
  id: 'f',
  path: 'src/a.ts',
  old_path: null,
  change_type: 'modified',
  additions: 1,
  deletions: 2,
  binary: false,
  truncated: false,
  size_before: 1,
  size_after: 1,
  patch_bytes: 10,
  omitted_reason: null,
  ...over,
});

describe('rundiff run summary lines', () => {
  it('a name with control characters is quoted like git quotes it, in run rows and revert plans alike', () => {
    const renamed = file({ change_type: 'renamed', old_path: 'a\u009b1m.txt', path: 'plain ü.txt' });
    expect(fileRow(renamed)).toBe('R "a\\302\\2331m.txt" -> plain ü.txt +1 -2');
    expect(fileRow(file({ path: 'x\u007fy\u0007' }))).toBe('M "x\\177y\\a" +1 -2');
    const plan = planLines(
      [
        {
          file_id: 'f',
          path: 'b\rc',
          old_path: null,
          action: 'restore',
          reason: null,
          patch: null,
          conflict: null,
          applied: true,
        },
      ],
      false,
    );
    expect(plan).toEqual(['restore     "b\\rc" (done)']);
  });

  it('rows read like the design document: letter, path, counts; renames with an arrow', () => {
    expect(fileRow(file({ path: 'src/Login.vue', additions: 12, deletions: 4 }))).toBe('M src/Login.vue +12 -4');
    expect(fileRow(file({ change_type: 'added', path: 'n.ts', additions: 48, deletions: 0 }))).toBe('A n.ts +48 -0');
    expect(fileRow(file({ change_type: 'deleted', path: 'old/login.js', additions: 0, deletions: 22 }))).toBe(
      'D old/login.js +0 -22',
    );
    expect(
      fileRow(file({ change_type: 'renamed', old_path: 'old.ts', path: 'new.ts', additions: 2, deletions: 1 })),
    ).toBe('R old.ts -> new.ts +2 -1');
  });

  it('binary, truncated and too-large files say so in place of counts', () => {
    expect(
      fileRow(file({ binary: true, omitted_reason: 'binary', additions: 0, deletions: 0, path: 'logo.png' })),
    ).toBe('M logo.png binary changed');
    // An exact rename keeps git's header as its patch: no byte changed.
    expect(
      fileRow(file({ binary: true, omitted_reason: null, change_type: 'renamed', old_path: 'a.gif', path: 'b.gif' })),
    ).toBe('R a.gif -> b.gif binary unchanged');
    expect(fileRow(file({ truncated: true, path: 'package-lock.json' }))).toBe('M package-lock.json diff truncated');
    expect(fileRow(file({ omitted_reason: 'too_large', path: 'big.sql' }))).toBe('M big.sql too large');
  });

  it('the header counts files exactly and paths past the stored-row bound are counted and the bound named', () => {
    const files = [file({ path: 'a' }), file({ path: 'b' })];
    const lines = summaryLines({
      change_id: 'run:r',
      tracking: true,
      changed_count: 5,
      files,
      truncated: true,
      truncated_reasons: ['rows'],
      omitted_count: 3,
    });
    expect(lines).toEqual([
      'Changed 5 files',
      'M a +1 -2',
      'M b +1 -2',
      '+3 more files not stored: the change passed the bound of stored rows (RUNDIFF_MAX_CHANGED_FILES)',
    ]);
    expect(
      summaryLines({
        change_id: 'run:r',
        tracking: true,
        changed_count: 1,
        files: [files[0]!],
        truncated: false,
        truncated_reasons: [],
        omitted_count: 0,
      })[0],
    ).toBe('Changed 1 file');
    expect(
      summaryLines({
        change_id: 'run:r',
        tracking: true,
        changed_count: 0,
        files: [],
        truncated: false,
        truncated_reasons: [],
        omitted_count: 0,
      }),
    ).toEqual(['No files changed']);
    expect(summaryLines({ change_id: 'run:r', tracking: false, reason: 'workspace_missing' })[0]).toMatch(
      /not tracked: the workspace folder does not exist/,
    );
  });

  it('the outcome line gives the exit code or the signal and the duration', () => {
    expect(outcomeLine({ code: 0, signal: null }, 4210)).toBe('exit 0 in 4.2 s');
    // Under a second in ms, as the web UI writes a run's duration: a fast failure reads like a fast success.
    expect(outcomeLine({ code: 3, signal: null }, 50)).toBe('exit 3 in 50 ms');
    expect(outcomeLine({ code: null, signal: 'SIGINT' }, 999.4)).toBe('killed by SIGINT after 999 ms');
    expect(outcomeLine({ code: 1, signal: null }, 999.6)).toBe('exit 1 in 1.0 s');
    expect(outcomeLine({ code: null, signal: 'SIGTERM' }, 1000)).toBe('killed by SIGTERM after 1.0 s');
  });
});

import { describe, expect, it } from 'vitest';
import {
  changedHeading,
  fileListLabel,
  formatChangeRow,
  largeDiffText,
  needsLoadDiff,
  slashParts,
  moreFilesText,
  progressText,
  type ChangeRowInput,
} from './change-rows.ts';
import { omittedReasonText, truncatedNotes, untrackedReasonText } from './reasons.ts';

const file = (over: Partial<ChangeRowInput>): ChangeRowInput => ({
  id: 'f1',
  path: 'src/Login.vue',
  old_path: null,
  change_type: 'modified',
  additions: 12,
  deletions: 4,
  binary: false,
  truncated: false,
  omitted_reason: null,
  ...over,
});

const line = (f: ChangeRowInput) => {
  const r = formatChangeRow(f);
  return `${r.letter} ${r.label} ${r.stats}`;
};

describe('change block rows', () => {
  it('B24: formats added, modified, deleted and renamed rows as in the design document', () => {
    expect(line(file({}))).toBe('M src/Login.vue +12 -4');
    expect(line(file({ path: 'src/api/auth.ts', change_type: 'added', additions: 48, deletions: 0 }))).toBe(
      'A src/api/auth.ts +48 -0',
    );
    expect(line(file({ path: 'old/login.js', change_type: 'deleted', additions: 0, deletions: 22 }))).toBe(
      'D old/login.js +0 -22',
    );
    expect(line(file({ path: 'new.ts', old_path: 'old.ts', change_type: 'renamed', additions: 2, deletions: 1 }))).toBe(
      'R old.ts -> new.ts +2 -1',
    );
  });

  it('B24: binary, truncated and too-large rows show a word in place of counts', () => {
    expect(
      line(file({ path: 'assets/logo.png', binary: true, additions: 0, deletions: 0, omitted_reason: 'binary' })),
    ).toBe('M assets/logo.png binary changed');
    // An exact rename keeps git's header as its patch: no byte changed.
    expect(
      line(file({ path: 'b.gif', old_path: 'a.gif', change_type: 'renamed', binary: true, omitted_reason: null })),
    ).toBe('R a.gif -> b.gif binary unchanged');
    expect(line(file({ path: 'package-lock.json', truncated: true }))).toBe('M package-lock.json diff truncated');
    expect(line(file({ path: 'big.csv', omitted_reason: 'too_large', additions: 0, deletions: 0 }))).toBe(
      'M big.csv too large',
    );
    expect(formatChangeRow(file({ truncated: true })).statsIsNote).toBe(true);
  });

  it('a row whose patch fell outside the run budget still shows its exact counts', () => {
    expect(line(file({ omitted_reason: 'budget', additions: 7, deletions: 1 }))).toBe('M src/Login.vue +7 -1');
  });

  it('says "Changed 1 file" / "Changed N files" and "+N more files"', () => {
    expect(changedHeading(1)).toBe('Changed 1 file');
    expect(changedHeading(3)).toBe('Changed 3 files');
    expect(moreFilesText(0)).toBeNull();
    expect(moreFilesText(1)).toBe('+1 more file');
    expect(moreFilesText(47)).toBe('+47 more files');
    expect(progressText(1)).toBe('Working... 1 file touched');
    expect(progressText(5)).toBe('Working... 5 files touched');
  });

  it('a big patch is gated behind Load diff with its size, a big one over the budget too; a patch that cannot be had is not gated', () => {
    const big = { additions: 2_300, deletions: 0, patch_bytes: 131_072, omitted_reason: null };
    expect(needsLoadDiff(big)).toBe(true);
    expect(largeDiffText(big)).toBe('Large diff: +2,300 -0 lines, 128.0 KiB');
    // Left out for the budget: computed from the kept contents when opened, so gated by its lines.
    const budget = { additions: 2_300, deletions: 0, patch_bytes: 0, omitted_reason: 'budget' };
    expect(needsLoadDiff(budget)).toBe(true);
    expect(largeDiffText(budget)).toBe('Large diff: +2,300 -0 lines, computed when loaded');
    expect(needsLoadDiff({ ...budget, additions: 20 })).toBe(false);
    const complex = { additions: 2_300, deletions: 0, patch_bytes: 0, omitted_reason: 'too_complex' };
    expect(needsLoadDiff(complex)).toBe(false);
    expect(largeDiffText(complex)).toBe('Large diff: +2,300 -0 lines, patch not stored');
  });

  it('explains untracked runs, missing patches and truncation in words', () => {
    expect(untrackedReasonText('workspace_missing')).toBe('the workspace folder does not exist');
    expect(untrackedReasonText('no_checkpoint')).toBe(
      'the server restarted during the run, so its changes were not recorded',
    );
    expect(untrackedReasonText('something_new')).toBe('something new');
    expect(omittedReasonText('binary')).toBe('binary file');
    expect(omittedReasonText('budget')).toBe("the change's patch size budget went to smaller patches first");
    expect(truncatedNotes(['file_patch'])).toEqual([]);
    // Paths past the stored-row bound get a sentence of their own: how many, and the setting.
    expect(truncatedNotes(['rows', 'file_patch'], 35)).toEqual([
      '35 changed paths were not stored: the change has more than the stored-row bound (RUNDIFF_MAX_CHANGED_FILES) allows',
    ]);
    expect(truncatedNotes(['scan_files', 'rows'], 1)).toHaveLength(2);
    expect(truncatedNotes(['rows'], 1)[0]).toMatch(/^1 changed path was not stored/);
  });

  it('names a whole file list by its true total, and says "stored" when the row bound left paths out', () => {
    expect(fileListLabel(300, 300, 0)).toBe('Changed 300 files: all 300 listed');
    expect(fileListLabel(100020, 100000, 20)).toBe('Changed 100020 files: the 100000 stored listed');
    expect(fileListLabel(101, 101, 0, 1)).toBe('Changed 101 files: 100 of 101 listed, 1 viewed file hidden');
    expect(fileListLabel(100020, 100000, 20, 3)).toBe(
      'Changed 100020 files: 99997 of the 100000 stored listed, 3 viewed files hidden',
    );
  });
});

describe('slashParts', () => {
  it('cuts a path after each slash, losing nothing', () => {
    expect(slashParts('src/utils/format.ts')).toEqual(['src/', 'utils/', 'format.ts']);
    expect(slashParts('a.ts')).toEqual(['a.ts']);
    expect(slashParts('src/{utils -> lib}/f.ts').join('')).toBe('src/{utils -> lib}/f.ts');
  });
});

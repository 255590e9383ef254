import { describe, expect, it } from 'vitest';
import type { RevertFile, RevertResponse } from '../../../shared/index.ts';
import {
  bytesText,
  contentStoreText,
  conflictExcerpt,
  revertPatchFacts,
  revertActionText,
  revertDoneSummary,
  revertPathText,
  revertPlanSummary,
  revertBlockedNote,
  revertPartialLabel,
  revertPlanCounts,
} from './revert.ts';

const file = (over: Partial<RevertFile>): RevertFile => ({
  file_id: 'f',
  path: 'a.txt',
  old_path: null,
  action: 'restore',
  reason: null,
  patch: null,
  conflict: null,
  applied: false,
  ...over,
});

const answer = (files: RevertFile[], over: Partial<RevertResponse> = {}): RevertResponse => ({
  change_id: 'run:r1',
  dry_run: true,
  files,
  applied_count: files.filter((f) => f.action === 'restore' || f.action === 'merge').length,
  conflict_count: files.filter((f) => f.action === 'conflict').length,
  unavailable_count: files.filter((f) => f.action === 'unavailable' || f.action === 'refused').length,
  revert_run_id: null,
  revert_change_id: null,
  plan_id: '0'.repeat(64),
  ...over,
});

describe('revert words', () => {
  it('says what will happen and what happened to each file', () => {
    expect(revertActionText(file({ action: 'merge' }), false)).toBe('will be merged with your later edits');
    expect(revertActionText(file({ action: 'merge', applied: true }), true)).toBe('merged');
    expect(revertActionText(file({ action: 'restore', error: 'denied: EACCES' }), true)).toBe('failed: denied: EACCES');
    expect(revertActionText(file({ action: 'conflict' }), true)).toBe('conflicts with later edits: left as it is');
    expect(revertPathText(file({ path: 'new.txt', old_path: 'old.txt' }))).toBe('new.txt → old.txt');
  });

  it('summarises a plan and an outcome', () => {
    const plan = answer([file({}), file({ action: 'conflict' }), file({ action: 'unavailable' })]);
    expect(revertPlanSummary(plan)).toBe('1 of 3 files will be written, 1 conflicts, 1 cannot be reverted');
    const done = answer([file({ applied: true }), file({ action: 'restore', error: 'x' })], { dry_run: false });
    expect(revertDoneSummary(done)).toBe('Reverted 1 of 2 files; 1 could not be written');
  });

  it('says why an all-or-nothing Apply is off, and what the partial revert leaves', () => {
    const mixed = answer([file({}), file({}), file({ action: 'conflict' })]);
    expect(revertPlanCounts(mixed)).toEqual({ clean: 2, blocked: 1 });
    expect(revertBlockedNote(mixed)).toBe(
      '1 file cannot be reverted (marked below): a revert is all or nothing, so Apply is off. Reverting only the others leaves it as it is, which can leave the code inconsistent.',
    );
    expect(revertPartialLabel(mixed)).toBe('Revert only 2 files, leave 1');
    expect(revertBlockedNote(answer([file({}), file({ action: 'unchanged' })]))).toBeNull();
    expect(revertBlockedNote(answer([file({ action: 'unavailable' })]))).toBe(
      '1 file cannot be reverted (marked below): nothing would be written.',
    );
  });

  it('reads what the viewer needs from a revert patch, cuts a conflict to its parts, formats bytes', () => {
    const rename = file({
      path: 'new.txt',
      old_path: 'old.txt',
      patch:
        'diff --git a/new.txt b/old.txt\nsimilarity index 90%\nrename from new.txt\nrename to old.txt\n@@ -1,2 +1,2 @@\n a\n-B\n+b\n',
    });
    expect(revertPatchFacts(rename)).toEqual({
      path: 'old.txt',
      oldPath: 'new.txt',
      changeType: 'renamed',
      additions: 1,
      deletions: 1,
    });
    expect(revertPatchFacts(file({ patch: 'diff --git a/x b/x\ndeleted file mode 100644\n' })).changeType).toBe(
      'deleted',
    );
    const merged = [
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '<<<<<<< now',
      'mine',
      '=======',
      'theirs',
      '>>>>>>> undo',
      '7',
      '8',
      '9',
      '10',
      '11',
    ]
      .map((l) => `${l}\n`)
      .join('');
    expect(conflictExcerpt(merged)).toBe(
      '⋯ 3 unchanged lines\n4\n5\n6\n<<<<<<< now\nmine\n=======\ntheirs\n>>>>>>> undo\n7\n8\n9\n⋯ 2 unchanged lines\n',
    );
    expect(conflictExcerpt('no markers\n')).toBe('no markers\n');
    expect([0, 1536, 12.34 * 1024 * 1024, 1024 ** 3].map(bytesText)).toEqual(['0 B', '1.5 KiB', '12.3 MiB', '1 GiB']);
    expect(contentStoreText({ bytes_used: 2048, max_bytes: 1024 ** 3, blobs: 3 })).toBe('2 KiB of 1 GiB kept for undo');
  });
});

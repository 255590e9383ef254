import { describe, expect, it } from 'vitest';
import { findNearest, linesAt, patchSideLines, reanchor, splitLines, type SideLines, type Touch } from './anchor.ts';

const whole = (text: string): SideLines => ({ kind: 'whole', lines: splitLines(text) });

const PATCH = [
  'diff --git a/src/app.ts b/src/app.ts',
  'index 1111111..2222222 100644',
  '--- a/src/app.ts',
  '+++ b/src/app.ts',
  '@@ -2,3 +2,4 @@ function main',
  ' two',
  '-three',
  '+THREE',
  '+three and a half',
  ' four',
  '@@ -10,0 +12 @@',
  '+twelve',
  '\\ No newline at end of file',
  '',
].join('\n');

describe('reading a side', () => {
  it('splits a file into lines without their ends, keeping a carriage return, no final empty line', () => {
    expect(splitLines('a\r\nb\n\nc\n')).toEqual(['a\r', 'b', '', 'c']);
    expect(splitLines('no newline')).toEqual(['no newline']);
    expect(splitLines('')).toEqual([]);
  });

  it('a patch shows its context and removed lines on the before side, context and added lines after', () => {
    expect([...patchSideLines(PATCH, 'before')]).toEqual([
      [2, 'two'],
      [3, 'three'],
      [4, 'four'],
    ]);
    expect([...patchSideLines(PATCH, 'after')]).toEqual([
      [2, 'two'],
      [3, 'THREE'],
      [4, 'three and a half'],
      [5, 'four'],
      [12, 'twelve'],
    ]);
  });

  it('a patch of a new file numbers its lines from 1', () => {
    const added = 'diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+one\n+two\n';
    expect([...patchSideLines(added, 'after')]).toEqual([
      [1, 'one'],
      [2, 'two'],
    ]);
    expect(patchSideLines(added, 'before').size).toBe(0);
  });

  it('lines of a whole side are read by number; past the end is refused with the file length', () => {
    expect(linesAt(whole('a\nb\nc\n'), 2, 3)).toEqual({ ok: true, lines: ['b', 'c'] });
    expect(linesAt(whole('a\nb\nc\n'), 3, 4)).toEqual({ ok: false, reason: 'the file has 3 lines on that side' });
  });

  it('lines the patch does not show cannot be commented on when only the patch was kept', () => {
    const side: SideLines = { kind: 'hunks', lines: patchSideLines(PATCH, 'after') };
    expect(linesAt(side, 3, 4)).toEqual({ ok: true, lines: ['THREE', 'three and a half'] });
    const refused = linesAt(side, 5, 6);
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.reason).toMatch(/line 6 is not shown by the stored patch/);
  });

  it('finds the nearest place of a line sequence, the earlier one on a tie', () => {
    const side = whole('x\na\nb\nx\nx\na\nb\nx\na\nb\n');
    expect(findNearest(side, ['a', 'b'], 5)).toBe(6);
    expect(findNearest(side, ['a', 'b'], 1)).toBe(2);
    expect(findNearest(side, ['a', 'b'], 4)).toBe(2);
    expect(findNearest(side, ['a', 'c'], 4)).toBeNull();
  });
});

describe('re-anchoring after later changes', () => {
  const anchor = { path: 'src/app.ts', start_line: 2, end_line: 3, lines: ['b', 'c'], finished_at: 100, seq: 5 };
  const touch = (t: Partial<Touch> & Pick<Touch, 'change_id' | 'finished_at'>): Touch => ({
    file_id: `f-${t.change_id}`,
    path: 'src/app.ts',
    old_path: null,
    change_type: 'modified',
    seq: t.finished_at,
    ...t,
  });
  const contents = new Map<string, SideLines>();
  const read = (t: Touch) => contents.get(t.file_id) ?? null;
  const byPath = (touches: Touch[]) => (p: string) => touches.filter((t) => t.path === p || t.old_path === p);

  it('no later change touched the path: not outdated', () => {
    const earlier = touch({ change_id: 'run:0', finished_at: 50 });
    expect(reanchor(anchor, byPath([earlier]), read)).toEqual({ outdated: false, current: null });
  });

  it('a later change kept the anchored text at the same lines: not outdated', () => {
    const t = touch({ change_id: 'run:2', finished_at: 200 });
    contents.set(t.file_id, whole('a\nb\nc\nd\nnew\n'));
    expect(reanchor(anchor, byPath([t]), read)).toEqual({ outdated: false, current: null });
  });

  it('a later edit above the lines moves them: outdated, found at their new place', () => {
    const t = touch({ change_id: 'run:3', finished_at: 300 });
    contents.set(t.file_id, whole('new\nnew\na\nb\nc\n'));
    expect(reanchor(anchor, byPath([t]), read)).toEqual({
      outdated: true,
      current: { change_id: 'run:3', path: 'src/app.ts', start_line: 4, end_line: 5 },
    });
  });

  it('a later edit of the lines themselves: outdated and not found', () => {
    const t = touch({ change_id: 'run:4', finished_at: 400 });
    contents.set(t.file_id, whole('a\nB\nc\n'));
    expect(reanchor(anchor, byPath([t]), read)).toEqual({ outdated: true, current: null });
  });

  it('only the last later change counts (ordered by finish, not by arrival)', () => {
    const late = touch({ change_id: 'run:late', finished_at: 900 });
    const mid = touch({ change_id: 'run:mid', finished_at: 500 });
    contents.set(late.file_id, whole('a\nb\nc\n'));
    contents.set(mid.file_id, whole('zzz\n'));
    expect(reanchor(anchor, byPath([late, mid]), read)).toEqual({ outdated: false, current: null });
  });

  it('a later deletion of the file: outdated, nowhere', () => {
    const t = touch({ change_id: 'run:5', finished_at: 500, change_type: 'deleted' });
    expect(reanchor(anchor, byPath([t]), read)).toEqual({ outdated: true, current: null });
  });

  it('a later rename is followed, and a change after it under the new name counts', () => {
    const renamed = touch({
      change_id: 'run:6',
      finished_at: 600,
      change_type: 'renamed',
      path: 'lib/app.ts',
      old_path: 'src/app.ts',
    });
    const edited = touch({ change_id: 'run:7', finished_at: 700, path: 'lib/app.ts' });
    contents.set(renamed.file_id, whole('a\nb\nc\n'));
    contents.set(edited.file_id, whole('top\na\nb\nc\n'));
    expect(reanchor(anchor, byPath([renamed, edited]), read)).toEqual({
      outdated: true,
      current: { change_id: 'run:7', path: 'lib/app.ts', start_line: 3, end_line: 4 },
    });
    // Positive control: without the rename the edit under the other name does not concern the comment.
    expect(reanchor(anchor, byPath([edited]), read)).toEqual({ outdated: false, current: null });
  });

  it('a later change whose contents were not kept and whose patch does not show the lines: outdated, unknown place', () => {
    const t = touch({ change_id: 'run:8', finished_at: 800 });
    expect(reanchor(anchor, byPath([t]), read)).toEqual({ outdated: true, current: null });
    contents.set(t.file_id, {
      kind: 'hunks',
      lines: new Map([
        [2, 'b'],
        [3, 'c'],
      ]),
    });
    expect(reanchor(anchor, byPath([t]), read)).toEqual({ outdated: false, current: null });
  });
});

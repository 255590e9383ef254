import { describe, expect, it } from 'vitest';
import { hunkName, hunksOf, parseHunkHeader, undoHunks } from './hunks.ts';

/** Hunks chosen whole, by their headers. */
const whole = (...hunks: string[]) => hunks.map((hunk) => ({ hunk }));

const before = Buffer.from('a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n');
const after = Buffer.from('a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n');
// As git prints it: two hunks, the second adding a line at the end.
const patch = `diff --git a/f b/f
index 1..2 100644
--- a/f
+++ b/f
@@ -1,5 +1,5 @@
 a
-b
+B
 c
 d
 e
@@ -10,3 +10,4 @@ i
 j
 k
 l
+m
`;

describe('undoing single hunks', () => {
  it('reads hunk headers as git prints them, a count of 1 left out', () => {
    expect(parseHunkHeader('@@ -3 +3,0 @@ fn')).toEqual({ oldStart: 3, oldLines: 1, newStart: 3, newLines: 0 });
    expect(hunkName({ oldStart: 3, oldLines: 1, newStart: 2, newLines: 0 })).toBe('@@ -3 +2,0 @@');
    expect(parseHunkHeader('@@ bogus')).toBeNull();
    expect(hunksOf(patch).map((h) => hunkName(h.range))).toEqual(['@@ -1,5 +1,5 @@', '@@ -10,3 +10,4 @@']);
  });

  it('puts back one hunk and keeps the other; both hunks give the start', () => {
    const first = undoHunks(after, patch, whole('@@ -1,5 +1,5 @@'));
    expect(first).toEqual({ ok: true, bytes: Buffer.from('a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n') });
    const second = undoHunks(after, patch, whole('@@ -10,3 +10,4 @@ i'));
    expect(second).toEqual({ ok: true, bytes: Buffer.from('a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n') });
    expect(undoHunks(after, patch, whole('@@ -10,3 +10,4 @@', '@@ -1,5 +1,5 @@'))).toEqual({ ok: true, bytes: before });
  });

  it('keeps a missing newline at the end as the patch says', () => {
    const p = `@@ -1,2 +1,2 @@
 x
-y
\\ No newline at end of file
+Y
\\ No newline at end of file
`;
    expect(undoHunks(Buffer.from('x\nY'), p, whole('@@ -1,2 +1,2 @@'))).toEqual({
      ok: true,
      bytes: Buffer.from('x\ny'),
    });
  });

  it('undoes a hunk that only removed lines, and one that only added lines at the top', () => {
    const removed = `@@ -2,2 +1,0 @@
-b
-c
`;
    expect(undoHunks(Buffer.from('a\nd\n'), removed, whole('@@ -2,2 +1,0 @@'))).toEqual({
      ok: true,
      bytes: Buffer.from('a\nb\nc\nd\n'),
    });
    const addedTop = `@@ -0,0 +1 @@
+new
`;
    expect(undoHunks(Buffer.from('new\na\n'), addedTop, whole('@@ -0,0 +1 @@'))).toEqual({
      ok: true,
      bytes: Buffer.from('a\n'),
    });
  });

  it('names a hunk that is not in the patch, and a patch that is not of this content', () => {
    expect(undoHunks(after, patch, whole('@@ -2,5 +2,5 @@'))).toEqual({
      ok: false,
      reason: 'not_found',
      hunk: '@@ -2,5 +2,5 @@',
    });
    expect(undoHunks(Buffer.from('other\n'), patch, whole('@@ -1,5 +1,5 @@'))).toMatchObject({
      ok: false,
      reason: 'mismatch',
    });
  });
});

describe('undoing some lines of a hunk', () => {
  // Body lines: 0 ' a', 1 '-b', 2 '-c', 3 '+B', 4 '+C', 5 '+X', 6 ' d'.
  const p = `@@ -1,4 +1,5 @@
 a
-b
-c
+B
+C
+X
 d
`;
  const end = Buffer.from('a\nB\nC\nX\nd\n');
  const some = (...lines: number[]) => [{ hunk: '@@ -1,4 +1,5 @@', lines }];

  it('an unchosen + line stays, an unchosen - line stays removed', () => {
    expect(undoHunks(end, p, some(5))).toEqual({ ok: true, bytes: Buffer.from('a\nB\nC\nd\n') });
    expect(undoHunks(end, p, some(1))).toEqual({ ok: true, bytes: Buffer.from('a\nb\nB\nC\nX\nd\n') });
    expect(undoHunks(end, p, some(1, 3))).toEqual({ ok: true, bytes: Buffer.from('a\nb\nC\nX\nd\n') });
  });

  it('every + and - line chosen is the whole hunk; a hunk chosen whole and in part is undone whole', () => {
    const start = Buffer.from('a\nb\nc\nd\n');
    expect(undoHunks(end, p, some(1, 2, 3, 4, 5))).toEqual({ ok: true, bytes: start });
    expect(undoHunks(end, p, [...some(1), { hunk: '@@ -1,4 +1,5 @@' }])).toEqual({ ok: true, bytes: start });
    expect(undoHunks(end, p, [...some(1, 2), ...some(3, 4, 5)])).toEqual({ ok: true, bytes: start });
  });

  it('refuses a context line, an index past the hunk, and a split unterminated last line', () => {
    expect(undoHunks(end, p, some(0))).toMatchObject({ ok: false, reason: 'bad_lines', message: /context line/ });
    expect(undoHunks(end, p, some(7))).toMatchObject({ ok: false, reason: 'bad_lines', message: /0 to 6/ });
    // Control: the last index is accepted.
    expect(undoHunks(end, p, some(6))).toMatchObject({ ok: false, message: /context/ });
    expect(undoHunks(end, p, some(5))).toMatchObject({ ok: true });
    const eof = `@@ -1,2 +1,2 @@
 x
-y
\\ No newline at end of file
+Y
\\ No newline at end of file
`;
    const name = '@@ -1,2 +1,2 @@';
    expect(undoHunks(Buffer.from('x\nY'), eof, [{ hunk: name, lines: [1] }])).toMatchObject({
      ok: false,
      reason: 'bad_lines',
      message: /no newline/,
    });
    // The + line alone: the - line stays removed, the file ends with x.
    expect(undoHunks(Buffer.from('x\nY'), eof, [{ hunk: name, lines: [2] }])).toEqual({
      ok: true,
      bytes: Buffer.from('x\n'),
    });
  });
});

import { describe, expect, it } from 'vitest';
import { hunkName, hunksOf, parseHunkHeader, undoHunks } from './hunks.ts';

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
    const first = undoHunks(after, patch, ['@@ -1,5 +1,5 @@']);
    expect(first).toEqual({ ok: true, bytes: Buffer.from('a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n') });
    const second = undoHunks(after, patch, ['@@ -10,3 +10,4 @@ i']);
    expect(second).toEqual({ ok: true, bytes: Buffer.from('a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n') });
    expect(undoHunks(after, patch, ['@@ -10,3 +10,4 @@', '@@ -1,5 +1,5 @@'])).toEqual({ ok: true, bytes: before });
  });

  it('keeps a missing newline at the end as the patch says', () => {
    const p = `@@ -1,2 +1,2 @@
 x
-y
\\ No newline at end of file
+Y
\\ No newline at end of file
`;
    expect(undoHunks(Buffer.from('x\nY'), p, ['@@ -1,2 +1,2 @@'])).toEqual({ ok: true, bytes: Buffer.from('x\ny') });
  });

  it('undoes a hunk that only removed lines, and one that only added lines at the top', () => {
    const removed = `@@ -2,2 +1,0 @@
-b
-c
`;
    expect(undoHunks(Buffer.from('a\nd\n'), removed, ['@@ -2,2 +1,0 @@'])).toEqual({
      ok: true,
      bytes: Buffer.from('a\nb\nc\nd\n'),
    });
    const addedTop = `@@ -0,0 +1 @@
+new
`;
    expect(undoHunks(Buffer.from('new\na\n'), addedTop, ['@@ -0,0 +1 @@'])).toEqual({
      ok: true,
      bytes: Buffer.from('a\n'),
    });
  });

  it('names a hunk that is not in the patch, and a patch that is not of this content', () => {
    expect(undoHunks(after, patch, ['@@ -2,5 +2,5 @@'])).toEqual({
      ok: false,
      reason: 'not_found',
      hunk: '@@ -2,5 +2,5 @@',
    });
    expect(undoHunks(Buffer.from('other\n'), patch, ['@@ -1,5 +1,5 @@'])).toMatchObject({
      ok: false,
      reason: 'mismatch',
    });
  });
});

import { describe, expect, it } from 'vitest';
import { jsdiffLineDiff, jsdiffTrimmed, oneSidedDiff } from './hunks.ts';
import { gitPreprocessKeepsMinimal, trimmedKeepsMinimal } from './minimal-safe.ts';
import { middleCount, recordCount, trimEnds } from './trim-ends.ts';

/** The in-process diff of only the part between the equal ends of two files. */

const buf = (s: string) => Buffer.from(s, 'latin1');
const records = (s: string) => s.match(/[^\n]*\n|[^\n]+$/g) ?? [];

function rng(seed: number) {
  let s = seed >>> 0;
  return (n: number) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return Math.floor((s / 2 ** 32) * n);
  };
}

describe('trimming equal ends', () => {
  it('counts whole records only: a last line without its newline differs from the same text with one', () => {
    const t = trimEnds(buf('a\nb\nc'), buf('a\nb\nc\n'));
    expect([t.head, t.tail, middleCount(t.a, t), middleCount(t.b, t)]).toEqual([2, 0, 1, 1]);
    const u = trimEnds(buf('x\n'), buf('x\nx\n'));
    // The tail never overlaps the head (git limits it the same way).
    expect([u.head, u.tail, middleCount(u.a, u), middleCount(u.b, u)]).toEqual([1, 0, 0, 1]);
    const e = trimEnds(buf(''), buf('z\n'));
    expect([recordCount(e.a), recordCount(e.b), e.head, e.tail]).toEqual([0, 1, 0, 0]);
  });

  it('a block inserted or removed between equal ends is one hunk with git context, counts without diffing', () => {
    const before = 'fn main\n1\n2\n3\n4\n5\n6\n7\n';
    const after = 'fn main\n1\n2\n3\nnew a\nnew b\n4\n5\n6\n7\n';
    const d = oneSidedDiff(trimEnds(buf(before), buf(after)));
    expect(d.additions).toBe(2);
    expect(d.deletions).toBe(0);
    expect(d.hunks.toString('latin1')).toBe('@@ -2,6 +2,8 @@ fn main\n 1\n 2\n 3\n+new a\n+new b\n 4\n 5\n 6\n');
    // The same text jsdiff writes for it.
    expect(d.hunks.toString('latin1')).toBe(jsdiffLineDiff(buf(before), buf(after), 1000)!.hunks.toString('latin1'));
    const removed = oneSidedDiff(trimEnds(buf(after), buf(before)));
    expect([removed.additions, removed.deletions]).toEqual([0, 2]);
    // 'b' without a newline is not 'b\n': both sides changed, so this pair is not one-sided.
    const noEol = trimEnds(buf('a\nb'), buf('a\nb\nc'));
    expect([middleCount(noEol.a, noEol), middleCount(noEol.b, noEol)]).toEqual([1, 2]);
    expect(() => oneSidedDiff(noEol)).toThrow();
  });

  it('matches jsdiff on the whole files (counts, and hunks where the placement is unambiguous), fuzzed', () => {
    const rand = rng(7);
    let oneSided = 0;
    let windowed = 0;
    for (let k = 0; k < 400; k++) {
      const n = rand(60);
      const lines = Array.from({ length: n }, (_, i) => `line ${i} ${rand(1000)}\n`);
      const after = lines.slice();
      const ops = 1 + rand(3);
      for (let o = 0; o < ops; o++) {
        const at = rand(after.length + 1);
        if (rand(2) === 0) after.splice(at, rand(3), ...Array.from({ length: rand(4) }, () => `new ${rand(1e6)}\n`));
        else after.splice(at, rand(3));
      }
      let a = lines.join('');
      let b = after.join('');
      if (rand(5) === 0) a = a.replace(/\n$/, '');
      if (rand(5) === 0) b = b.replace(/\n$/, '');
      if (a === b) continue;
      const t = trimEnds(buf(a), buf(b));
      const whole = jsdiffLineDiff(buf(a), buf(b), 10_000)!;
      const ours = middleCount(t.a, t) === 0 || middleCount(t.b, t) === 0 ? oneSidedDiff(t) : jsdiffTrimmed(t, 10_000);
      if (middleCount(t.a, t) === 0 || middleCount(t.b, t) === 0) oneSided++;
      else windowed++;
      if (!ours) continue; // jsdiff's alignment reached into the context: the caller diffs the whole files
      expect([ours.additions, ours.deletions]).toEqual([whole.additions, whole.deletions]);
      // Unique lines: only one minimal diff exists, so the hunks are the same text.
      expect(ours.hunks.toString('latin1')).toBe(whole.hunks.toString('latin1'));
    }
    expect(oneSided).toBeGreaterThan(30);
    expect(windowed).toBeGreaterThan(30);
  });

  it("classifies the changed part like git's preprocessing does on the whole files, fuzzed with repeated lines", () => {
    const rand = rng(11);
    const vocab = ['\n', '\n', '}\n', '{\n', 'x\n'];
    let unsafe = 0;
    for (let k = 0; k < 500; k++) {
      const gen = () => (rand(3) === 0 ? `u${rand(1e6)}\n` : vocab[rand(vocab.length)]!);
      const before = Array.from({ length: rand(120) }, gen);
      const after = before.slice();
      for (let o = 1 + rand(4); o > 0; o--)
        after.splice(rand(after.length + 1), rand(10), ...Array.from({ length: rand(10) }, gen));
      const a = before.join('');
      const b = after.join('');
      const expected = gitPreprocessKeepsMinimal(records(a), records(b));
      expect(trimmedKeepsMinimal(trimEnds(buf(a), buf(b)))).toBe(expected);
      if (!expected) unsafe++;
    }
    // Both answers occur, so the comparison covers each.
    expect(unsafe).toBeGreaterThan(20);
  });
});

import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { keyFromBytes, keyFromText } from '../paths/index.ts';
import { jsdiffLikelyFits, jsdiffLineDiff } from './hunks.ts';
import { computeDelta, wholeRunPatch } from './index.ts';
import { cutToBytes, toPatchText } from './patch-text.ts';
import type { CandidateChange, DeltaInput, FileSide, LineDiff } from './types.ts';

/** The pure core alone: no git, so hunks come from jsdiff and renames from exact content matches. */

const LIMITS: DeltaInput['limits'] = {
  maxChangedFiles: 50,
  maxFilePatchBytes: 128 * 1024,
  maxRunPatchBytes: 512 * 1024,
  diffTimeoutMs: 100,
};

function side(content: string | Buffer, mode = '100644', extra: Partial<FileSide> = {}): FileSide {
  const bytes = Buffer.from(content);
  return { bytes, size: bytes.length, mode, ...extra };
}
const change = (path: string, before: FileSide | null, after: FileSide | null): CandidateChange => ({
  path: keyFromText(path),
  before,
  after,
});
const delta = (changes: CandidateChange[], extra: Partial<DeltaInput> = {}) =>
  computeDelta({ changes, limits: LIMITS, ...extra });

describe('classification and stanzas (B7, B11, B12)', () => {
  it('B7: a modified file gets counts and a git-style stanza with an index line', async () => {
    const out = await delta([change('src/a.txt', side('one\ntwo\nthree\n'), side('one\n2\nthree\n'))]);
    expect(out.files).toHaveLength(1);
    const f = out.files[0]!;
    expect(f).toMatchObject({
      path: 'src/a.txt',
      old_path: null,
      change_type: 'modified',
      additions: 1,
      deletions: 1,
      binary: false,
      truncated: false,
      size_before: 14,
      size_after: 12,
      omitted_reason: null,
    });
    expect(f.patch).toBe(
      'diff --git a/src/a.txt b/src/a.txt\n' +
        'index 4cb29ea..f04eb26 100644\n' +
        '--- a/src/a.txt\n' +
        '+++ b/src/a.txt\n' +
        '@@ -1,3 +1,3 @@\n' +
        ' one\n' +
        '-two\n' +
        '+2\n' +
        ' three\n',
    );
    expect(f.patch_bytes).toBe(Buffer.byteLength(f.patch!));
    expect(out).toMatchObject({
      changed_count: 1,
      modified_count: 1,
      added_count: 0,
      omitted_count: 0,
      truncated_reasons: [],
      total_patch_bytes: f.patch_bytes,
    });
  });

  it('B7: a new empty file is added +0 -0 and a deleted empty file deleted +0 -0', async () => {
    const added = await delta([change('empty-new', null, side(''))]);
    expect(added.files.map((f) => [f.path, f.change_type, f.additions, f.deletions, f.patch])).toEqual([
      [
        'empty-new',
        'added',
        0,
        0,
        'diff --git a/empty-new b/empty-new\nnew file mode 100644\nindex 0000000..e69de29\n',
      ],
    ]);
    const deleted = await delta([change('empty-old', side(''), null)]);
    expect(deleted.files.map((f) => [f.path, f.change_type, f.additions, f.deletions, f.patch])).toEqual([
      [
        'empty-old',
        'deleted',
        0,
        0,
        'diff --git a/empty-old b/empty-old\ndeleted file mode 100644\nindex e69de29..0000000\n',
      ],
    ]);
  });

  it('B7: added and deleted files carry their whole content, with "No newline at end of file"', async () => {
    const out = await delta([
      change('new.sh', null, side('#!/bin/sh\necho hi', '100755')),
      change('old.txt', side('a\nb\n'), null),
    ]);
    expect(out.files[0]!.patch).toBe(
      'diff --git a/new.sh b/new.sh\nnew file mode 100755\nindex 0000000..fbf5376\n--- /dev/null\n+++ b/new.sh\n' +
        '@@ -0,0 +1,2 @@\n+#!/bin/sh\n+echo hi\n\\ No newline at end of file\n',
    );
    expect(out.files[0]).toMatchObject({ additions: 2, deletions: 0 });
    expect(out.files[1]!.patch).toBe(
      'diff --git a/old.txt b/old.txt\ndeleted file mode 100644\nindex 422c2b7..0000000\n--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n',
    );
    expect(out).toMatchObject({ added_count: 1, deleted_count: 1 });
  });

  it('B12: an executable-bit change is modified +0 -0 with old mode / new mode lines', async () => {
    const out = await delta([change('run.sh', side('echo\n'), side('echo\n', '100755'))]);
    expect(out.files[0]).toMatchObject({
      change_type: 'modified',
      additions: 0,
      deletions: 0,
      patch: 'diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n',
    });
  });

  it('B12: a mode change with an edit has both the mode lines and an index line without a mode', async () => {
    const out = await delta([change('run.sh', side('echo\n'), side('echo hi\n', '100755'))]);
    expect(out.files[0]!.patch).toBe(
      'diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\nindex fa11a6a..8b2fe54\n--- a/run.sh\n+++ b/run.sh\n@@ -1 +1 @@\n-echo\n+echo hi\n',
    );
  });

  it('B11: a symlink is its target text with mode 120000', async () => {
    const out = await delta([change('link', null, side('../outside/target', '120000'))]);
    expect(out.files[0]!.patch).toBe(
      'diff --git a/link b/link\nnew file mode 120000\nindex 0000000..301cc15\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+../outside/target\n\\ No newline at end of file\n',
    );
  });

  it('B11: a file replaced by a symlink is one modified row whose patch deletes and creates, as git writes a type change', async () => {
    const out = await delta([change('t', side('x\n'), side('f', '120000'))]);
    expect(out.files[0]).toMatchObject({ change_type: 'modified', additions: 1, deletions: 1 });
    expect(out.files[0]!.patch).toBe(
      'diff --git a/t b/t\ndeleted file mode 100644\nindex 587be6b..0000000\n--- a/t\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n' +
        'diff --git a/t b/t\nnew file mode 120000\nindex 0000000..4d1ae35\n--- /dev/null\n+++ b/t\n@@ -0,0 +1 @@\n+f\n\\ No newline at end of file\n',
    );
  });

  it('B16: a submodule is a row whose content is "Subproject commit <sha>"', async () => {
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(40);
    const out = await delta([
      change('sub', side(`Subproject commit ${a}\n`, '160000'), side(`Subproject commit ${b}\n`, '160000')),
    ]);
    expect(out.files[0]).toMatchObject({ change_type: 'modified', additions: 1, deletions: 1, binary: false });
    expect(out.files[0]!.patch).toBe(
      `diff --git a/sub b/sub\nindex aaaaaaa..bbbbbbb 160000\n--- a/sub\n+++ b/sub\n@@ -1 +1 @@\n-Subproject commit ${a}\n+Subproject commit ${b}\n`,
    );
  });

  it('sides that are equal (same bytes, same mode) are not a change', async () => {
    const out = await delta([change('same', side('x\n'), side('x\n'))]);
    expect(out).toMatchObject({ files: [], changed_count: 0 });
  });
});

describe('line counts (B9) without git', () => {
  it('B9: CRLF lines count as lines and a changed line ending is a changed line', async () => {
    const out = await delta([change('crlf.txt', side('a\r\nb\r\nc\r\n'), side('a\r\nb\nc\r\nd\r\n'))]);
    expect(out.files[0]).toMatchObject({ additions: 2, deletions: 1 });
    expect(out.files[0]!.patch).toBe(
      'diff --git a/crlf.txt b/crlf.txt\nindex b5eff57..34e9288 100644\n--- a/crlf.txt\n+++ b/crlf.txt\n' +
        '@@ -1,3 +1,4 @@\n a\r\n-b\r\n+b\n c\r\n+d\r\n',
    );
  });

  it('B9: adding the final newline changes the last line', async () => {
    const out = await delta([change('f', side('a\nb'), side('a\nb\n'))]);
    expect(out.files[0]).toMatchObject({ additions: 1, deletions: 1 });
    expect(out.files[0]!.patch).toContain('@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n');
  });

  it("B9: hunk headers name the enclosing function as git's default does", async () => {
    const before = 'int main(void)\n{\n  a();\n  b();\n  c();\n  d();\n  e();\n}\n';
    const out = await delta([change('m.c', side(before), side(before.replace('e();', 'E();')))]);
    expect(out.files[0]!.patch).toContain('@@ -4,5 +4,5 @@ int main(void)\n');
  });

  it('B9: the batch engine answers what jsdiff cannot provably match (all of it with exactHunks)', async () => {
    let asked = 0;
    const batch = async (pairs: ReadonlyArray<{ before: Buffer; after: Buffer }>): Promise<Array<LineDiff | null>> => {
      asked += pairs.length;
      return pairs.map(() => ({ additions: 7, deletions: 5, hunks: Buffer.from('@@ -1 +1 @@\n-a\n+b\n') }));
    };
    const small = await delta([change('f', side('a\n'), side('b\n'))], { batchDiff: batch });
    expect(small.files[0]).toMatchObject({ additions: 1, deletions: 1 });
    expect(asked).toBe(0);
    // A multimatch blank line inside a rewritten run: git may count it changed, so git must answer.
    const hazard = await delta(
      [change('g', side('line 10\n\nline 12\nline 13\nline 14\nline 15\nline 16\nline 17\n'), side('\n\n\n\n'))],
      { batchDiff: batch },
    );
    expect(hazard.files[0]).toMatchObject({ additions: 7, deletions: 5 });
    expect(asked).toBe(1);
    const exact = await delta([change('f', side('a\n'), side('b\n'))], { batchDiff: batch, exactHunks: true });
    expect(exact.files[0]).toMatchObject({ additions: 7, deletions: 5 });
    expect(exact.files[0]!.patch).toMatch(/\+\+\+ b\/f\n@@ -1 \+1 @@\n-a\n\+b\n$/);
    expect(asked).toBe(2);
  });

  it('B9: when the batch engine fails, jsdiff and then the per-file engine are tried; too_complex only if none finishes', async () => {
    const before = Buffer.from(Array.from({ length: 3000 }, (_, i) => `old ${i}\n`).join(''));
    const after = Buffer.from(Array.from({ length: 3000 }, (_, i) => `new ${i}\n`).join(''));
    const failing = async () => {
      throw new Error('engine down');
    };
    const limits = { ...LIMITS, diffTimeoutMs: 1 };
    // Deterministic on any machine: the cost estimate (not a clock) keeps jsdiff out of a 3,000-line
    // rewrite on a 1 ms budget, so the per-file engine alone decides.
    expect(jsdiffLikelyFits(before, after, limits.diffTimeoutMs)).toBe(false);
    const viaFallback = await computeDelta({
      changes: [change('big', side(before), side(after))],
      limits,
      batchDiff: failing,
      fallbackDiff: async () => ({ additions: 3000, deletions: 3000, hunks: '@@ -1,3000 +1,3000 @@\n' }),
    });
    expect(viaFallback.files[0]).toMatchObject({ additions: 3000, deletions: 3000, omitted_reason: null });
    const none = await computeDelta({
      changes: [change('big', side(before), side(after))],
      limits,
      batchDiff: failing,
      fallbackDiff: failing,
    });
    expect(none.files[0]).toMatchObject({
      additions: 0,
      deletions: 0,
      patch: null,
      patch_bytes: 0,
      omitted_reason: 'too_complex',
      truncated: false,
    });
    expect(none.changed_count).toBe(1);
  });
});

describe('the per-file jsdiff budget', () => {
  const before = Buffer.from(Array.from({ length: 200 }, (_, i) => `old ${i}\n`).join(''));
  const after = Buffer.from(Array.from({ length: 200 }, (_, i) => `new ${i}\n`).join(''));

  it('B9: jsdiff gives up (null) once its clock passes the budget, and answers within it', () => {
    // Control: the real clock and a generous budget give the full diff.
    expect(jsdiffLineDiff(before, after, 60_000)).toMatchObject({ additions: 200, deletions: 200 });
    // jsdiff reads the wall clock itself: a clock that jumps 1 s per reading is past a 100 ms budget
    // at its first check, whatever the machine's speed.
    let t = Date.now();
    vi.spyOn(Date, 'now').mockImplementation(() => (t += 1_000));
    onTestFinished(() => void vi.restoreAllMocks());
    expect(jsdiffLineDiff(before, after, 100)).toBeNull();
  });

  it('B9: with no engine to answer, a jsdiff past its budget leaves the file too_complex, counted', async () => {
    const failing = async () => {
      throw new Error('engine down');
    };
    let t = Date.now();
    vi.spyOn(Date, 'now').mockImplementation(() => (t += 1_000));
    onTestFinished(() => void vi.restoreAllMocks());
    const out = await computeDelta({
      changes: [change('big', side(before), side(after))],
      limits: LIMITS,
      batchDiff: failing,
    });
    expect(out.files[0]).toMatchObject({ additions: 0, deletions: 0, patch: null, omitted_reason: 'too_complex' });
    expect(out.changed_count).toBe(1);
  });
});

describe('binary and unavailable content (B10, B19)', () => {
  it('B10: a NUL in the first 8,000 bytes of either side makes the row binary; later NULs do not', async () => {
    const late = Buffer.concat([Buffer.alloc(8000, 0x61), Buffer.from([0])]);
    const early = Buffer.concat([Buffer.alloc(7999, 0x61), Buffer.from([0])]);
    const out = await delta([
      change('early.bin', side('text\n'), side(early)),
      change('late.txt', null, side(late)),
      change('was-bin', side(Buffer.from([1, 0, 2])), null),
    ]);
    expect(
      out.files.map((f) => [
        f.path,
        f.binary,
        f.additions,
        f.deletions,
        f.patch,
        f.omitted_reason,
        f.size_before,
        f.size_after,
      ]),
    ).toEqual([
      ['early.bin', true, 0, 0, null, 'binary', 5, 8000],
      ['late.txt', false, 1, 0, expect.any(String), null, null, 8001],
      ['was-bin', true, 0, 0, null, 'binary', 3, null],
    ]);
    expect(out).toMatchObject({ binary_count: 2, changed_count: 3 });
  });

  it('B10: the binary attribute makes a text file binary', async () => {
    const out = await delta([change('data.csv', side('a\n'), side('b\n', '100644', { binaryAttr: true }))]);
    expect(out.files[0]).toMatchObject({
      binary: true,
      patch: null,
      omitted_reason: 'binary',
      additions: 0,
      deletions: 0,
    });
  });

  it('B19: a side without bytes gives patch null, counts 0 and its reason', async () => {
    const gone: FileSide = { bytes: null, unavailable: 'too_large', size: 10_000_000, mode: '100644' };
    const noSnap: FileSide = { bytes: null, unavailable: 'no_snapshot', size: 12, mode: '100644' };
    const out = await delta([
      change('huge', gone, side('small now\n')),
      change('lost', noSnap, null),
      change('z', { bytes: null, size: 3, mode: '100644' }, side('x\n')),
    ]);
    expect(
      out.files.map((f) => [f.path, f.change_type, f.patch, f.additions, f.deletions, f.omitted_reason, f.size_before]),
    ).toEqual([
      ['huge', 'modified', null, 0, 0, 'too_large', 10_000_000],
      ['lost', 'deleted', null, 0, 0, 'no_snapshot', 12],
      ['z', 'modified', null, 0, 0, 'no_snapshot', 3],
    ]);
  });

  it('B12: a mode change of content known equal only by oid still gets its mode stanza', async () => {
    const before: FileSide = { bytes: null, unavailable: 'too_large', size: 9, mode: '100644', oid: 'abc' };
    const after: FileSide = { bytes: null, unavailable: 'too_large', size: 9, mode: '100755', oid: 'abc' };
    const out = await delta([change('big.sh', before, after)]);
    expect(out.files[0]).toMatchObject({
      omitted_reason: null,
      patch: 'diff --git a/big.sh b/big.sh\nold mode 100644\nnew mode 100755\n',
    });
  });
});

describe('renames without a detector (B8 fallback)', () => {
  it('B8: identical content is renamed +0 -0 with a rename-only stanza', async () => {
    const out = await delta([
      change('old/name.txt', side('hello\n'), null),
      change('new/name.txt', null, side('hello\n')),
    ]);
    expect(out.files).toHaveLength(1);
    expect(out.files[0]).toMatchObject({
      path: 'new/name.txt',
      old_path: 'old/name.txt',
      change_type: 'renamed',
      additions: 0,
      deletions: 0,
    });
    expect(out.files[0]!.patch).toBe(
      'diff --git a/old/name.txt b/new/name.txt\nsimilarity index 100%\nrename from old/name.txt\nrename to new/name.txt\n',
    );
    expect(out).toMatchObject({ changed_count: 1, renamed_count: 1, added_count: 0, deleted_count: 0 });
  });

  it('B8: ties between identical sources prefer the same file name, then the first path; empty files pair too', async () => {
    const out = await delta([
      change('a/x.txt', side('same\n'), null),
      change('b/y.txt', side('same\n'), null),
      change('c/y.txt', side('same\n'), null),
      change('d/y.txt', null, side('same\n')),
      change('e/z.txt', null, side('same\n')),
      change('e1', side(''), null),
      change('e2', null, side('')),
    ]);
    expect(out.files.map((f) => [f.change_type, f.old_path, f.path])).toEqual([
      ['deleted', null, 'c/y.txt'],
      ['renamed', 'b/y.txt', 'd/y.txt'],
      ['renamed', 'a/x.txt', 'e/z.txt'],
      ['renamed', 'e1', 'e2'],
    ]);
  });

  it('B8: a rename with a mode change keeps the mode lines before the similarity', async () => {
    const out = await delta([change('a.sh', side('x\n'), null), change('b.sh', null, side('x\n', '100755'))]);
    expect(out.files[0]!.patch).toBe(
      'diff --git a/a.sh b/b.sh\nold mode 100644\nnew mode 100755\nsimilarity index 100%\nrename from a.sh\nrename to b.sh\n',
    );
  });

  it('B8: a symlink and a file with the same text do not pair', async () => {
    const out = await delta([change('l', side('t', '120000'), null), change('f', null, side('t'))]);
    expect(out.files.map((f) => f.change_type)).toEqual(['added', 'deleted']);
  });

  it('B8: a detector that fails or times out degrades to exact pairing, with a reason', async () => {
    const changes = [
      change('a', side('x\n'), null),
      change('b', null, side('x\n')),
      change('c', side('1\n2\n3\n'), null),
      change('d', null, side('1\n2\n3\n4\n')),
    ];
    const timedOut = await delta(changes, { renameDetector: async () => ({ pairs: [], degraded: 'git_timeout' }) });
    expect(timedOut.files.map((f) => f.change_type)).toEqual(['renamed', 'deleted', 'added']);
    expect(timedOut.truncated_reasons).toEqual(['git_timeout']);
    const thrown = await delta(changes, {
      renameDetector: async () => {
        throw new Error('boom');
      },
    });
    expect(thrown.truncated_reasons).toEqual(['degraded']);
  });

  it('B8: no detector call when identical contents already pair every deleted (or every added) path', async () => {
    let calls = 0;
    const renameDetector = async () => {
      calls++;
      return { pairs: [] };
    };
    const moved = await delta(
      [change('a/x', side('1\n'), null), change('b/x', null, side('1\n')), change('new', null, side('2\n'))],
      { renameDetector },
    );
    expect(moved.files.map((f) => f.change_type)).toEqual(['renamed', 'added']);
    expect(calls).toBe(0);
    await delta([change('gone', side('1\n'), null), change('new', null, side('2\n'))], { renameDetector });
    expect(calls).toBe(1);
  });

  it('B8: no detector call when every path left is more than twice the size of every other (git cannot pair them)', async () => {
    let calls = 0;
    const renameDetector = async () => {
      calls++;
      return { pairs: [] };
    };
    const big = 'x'.repeat(100) + '\n';
    // 101 bytes against 50 (over twice): no pair can reach 50% similarity, git is not asked.
    const far = await delta([change('gone', side(big), null), change('new', null, side('y'.repeat(49) + '\n'))], {
      renameDetector,
    });
    expect(far.files.map((f) => f.change_type)).toEqual(['deleted', 'added']);
    expect(calls).toBe(0);
    // A symlink never pairs by similarity: its size does not matter.
    await delta([change('gone', side(big), null), change('ln', null, side('z'.repeat(100), '120000'))], {
      renameDetector,
    });
    expect(calls).toBe(0);
    // Positive controls: 101 against 51 (at most twice) may pair; a side without bytes is git's call.
    await delta([change('gone', side(big), null), change('new', null, side('y'.repeat(50) + '\n'))], {
      renameDetector,
    });
    expect(calls).toBe(1);
    await delta(
      [
        change('gone', side(big), null),
        change('new', null, { bytes: null, size: 9, mode: '100644', oid: 'a'.repeat(40) }),
      ],
      { renameDetector },
    );
    expect(calls).toBe(2);
  });

  it("B8: a detector's pairs are used as given (similarity in the header, counts of the edit)", async () => {
    const out = await delta([change('c', side('1\n2\n3\n'), null), change('d', null, side('1\n2\n3\n4\n'))], {
      renameDetector: async () => ({
        pairs: [
          { from: 'c', to: 'd', similarity: 75 },
          { from: 'nope', to: 'd', similarity: 90 },
        ],
      }),
    });
    expect(out.files[0]).toMatchObject({
      change_type: 'renamed',
      old_path: 'c',
      path: 'd',
      additions: 1,
      deletions: 0,
    });
    expect(out.files[0]!.patch).toBe(
      'diff --git a/c b/d\nsimilarity index 75%\nrename from c\nrename to d\nindex 01e79c3..94ebaf9 100644\n--- a/c\n+++ b/d\n@@ -1,3 +1,4 @@\n 1\n 2\n 3\n+4\n',
    );
  });
});

describe('paths (B13)', () => {
  it('B13: rows are in byte order of the path (a rename by its new path); odd names are quoted as git quotes them', async () => {
    const bad = keyFromBytes(Buffer.from([0x78, 0xff, 0x2e, 0x74]));
    const out = await delta([
      change('z"q', null, side('1\n')),
      change('tab\there', null, side('1\n')),
      change('Ä', null, side('1\n')),
      { path: bad, before: null, after: side('1\n') },
      change('b', side('moved\n'), null),
      change('-dash', null, side('moved\n')),
    ]);
    expect(out.files.map((f) => f.path)).toEqual(['-dash', 'tab\there', 'x\ufffd.t', 'z"q', 'Ä']);
    expect(out.files[0]).toMatchObject({ change_type: 'renamed', old_path: 'b' });
    expect(out.files[1]!.patch).toMatch(/^diff --git "a\/tab\\there" "b\/tab\\there"\n/);
    expect(out.files[2]).toMatchObject({ path_base64: Buffer.from([0x78, 0xff, 0x2e, 0x74]).toString('base64') });
    expect(out.files[2]!.patch).toMatch(/^diff --git "a\/x\\377.t" "b\/x\\377.t"\n/);
    expect(out.files[3]!.patch).toMatch(/^diff --git "a\/z\\"q" "b\/z\\"q"\n/);
    expect(out.files[4]!.patch).toMatch(/^diff --git a\/Ä b\/Ä\n/);
    expect(out.files[4]!.path_base64).toBeUndefined();
  });
});

describe('bounds (B17)', () => {
  const many = (n: number) =>
    Array.from({ length: n }, (_, i) => change(`f${String(i).padStart(2, '0')}`, null, side(`line ${i}\n`)));

  it('B17: at most maxChangedFiles rows, the first in path order; counts stay exact over every change', async () => {
    const changes = [...many(5), change('zz-bin', null, side(Buffer.from([0]))), change('zz-del', side('x\n'), null)];
    const out = await computeDelta({ changes: changes.reverse(), limits: { ...LIMITS, maxChangedFiles: 3 } });
    expect(out.files.map((f) => f.path)).toEqual(['f00', 'f01', 'f02']);
    expect(out).toMatchObject({
      changed_count: 7,
      added_count: 6,
      deleted_count: 1,
      binary_count: 1,
      omitted_count: 4,
      truncated_reasons: ['rows'],
    });
  });

  it('B17: a patch over the per-file cap is cut on a line boundary, counts stay whole', async () => {
    const after = Array.from({ length: 100 }, (_, i) => `line ${i}\n`).join('');
    const out = await computeDelta({
      changes: [change('long', null, side(after))],
      limits: { ...LIMITS, maxFilePatchBytes: 200 },
    });
    const f = out.files[0]!;
    expect(f).toMatchObject({ truncated: true, additions: 100, omitted_reason: null });
    expect(f.patch_bytes).toBeLessThanOrEqual(200);
    expect(f.patch_bytes).toBeGreaterThan(150);
    expect(f.patch!.endsWith('\n')).toBe(true);
    expect(f.patch!.split('\n').slice(-2, -1)[0]).toMatch(/^\+line \d+$/);
    expect(out.truncated_reasons).toEqual(['file_patch']);
  });

  it('B17: a line longer than what is left of the cap is left out whole: the cut falls at a line boundary', () => {
    const buf = Buffer.from('head\n+' + 'é'.repeat(100) + '\n');
    const cut = cutToBytes(buf, 50);
    // Never part of the line with a newline added: that would show a line the file does not have.
    expect(cut.toString('utf8')).toBe('head\n');
  });

  it('B17: a patch whose one long line passes the cap keeps its headers and says it is cut', async () => {
    const line = 'x'.repeat(500) + '\n';
    const out = await computeDelta({
      changes: [change('min.js', side('a\n'), side(line))],
      limits: { ...LIMITS, maxFilePatchBytes: 300 },
    });
    const f = out.files[0]!;
    expect(f).toMatchObject({ truncated: true, additions: 1, deletions: 1 });
    expect(f.patch!.startsWith('diff --git a/min.js b/min.js\n')).toBe(true);
    expect(f.patch!.endsWith('\n@@ -1 +1 @@\n-a\n')).toBe(true);
    expect(f.patch!.split('\n').every((l) => l.length < 500)).toBe(true);
  });

  it('B17: the per-change budget goes to the smallest patches first, so a large file first in path order cannot starve the rest', async () => {
    const lock = Array.from({ length: 40 }, (_, i) => `"dep-${i}": "1.0.${i}",\n`).join('');
    const changes = [
      change('a-package-lock.json', null, side(lock)),
      change('b-login.ts', null, side('x\n')),
      change('c-logout.ts', null, side('y\n')),
    ];
    const sizes = (await delta(changes)).files.map((f) => f.patch_bytes);
    // Room for the lock file alone (spent in path order it would take it all) or for both small files.
    const budget = Math.max(sizes[0]!, sizes[1]! + sizes[2]!);
    expect(sizes[0]!).toBeGreaterThan(sizes[1]! + sizes[2]!);
    const out = await computeDelta({ changes, limits: { ...LIMITS, maxRunPatchBytes: budget } });
    expect(out.files.map((f) => [f.path, f.patch === null, f.omitted_reason])).toEqual([
      ['a-package-lock.json', true, 'budget'],
      ['b-login.ts', false, null],
      ['c-logout.ts', false, null],
    ]);
    expect(out.truncated_reasons).toEqual(['run_budget']);
  });

  it('B17: a patch that does not fit the per-change budget whole keeps its row and counts', async () => {
    const big = Array.from({ length: 20 }, (_, i) => `line ${i}\n`).join('');
    const changes = [
      change('a-small', null, side('x\n')),
      change('b-big', null, side(big)),
      change('c-small', null, side('y\n')),
    ];
    const sizes = (await delta(changes)).files.map((f) => f.patch_bytes);
    const out = await computeDelta({ changes, limits: { ...LIMITS, maxRunPatchBytes: sizes[0]! + sizes[2]! + 10 } });
    expect(out.files.map((f) => [f.path, f.patch === null, f.omitted_reason, f.additions])).toEqual([
      ['a-small', false, null, 1],
      ['b-big', true, 'budget', 20],
      ['c-small', false, null, 1],
    ]);
    expect(out.total_patch_bytes).toBe(sizes[0]! + sizes[2]!);
    expect(out.truncated_reasons).toEqual(['run_budget']);
  });

  it('B17: every bound at once reports every reason', async () => {
    // Two long files cut to the same size by the per-file cap: the budget keeps the first in path
    // order (ties go by path) and has no room left for the second.
    const changes = many(5);
    changes.push(change('a-long', null, side('x\n'.repeat(200))));
    changes.push(change('b-long', null, side('y\n'.repeat(200))));
    const limits = { ...LIMITS, maxChangedFiles: 4, maxFilePatchBytes: 120 };
    const whole = await computeDelta({ changes, limits });
    const out = await computeDelta({
      changes,
      limits: { ...limits, maxRunPatchBytes: whole.total_patch_bytes - 1 },
    });
    expect(out.truncated_reasons).toEqual(['rows', 'file_patch', 'run_budget']);
    expect(out.files[0]).toMatchObject({ path: 'a-long', truncated: true, additions: 200 });
    expect(out.files.filter((f) => f.omitted_reason === 'budget').length).toBeGreaterThan(0);
    expect(out).toMatchObject({ changed_count: 7, omitted_count: 3 });
  });

  it('text that is not UTF-8 is cut before the first such line and flagged truncated (never stored corrupt)', async () => {
    const latin1 = Buffer.from('ok line\ncaf\xe9\nmore\n', 'latin1');
    const out = await delta([change('latin1.txt', null, side(latin1))]);
    expect(out.files[0]).toMatchObject({ truncated: true, additions: 3, binary: false });
    expect(out.files[0]!.patch!.endsWith('@@ -0,0 +1,3 @@\n+ok line\n')).toBe(true);
    expect(out.truncated_reasons).toEqual(['file_patch']);
  });

  it("a function name cut inside a character by git's 80-byte limit is repaired, not the hunk", () => {
    const header = Buffer.concat([
      Buffer.from('@@ -1 +1 @@ f'),
      Buffer.from('é').subarray(0, 1),
      Buffer.from('\n-a\n+b\n'),
    ]);
    const res = toPatchText(header, 1000);
    expect(res).toMatchObject({ text: '@@ -1 +1 @@ f\n-a\n+b\n', truncated: false });
  });
});

describe('the whole-run patch', () => {
  it('concatenates stanzas in path order; binary, truncated and omitted files are comment lines only', async () => {
    const out = await computeDelta({
      changes: [
        change('z.txt', null, side('z\n')),
        change('a.bin', null, side(Buffer.from([0, 1]))),
        change('m.txt', null, side('m\n'.repeat(100))),
        change('tab\tname', { bytes: null, unavailable: 'too_large', size: 1, mode: '100644' }, side('x\n')),
      ],
      limits: { ...LIMITS, maxFilePatchBytes: 200 },
    });
    const patch = wholeRunPatch([...out.files].reverse());
    expect(patch).toBe(
      '# rundiff: a.bin binary\n' +
        '# rundiff: m.txt truncated\n' +
        '# rundiff: "tab\\tname" too_large\n' +
        out.files.find((f) => f.path === 'z.txt')!.patch,
    );
  });

  it('a change of binary files only is comment lines alone; names that are not UTF-8 sort and quote by their bytes', () => {
    const raw = Buffer.from([0x61, 0xff]);
    const patch = wholeRunPatch([
      { path: 'b', change_type: 'added', binary: true, truncated: false, omitted_reason: 'binary', patch: null },
      {
        path: 'a\ufffd',
        path_base64: raw.toString('base64'),
        change_type: 'added',
        binary: true,
        truncated: false,
        omitted_reason: 'binary',
        patch: null,
      },
    ]);
    expect(patch).toBe('# rundiff: "a\\377" binary\n# rundiff: b binary\n');
  });
});

describe('unreadable sides', () => {
  const unreadable = (size: number, extra: Partial<FileSide> = {}): FileSide => ({
    bytes: null,
    unavailable: 'unreadable',
    size,
    mode: '100644',
    ...extra,
  });

  it('a side that could not be read makes a row without a patch, `unreadable` even when an attribute says binary, and only a comment line in the whole-run patch', async () => {
    const out = await delta([
      change('a.txt', side('one\n'), unreadable(4)),
      change('b.bin', side('x'), unreadable(9, { binaryAttr: true })),
      change('c.txt', null, unreadable(3)),
      change('d.txt', unreadable(5), side('new\n')),
    ]);
    expect(out.files.map((f) => `${f.change_type} ${f.path} ${f.omitted_reason} ${f.patch}`)).toEqual([
      'modified a.txt unreadable null',
      'modified b.bin unreadable null',
      'added c.txt unreadable null',
      'modified d.txt unreadable null',
    ]);
    expect(out.files[0]).toMatchObject({ size_before: 4, size_after: 4, additions: 0, deletions: 0 });
    expect(out.deleted_count).toBe(0);
    expect(wholeRunPatch(out.files)).toBe(
      '# rundiff: a.txt unreadable\n# rundiff: b.bin unreadable\n# rundiff: c.txt unreadable\n# rundiff: d.txt unreadable\n',
    );
  });

  it('two unreadable sides are never taken for equal content, and never pair as a rename', async () => {
    const out = await delta([
      change('same.txt', unreadable(5), unreadable(5)),
      change('old.txt', unreadable(5), null),
      change('new.txt', null, unreadable(5)),
    ]);
    expect(out.files.map((f) => `${f.change_type} ${f.path}`)).toEqual([
      'added new.txt',
      'deleted old.txt',
      'modified same.txt',
    ]);
    expect(out.renamed_count).toBe(0);
  });
});

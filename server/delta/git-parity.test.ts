import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createGitDiffEngine } from '../git/index.ts';
import { createTempDir, createTempRepo, type TempRepo } from '../test-support/temp-repo.ts';
import { keyFromBytes, keyToBytes, type PathKey } from '../paths/index.ts';
import { computeDelta, wholeRunPatch } from './index.ts';
import type { CandidateChange, DeltaInput, DeltaOutput, FileSide } from './types.ts';

/**
 * The delta against the real git: seeded generated before/after trees are committed as A and B,
 * and the delta of the same bytes must give git's own answers: `git diff -M --numstat A B` counts
 * and pairs, git's stanza text, and a whole-run patch that `git apply` turns from A into B.
 */

const LIMITS: DeltaInput['limits'] = {
  maxChangedFiles: 10_000,
  maxFilePatchBytes: 1 << 20,
  maxRunPatchBytes: 1 << 26,
  diffTimeoutMs: 100,
};

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function engineOptions() {
  const tmpDir = createTempDir('rundiff-parity-engine-');
  cleanups.push(() => fs.rmSync(tmpDir, { recursive: true, force: true }));
  return createGitDiffEngine({ tmpDir });
}

/** mulberry32: a small seeded PRNG, so every generated case is reproducible from its seed. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  return { next, int, pick };
}
type Rng = ReturnType<typeof rng>;

// Lines that repeat (blank, braces) are where git's diff stops being minimal; keep many of them.
const VOCAB = [
  '',
  '',
  '}',
  '{',
  '  return x;',
  'int a = 1;',
  '// comment',
  'héllo wörld ✓ 文字',
  'x'.repeat(300),
  'tab\there',
  '$dollar',
  '_under',
];

interface FileSpec {
  bytes: Buffer;
  mode: string;
}
type Tree = Map<PathKey, FileSpec>;

function genLine(r: Rng): string {
  return r.next() < 0.6 ? r.pick(VOCAB) : `line ${r.int(500)}`;
}

/** Lines with their terminators (LF, CRLF, mixed per file), maybe no final newline. */
function genText(r: Rng, n: number): string[] {
  const style = r.pick(['lf', 'lf', 'crlf', 'mixed'] as const);
  const eol = () => (style === 'lf' ? '\n' : style === 'crlf' ? '\r\n' : r.next() < 0.5 ? '\n' : '\r\n');
  const lines = Array.from({ length: n }, () => genLine(r) + eol());
  if (lines.length && r.next() < 0.2) lines[lines.length - 1] = lines[lines.length - 1]!.replace(/\r?\n$/, '');
  return lines;
}

function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** Random edits: replace, insert, delete runs, change endings, toggle the final newline, or rewrite. */
function edit(r: Rng, text: string): string {
  let lines = splitLines(text);
  if (r.next() < 0.1) return genText(r, r.int(40)).join('');
  const ops = 1 + r.int(4);
  for (let k = 0; k < ops; k++) {
    const at = r.int(lines.length + 1);
    const op = r.int(5);
    if (op === 0) lines.splice(at, r.int(4), ...genText(r, 1 + r.int(6)));
    else if (op === 1) lines.splice(at, 0, ...genText(r, 1 + r.int(5)));
    else if (op === 2) lines.splice(at, 1 + r.int(5));
    else if (op === 3 && lines[at])
      lines[at] = lines[at].endsWith('\r\n') ? lines[at].replace(/\r\n$/, '\n') : lines[at].replace(/\n$/, '\r\n');
    else if (op === 4 && lines.length) {
      const last = lines.length - 1;
      lines[last] = lines[last]!.endsWith('\n') ? lines[last]!.replace(/\r?\n$/, '') : lines[last] + '\n';
    }
  }
  lines = lines.filter((l) => l !== '');
  return lines.join('');
}

const NAMES = [
  'src/main.c',
  'dir with space/notes.txt',
  'quote"s.txt',
  'ünï/文件.md',
  '-dash.txt',
  'new\nline.txt',
  'tab\tname.txt',
  'back\\slash',
  'deep/a/b/c.js',
  'README',
];

/** A generated A tree and a B tree derived from it: modifications, deletes, adds, renames, mode and type changes. */
function genCase(seed: number, opts: { binaries?: boolean } = {}): { a: Tree; b: Tree } {
  const r = rng(seed);
  const a: Tree = new Map();
  const fileName = (i: number) => {
    const base = NAMES[i % NAMES.length]!;
    const dot = base.lastIndexOf('.');
    const name = i < NAMES.length ? base : dot > 0 ? `${base.slice(0, dot)}-${i}${base.slice(dot)}` : `${base}-${i}`;
    return keyFromBytes(Buffer.from(name));
  };
  for (let i = 0; i < 26; i++) {
    const kind = r.next();
    const mode = kind < 0.08 ? '120000' : kind < 0.18 ? '100755' : '100644';
    const bytes = mode === '120000' ? Buffer.from(`target-${r.int(5)}`) : Buffer.from(genText(r, r.int(40)).join(''));
    a.set(fileName(i), { bytes, mode });
  }
  if (opts.binaries) a.set(keyFromBytes(Buffer.from('blob.bin')), { bytes: Buffer.from([1, 0, 2, 3]), mode: '100644' });
  const b: Tree = new Map();
  let added = 100;
  for (const [p, f] of a) {
    const roll = r.next();
    if (roll < 0.08) continue; // deleted
    if (roll < 0.2 && f.mode !== '120000') {
      // renamed (moved to a new folder, same basename or not), maybe edited, maybe chmod
      const text = f.bytes.toString('utf8');
      const moved = keyFromBytes(
        Buffer.from(
          `moved/${r.next() < 0.5 ? 'x' : ''}${path.posix.basename(Buffer.from(keyToBytes(p)).toString('utf8'))}`,
        ),
      );
      b.set(moved, {
        bytes: Buffer.from(r.next() < 0.5 ? text : edit(r, text)),
        mode: r.next() < 0.2 ? '100755' : f.mode,
      });
      continue;
    }
    if (roll < 0.25) {
      b.set(p, { bytes: f.bytes, mode: f.mode === '100644' ? '100755' : f.mode === '100755' ? '100644' : f.mode });
      continue;
    }
    if (roll < 0.28) {
      // type change: a file becomes a symlink or the other way round
      b.set(
        p,
        f.mode === '120000'
          ? { bytes: Buffer.from('now a file\n'), mode: '100644' }
          : { bytes: Buffer.from('some-target'), mode: '120000' },
      );
      continue;
    }
    if (roll < 0.35) {
      b.set(p, f);
      continue;
    }
    b.set(
      p,
      f.mode === '120000'
        ? { bytes: Buffer.from(`target-${r.int(50)}`), mode: f.mode }
        : { bytes: Buffer.from(edit(r, f.bytes.toString('utf8'))), mode: f.mode },
    );
  }
  for (let k = 0; k < 4; k++)
    b.set(fileName(added++), { bytes: Buffer.from(genText(r, r.int(20)).join('')), mode: '100644' });
  b.set(keyFromBytes(Buffer.from('new-empty')), { bytes: Buffer.alloc(0), mode: '100644' });
  if (opts.binaries) b.set(keyFromBytes(Buffer.from('blob.bin')), { bytes: Buffer.from([1, 0, 2, 4]), mode: '100644' });
  return { a, b };
}

function writeTree(r: TempRepo, tree: Tree, previous: Tree | null): void {
  const abs = (p: PathKey) => Buffer.concat([Buffer.from(r.dir + '/'), keyToBytes(p)]);
  for (const p of previous?.keys() ?? []) if (!tree.has(p)) fs.rmSync(abs(p), { force: true });
  for (const [p, f] of tree) {
    const file = abs(p);
    fs.mkdirSync(file.subarray(0, file.lastIndexOf(0x2f)), { recursive: true });
    fs.rmSync(file, { force: true });
    if (f.mode === '120000') fs.symlinkSync(f.bytes, file);
    else {
      fs.writeFileSync(file, f.bytes);
      fs.chmodSync(file, f.mode === '100755' ? 0o755 : 0o644);
    }
  }
}

function changesOf(a: Tree, b: Tree): CandidateChange[] {
  const side = (f: FileSpec | undefined): FileSide | null =>
    f ? { bytes: f.bytes, size: f.bytes.length, mode: f.mode } : null;
  const out: CandidateChange[] = [];
  for (const p of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(p);
    const y = b.get(p);
    if (x && y && x.mode === y.mode && x.bytes.equals(y.bytes)) continue;
    out.push({ path: p, before: side(x), after: side(y) });
  }
  return out;
}

function gitBuf(r: TempRepo, args: string[]): Buffer {
  return execFileSync('git', ['-c', 'core.quotePath=false', ...args], {
    cwd: r.dir,
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C' },
    maxBuffer: 1 << 28,
  });
}

/** `git diff -M --numstat -z`: [old path or null, new path, additions, deletions] (binary: -1). */
function gitNumstat(r: TempRepo, a: string, b: string): Array<[PathKey | null, PathKey, number, number]> {
  const fields = gitBuf(r, ['diff', '-M', '--numstat', '-z', a, b]).toString('latin1').split('\0');
  const out: Array<[PathKey | null, PathKey, number, number]> = [];
  for (let i = 0; i < fields.length; i++) {
    const rec = fields[i]!;
    if (!rec) continue;
    const [, add, del, name] = /^([^\t]*)\t([^\t]*)\t([\s\S]*)$/.exec(rec)!;
    const n = (s: string | undefined) => (s === '-' ? -1 : Number(s));
    if (name === '') {
      out.push([fields[i + 1]!, fields[i + 2]!, n(add), n(del)]);
      i += 2;
    } else out.push([null, name!, n(add), n(del)]);
  }
  return out.sort((x, y) => (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0));
}

/** git's patch text split into stanzas, in git's order. */
function gitStanzas(r: TempRepo, a: string, b: string): string[] {
  const text = gitBuf(r, ['diff', '-M', a, b]).toString('utf8');
  const starts = [...text.matchAll(/^diff --git /gm)].map((m) => m.index);
  return starts.map((s, i) => text.slice(s, starts[i + 1] ?? text.length));
}

/** Checks out A, applies the whole-run patch, and returns the paths that still differ from B. */
function applyAndCompare(r: TempRepo, a: string, b: string, patch: string): string[] {
  gitBuf(r, ['checkout', '-q', '--detach', a]);
  const dir = createTempDir('rundiff-patch-');
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'change.patch');
  fs.writeFileSync(file, patch);
  gitBuf(r, ['apply', '--allow-empty', '--whitespace=nowarn', file]);
  gitBuf(r, ['add', '-A']);
  return gitBuf(r, ['diff', '--cached', '--no-renames', '--name-only', '-z', b])
    .toString('latin1')
    .split('\0')
    .filter(Boolean);
}

async function runCase(a: Tree, b: Tree, extra: Partial<DeltaInput> = {}) {
  const r = createTempRepo({ git: true, commit: false });
  cleanups.push(() => r.cleanup());
  writeTree(r, a, null);
  const ca = r.commit('A');
  writeTree(r, b, a);
  const cb = r.commit('B');
  const out = await computeDelta({ changes: changesOf(a, b), limits: LIMITS, ...extra });
  return { r, ca, cb, out };
}

function expectCountsLikeGit(out: DeltaOutput, expected: Array<[PathKey | null, PathKey, number, number]>) {
  const ours = out.files.map((f) => [
    f.old_path_key,
    f.path_key,
    f.binary ? -1 : f.additions,
    f.binary ? -1 : f.deletions,
  ]);
  expect(ours).toEqual(expected);
  expect(out.changed_count).toBe(expected.length);
}

describe('parity with git (B8, B9, B11, B12, B13)', () => {
  it.each([1, 2, 3, 4])(
    'B9: seeded case %i: counts, pairs, stanzas equal git diff -M; git apply turns A into B',
    async (seed) => {
      const { a, b } = genCase(seed, { binaries: seed === 1 });
      const engine = engineOptions();
      const { r, ca, cb, out } = await runCase(a, b, engine);
      const numstat = gitNumstat(r, ca, cb);
      expectCountsLikeGit(out, numstat);
      expect(out.truncated_reasons).toEqual([]);
      const left = applyAndCompare(r, ca, cb, wholeRunPatch(out.files));
      const withheld = out.files
        .filter((f) => f.binary || f.truncated || f.omitted_reason)
        .flatMap((f) => [f.path_key, f.old_path_key]);
      expect(left.filter((p) => !withheld.includes(p))).toEqual([]);

      // With exactHunks every stanza is git's own text, byte for byte; by default only the hunk
      // alignment of files diffed in process may differ, never a header or a count.
      const exact = await computeDelta({ changes: changesOf(a, b), limits: LIMITS, ...engine, exactHunks: true });
      expectCountsLikeGit(exact, numstat);
      const stanzas = gitStanzas(r, ca, cb);
      const header = (st: string) => st.split(/^@@/m)[0];
      let k = 0;
      exact.files.forEach((f, i) => {
        const n = f.patch?.match(/^diff --git /gm)?.length ?? 1;
        const theirs = stanzas.slice(k, k + n).join('');
        k += n;
        if (f.binary) {
          expect(theirs).toMatch(/^Binary files /m);
          return;
        }
        expect(f.truncated).toBe(false);
        expect(f.patch).toBe(theirs);
        expect(header(out.files[i]!.patch!)).toBe(header(theirs));
      });
      expect(k).toBe(stanzas.length);
    },
  );

  it('B9: wherever the delta diffs in process, its counts equal git (fuzzed: rewritten runs, repeated blank lines)', async () => {
    const r = rng(42);
    const fresh = () => (r.next() < 0.25 ? '' : r.next() < 0.2 ? '}' : `new ${r.int(1e6)}`);
    const old = () => (r.next() < 0.3 ? '' : r.next() < 0.2 ? '}' : `line ${r.int(1000)}`);
    const changes: CandidateChange[] = [];
    for (let t = 0; t < 300; t++) {
      const before = Array.from({ length: r.int(r.next() < 0.2 ? 1500 : 120) }, old);
      const after = before.slice();
      for (let k = 1 + r.int(5); k > 0; k--) {
        const gen = r.next() < 0.6 ? fresh : old;
        const at = r.int(after.length + 1);
        if (r.next() < 0.6) after.splice(at, r.int(12), ...Array.from({ length: r.int(15) }, gen));
        else after.splice(at, r.int(8));
      }
      const bytes = (lines: string[]) => Buffer.from(lines.join('\n') + '\n');
      changes.push({
        path: keyFromBytes(Buffer.from(`f${String(t).padStart(3, '0')}`)),
        before: { bytes: bytes(before), size: 0, mode: '100644' },
        after: { bytes: bytes(after), size: 0, mode: '100644' },
      });
    }
    const engine = engineOptions();
    const limits = { ...LIMITS, diffTimeoutMs: 1_000 };
    const ours = await computeDelta({ changes, limits, ...engine });
    const git = await computeDelta({ changes, limits, ...engine, exactHunks: true });
    expect(ours.files.map((f) => [f.path, f.additions, f.deletions])).toEqual(
      git.files.map((f) => [f.path, f.additions, f.deletions]),
    );
    expect(git.files.every((f) => f.omitted_reason === null || f.omitted_reason === undefined)).toBe(true);
  });

  it('B9: in-process patches of one inserted or removed block and of small edits count like git and apply with git apply', async () => {
    const r = rng(5);
    const a: Tree = new Map();
    const b: Tree = new Map();
    for (let i = 0; i < 60; i++) {
      const lines = genText(r, 5 + r.int(80));
      const after = lines.slice();
      const at = r.int(after.length + 1);
      const kind = i % 3;
      // Repeated lines (blank, braces) around the block are where a placement could slide.
      if (kind === 0) after.splice(at, 0, ...genText(r, 1 + r.int(6)));
      else if (kind === 1) after.splice(at, 1 + r.int(5));
      else after.splice(at, 1 + r.int(3), ...genText(r, 1 + r.int(3)));
      const p = keyFromBytes(Buffer.from(`f/${String(i).padStart(2, '0')}.txt`));
      a.set(p, { bytes: Buffer.from(lines.join('')), mode: '100644' });
      b.set(p, { bytes: Buffer.from(after.join('')), mode: '100644' });
    }
    const { r: repo, ca, cb, out } = await runCase(a, b, engineOptions());
    expectCountsLikeGit(out, gitNumstat(repo, ca, cb));
    expect(applyAndCompare(repo, ca, cb, wholeRunPatch(out.files))).toEqual([]);
  });

  it('B8: renames: exact, edited above and below 50%, tied identical sources and empty files pair as git diff -M', async () => {
    const lines = (tag: string, n = 20) => Array.from({ length: n }, (_, i) => `${tag} ${i}\n`).join('');
    const t = (s: string, mode = '100644'): FileSpec => ({ bytes: Buffer.from(s), mode });
    const k = (s: string) => keyFromBytes(Buffer.from(s));
    const a: Tree = new Map([
      [k('one/dup.txt'), t('same\n')],
      [k('two/dup.txt'), t('same\n')],
      [k('three/other.txt'), t('same\n')],
      [k('edit60.txt'), t(lines('e'))],
      [k('edit40.txt'), t(lines('f'))],
      [k('empty-a'), t('')],
      [k('empty-b'), t('')],
      [k('run.sh'), t(lines('s'))],
      [k('link'), t('target', '120000')],
    ]);
    const b: Tree = new Map([
      [k('moved/dup.txt'), t('same\n')],
      [k('zz/renamed.txt'), t('same\n')],
      // similarity is counted in bytes: same-length replacements keep 60% of them
      [k('edit60-new.txt'), t(lines('e').replace(/^e ([0-7])$/gm, 'E $1'))],
      [k('edit40-new.txt'), t(lines('f').replace(/^f 1?[0-9]$/gm, (m) => (Number(m.slice(2)) < 13 ? 'changed' : m)))],
      [k('empty-c'), t('')],
      [k('bin/run.sh'), t(lines('s'), '100755')],
      [k('link2'), t('target', '120000')],
      [k('file-not-link'), t('target')],
    ]);
    const { r, ca, cb, out } = await runCase(a, b, { ...engineOptions(), exactHunks: true });
    const expected = gitNumstat(r, ca, cb);
    expectCountsLikeGit(out, expected);
    // The cases really cover what they claim: ties, partial renames, an unpaired edit below 50%.
    expect(expected.filter(([old]) => old !== null).length).toBeGreaterThanOrEqual(6);
    expect(out.files.find((f) => f.path === 'edit40-new.txt')?.change_type).toBe('added');
    expect(out.files.find((f) => f.path === 'edit60-new.txt')).toMatchObject({
      change_type: 'renamed',
      old_path: 'edit60.txt',
    });
    const stanzas = gitStanzas(r, ca, cb);
    expect(out.files.map((f) => f.patch)).toEqual(stanzas);
    expect(applyAndCompare(r, ca, cb, wholeRunPatch(out.files))).toEqual([]);
  });

  it('B8: a binary renamed (and one re-moded) without a byte changed is a 100% rename with no content change: binary as git --numstat says, with the header-only patch git diff -M prints', async () => {
    const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(76, 0)]);
    const k = (s: string) => keyFromBytes(Buffer.from(s));
    const a: Tree = new Map([
      [k('pic.gif'), { bytes: gif, mode: '100644' }],
      [k('tool.bin'), { bytes: Buffer.from([0, 1, 2, 3]), mode: '100644' }],
    ]);
    const b: Tree = new Map([
      [k('moved.gif'), { bytes: gif, mode: '100644' }],
      [k('tool.bin'), { bytes: Buffer.from([0, 1, 2, 3]), mode: '100755' }],
    ]);
    const { r, ca, cb, out } = await runCase(a, b, { ...engineOptions(), exactHunks: true });
    expect(
      out.files.map((f) => [f.change_type, f.old_path, f.path, f.binary, f.omitted_reason, f.additions, f.deletions]),
    ).toEqual([
      ['renamed', 'pic.gif', 'moved.gif', true, null, 0, 0],
      ['modified', null, 'tool.bin', true, null, 0, 0],
    ]);
    // git's own stanzas: headers only (similarity index 100%, rename from/to; old/new mode), no "Binary files" line.
    const stanzas = gitStanzas(r, ca, cb);
    expect(stanzas.join('')).not.toMatch(/^Binary files /m);
    expect(out.files.map((f) => f.patch)).toEqual(stanzas);
    // git's --numstat still counts them binary ('-'): so do the rows.
    expect(out.binary_count).toBe(2);
    expect(applyAndCompare(r, ca, cb, wholeRunPatch(out.files))).toEqual([]);
  });

  it('B8: at the size limit (the larger exactly twice the smaller) and just past it, pairs match git diff -M', async () => {
    const body = Array.from({ length: 20 }, (_, i) => `line ${String(i).padStart(2, '0')}\n`).join('');
    const t = (s: string): FileSpec => ({ bytes: Buffer.from(s), mode: '100644' });
    const k = (s: string) => keyFromBytes(Buffer.from(s));
    // Each new file holds its old one whole: similarity = old size / new size.
    const a: Tree = new Map([
      [k('twice/old.txt'), t(body)],
      [k('past/old.txt'), t(body)],
    ]);
    const b: Tree = new Map([
      [k('twice/new.txt'), t(body + body.toUpperCase())],
      [k('past/new.txt'), t(body + body.toUpperCase() + 'X\n')],
    ]);
    const { r, ca, cb, out } = await runCase(a, b, engineOptions());
    const expected = gitNumstat(r, ca, cb);
    expectCountsLikeGit(out, expected);
    expect(out.files.find((f) => f.path === 'twice/new.txt')).toMatchObject({ change_type: 'renamed' });
    expect(out.files.find((f) => f.path === 'past/new.txt')).toMatchObject({ change_type: 'added' });
    // Past the limit alone, git is not asked at all, and the answer is still git's.
    const past = await runCase(
      new Map([...a].filter(([p]) => p.startsWith('past/'))),
      new Map([...b].filter(([p]) => p.startsWith('past/'))),
      engineOptions(),
    );
    expectCountsLikeGit(past.out, gitNumstat(past.r, past.ca, past.cb));
    expect(past.out.renamed_count).toBe(0);
  });

  it('B8: without git, identical contents still pair exactly as git pairs them (ties, file names, modes)', async () => {
    const t = (s: string, mode = '100644'): FileSpec => ({ bytes: Buffer.from(s), mode });
    const k = (s: string) => keyFromBytes(Buffer.from(s));
    const a: Tree = new Map([
      [k('a/x.txt'), t('same\n')],
      [k('b/y.txt'), t('same\n')],
      [k('c/y.txt'), t('same\n')],
      [k('d/z.txt'), t('same\n', '100755')],
      [k('e1'), t('')],
      [k('e2'), t('')],
      [k('l1'), t('tgt', '120000')],
      [k('l2'), t('tgt', '120000')],
    ]);
    const b: Tree = new Map([
      [k('m/y.txt'), t('same\n')],
      [k('n/q.txt'), t('same\n')],
      [k('o/z.txt'), t('same\n')],
      [k('p/y.txt'), t('same\n')],
      [k('zz/e2'), t('')],
      [k('l3'), t('tgt')],
      [k('l4'), t('tgt', '120000')],
    ]);
    const { r, ca, cb, out } = await runCase(a, b);
    const expected = gitNumstat(r, ca, cb);
    expectCountsLikeGit(out, expected);
    expect(expected.filter(([old]) => old !== null).length).toBe(6);
  });

  it('B13: names that are not UTF-8 round-trip through the whole-run patch', async () => {
    const bad = keyFromBytes(Buffer.from([0x62, 0x61, 0x64, 0xff, 0x2e, 0x74, 0x78, 0x74]));
    const a: Tree = new Map([[bad, { bytes: Buffer.from('a\nb\n'), mode: '100644' }]]);
    const b: Tree = new Map([
      [bad, { bytes: Buffer.from('a\nc\n'), mode: '100755' }],
      [keyFromBytes(Buffer.from([0xfe, 0x6e])), { bytes: Buffer.from('new\n'), mode: '100644' }],
    ]);
    const { r, ca, cb, out } = await runCase(a, b, engineOptions());
    expectCountsLikeGit(out, gitNumstat(r, ca, cb));
    expect(out.files.every((f) => f.path_base64 !== undefined)).toBe(true);
    expect(applyAndCompare(r, ca, cb, wholeRunPatch(out.files))).toEqual([]);
  });

  it('B9: without any git engine the jsdiff patches still apply (counts may then differ from git on large edits)', async () => {
    const { a, b } = genCase(7);
    const { r, ca, cb, out } = await runCase(a, b);
    const left = applyAndCompare(r, ca, cb, wholeRunPatch(out.files));
    const withheld = out.files
      .filter((f) => f.binary || f.truncated || f.omitted_reason)
      .flatMap((f) => [f.path_key, f.old_path_key]);
    expect(left.filter((p) => !withheld.includes(p))).toEqual([]);
  });

  it("B9: counts follow git even where git's diff is not minimal (a minimal diff says +3 -7)", async () => {
    const before = 'line 10\n\nline 12\nline 13\nline 14\nline 15\nline 16\nline 17\n';
    const a: Tree = new Map([[keyFromBytes(Buffer.from('f')), { bytes: Buffer.from(before), mode: '100644' }]]);
    const b: Tree = new Map([[keyFromBytes(Buffer.from('f')), { bytes: Buffer.from('\n\n\n\n'), mode: '100644' }]]);
    const { r, ca, cb, out } = await runCase(a, b, engineOptions());
    expectCountsLikeGit(out, gitNumstat(r, ca, cb));
    expect(out.files[0]).toMatchObject({ additions: 4, deletions: 8 });
  });

  // Its time against `git diff --no-index` is measured by `npm run bench -- diff`, not asserted here.
  it('B9: a 500 KiB all-lines-changed file gets exact counts with the per-file diff budget', async () => {
    const n = (500 * 1024) / 20;
    const before = Buffer.from(
      Array.from({ length: n }, (_, i) => `before line ${String(i).padStart(6, '0')}\n`).join(''),
    );
    const after = Buffer.from(
      Array.from({ length: n }, (_, i) => `after  line ${String(i).padStart(6, '0')}\n`).join(''),
    );
    const out = await computeDelta({
      changes: [
        {
          path: 'big.txt',
          before: { bytes: before, size: before.length, mode: '100644' },
          after: { bytes: after, size: after.length, mode: '100644' },
        },
      ],
      limits: { ...LIMITS, maxFilePatchBytes: 128 * 1024, maxRunPatchBytes: 512 * 1024 },
      ...engineOptions(),
    });
    expect(out.files[0]).toMatchObject({ additions: n, deletions: n, truncated: true, omitted_reason: null });
    expect(out.files[0]!.patch_bytes).toBeLessThanOrEqual(128 * 1024);
    expect(out.truncated_reasons).toEqual(['file_patch']);
  });
});

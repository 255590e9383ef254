import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { wholeRunPatch } from '../delta/index.ts';
import { createTempDir, createTempRepo, type TempRepo } from '../test-support/temp-repo.ts';
import { splitNul } from '../paths/index.ts';
import { resolved, testEngine } from '../test-support/engine-harness.ts';

/**
 * Oracle: a seeded generated history mixing odd names, CRLF, binaries, exact and partial renames,
 * mode flips, deletes, new folders and ignored files. For every consecutive pair A -> B, a
 * checkpoint at A then `git checkout B` must give exactly `git diff -M A B` (paths, types, old
 * paths, binary flags, +/- counts), and the whole-run patch applied to a clean A must give B.
 */

function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rand = mulberry32(20240611);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

const ODD = ['with space', 'quote"d', 'new\nline', 'ünï😀', '-dash', 'a -> b', 'tab\there'];
let nameSeq = 0;
function freshName(): string {
  nameSeq++;
  const folder = pick(['', 'src/', 'src/deep/', `new${nameSeq}/`, `new${nameSeq}/inner/`, 'docs/']);
  const base = rand() < 0.3 ? `${pick(ODD)}-${nameSeq}` : `file${nameSeq}`;
  return `${folder}${base}.txt`;
}
function textLines(n: number, tag: string, eol = '\n'): string {
  return Array.from({ length: n }, (_, i) => `${tag} line ${i} ${Math.floor(rand() * 1000)}${eol}`).join('');
}
function editLines(text: string, count: number): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text.split(eol);
  for (let i = 0; i < count && lines.length > 1; i++) {
    const at = int(0, lines.length - 2);
    const op = pick(['change', 'insert', 'delete']);
    if (op === 'change') lines[at] = `edited ${Math.floor(rand() * 1e6)}`;
    else if (op === 'insert') lines.splice(at, 0, `inserted ${Math.floor(rand() * 1e6)}`);
    else if (lines.length > 3) lines.splice(at, 1);
  }
  return lines.join(eol);
}

let repo: TempRepo;
let applyDir: string;
const commits: string[] = [];
const engine = testEngine({
  maxChangedFiles: 10_000,
  maxFilePatchBytes: 64 * 1024 * 1024,
  maxRunPatchBytes: 256 * 1024 * 1024,
});

function trackedFiles(): string[] {
  return splitNul(Buffer.from(repo.git('ls-files', '-z'), 'latin1'))
    .map((b) => b.toString('latin1'))
    .map((k) => Buffer.from(k, 'latin1').toString('utf8'))
    .filter((p) => p !== '.gitignore' && !p.startsWith('.gitattributes'));
}

beforeAll(() => {
  repo = createTempRepo({
    files: {
      '.gitignore': '*.log\nbuild/\n',
      '.gitattributes': '*.dat binary\n',
      'README.txt': textLines(30, 'readme'),
      'src/main.txt': textLines(40, 'main'),
      'src/crlf.txt': textLines(12, 'crlf', '\r\n'),
      'nonl.txt': 'no newline at end',
      'img.bin': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]),
      'table.dat': 'binary by attribute\n',
    },
  });
  repo.write('forced.log', 'tracked though ignored\n');
  repo.git('add', '-f', 'forced.log');
  commits.push(repo.commit('base'));
  const ops = [
    'modify',
    'modify',
    'add',
    'delete',
    'rename',
    'renameEdit',
    'binary',
    'crlf',
    'mode',
    'forcedLog',
    'nonl',
    'renameFar',
  ] as const;
  for (let c = 0; c < 26; c++) {
    const n = int(2, 5);
    for (let k = 0; k < n; k++) {
      const files = trackedFiles().filter((p) => !p.endsWith('.log'));
      const textFiles = files.filter((p) => p.endsWith('.txt'));
      const op = pick(ops);
      if (op === 'modify' && textFiles.length) {
        const f = pick(textFiles);
        repo.write(f, Buffer.from(editLines(repo.read(f).toString('latin1'), int(1, 4)), 'latin1'));
      } else if (op === 'add') {
        repo.write(freshName(), rand() < 0.1 ? '' : textLines(int(1, 30), `add${c}`));
      } else if (op === 'delete' && files.length > 6) {
        repo.rm(pick(files));
      } else if ((op === 'rename' || op === 'renameEdit' || op === 'renameFar') && textFiles.length > 3) {
        const from = pick(textFiles);
        const body = repo.read(from);
        if (body.length < 200) continue; // small files make similarity ties git and we might break alike, but keep it clear
        const to = freshName();
        repo.rm(from);
        const edited =
          op === 'rename'
            ? body
            : Buffer.from(editLines(body.toString('latin1'), op === 'renameEdit' ? 2 : 40), 'latin1');
        repo.write(to, op === 'renameFar' ? textLines(5, `far${c}`) : edited);
      } else if (op === 'binary') {
        const bytes = Buffer.alloc(int(10, 400));
        for (let i = 0; i < bytes.length; i++) bytes[i] = int(0, 255);
        bytes[3] = 0;
        repo.write(rand() < 0.5 ? 'img.bin' : `assets${c}/blob${c}.bin`, bytes);
        if (rand() < 0.5) repo.write('table.dat', `binary by attribute ${c}\n`);
      } else if (op === 'crlf') {
        const crlf = textFiles.find((p) => p.includes('crlf'));
        if (crlf) repo.write(crlf, editLines(repo.read(crlf).toString('latin1'), 2));
        else repo.write(`crlf${c}/again.txt`, textLines(8, `crlf${c}`, '\r\n'));
      } else if (op === 'mode' && textFiles.length) {
        const f = pick(textFiles);
        const abs = path.join(repo.dir, f);
        fs.chmodSync(abs, fs.statSync(abs).mode & 0o100 ? 0o644 : 0o755);
      } else if (op === 'forcedLog') {
        repo.write('forced.log', `tracked though ignored ${c}\n`);
      } else if (op === 'nonl') {
        repo.write(
          textFiles.includes('nonl.txt') ? 'nonl.txt' : `nonl${c}.txt`,
          rand() < 0.5 ? `no newline ${c}` : `with newline ${c}\n`,
        );
      }
    }
    commits.push(repo.commit(`step ${c}`));
  }
  applyDir = createTempDir('rundiff-apply-');
  execFileSync('git', ['clone', '-q', '--no-checkout', repo.dir, applyDir], {
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' },
  });
});

afterAll(async () => {
  await engine.close();
  repo?.cleanup();
  if (applyDir) fs.rmSync(applyDir, { recursive: true, force: true });
});

interface Row {
  path: string;
  old: string | null;
  type: string;
  add: number;
  del: number;
  binary: boolean;
}

function gitRows(a: string, b: string): Row[] {
  const status = splitNul(Buffer.from(repo.git('diff', '-M', '--name-status', '-z', a, b), 'latin1'));
  const numstat = splitNul(Buffer.from(repo.git('diff', '-M', '--numstat', '-z', a, b), 'latin1'));
  const text = (x: Buffer | undefined) => Buffer.from(x!.toString('latin1'), 'latin1').toString('utf8');
  const out: Row[] = [];
  let i = 0;
  let j = 0;
  while (i < status.length) {
    const code = status[i]!.toString('latin1');
    const counts = numstat[j]!.toString('latin1').split('\t');
    const binary = counts[0] === '-';
    const add = binary ? 0 : Number(counts[0]);
    const del = binary ? 0 : Number(counts[1]);
    if (code.startsWith('R')) {
      out.push({ path: text(status[i + 2]), old: text(status[i + 1]), type: 'renamed', add, del, binary });
      i += 3;
      j += 3;
    } else {
      const type = { M: 'modified', A: 'added', D: 'deleted' }[code] ?? code;
      out.push({ path: text(status[i + 1]), old: null, type, add, del, binary });
      i += 2;
      j += 1;
    }
  }
  return out.sort((x, y) => Buffer.compare(Buffer.from(x.path), Buffer.from(y.path)));
}

test(
  'oracle: every consecutive commit pair equals git diff -M --numstat, and the whole-run patch applies',
  { tags: ['stress'], timeout: 240_000 },
  async () => {
    expect(commits.length).toBeGreaterThanOrEqual(25);
    const ws = await resolved(repo.dir);
    let pairs = 0;
    const seen = new Set<string>();
    for (let k = 0; k + 1 < commits.length; k++) {
      const [a, b] = [commits[k]!, commits[k + 1]!];
      repo.git('checkout', '-q', '-f', a);
      repo.git('clean', '-fdxq', '-e', 'build/');
      fs.mkdirSync(path.join(repo.dir, 'build'), { recursive: true });
      fs.writeFileSync(path.join(repo.dir, 'build', `out${k}.o`), 'ignored build output\n');
      fs.writeFileSync(path.join(repo.dir, `debug${k}.log`), 'ignored log\n');
      const id = `pair${k}`;
      await engine.start({ sessionId: 'oracle', changeId: id, runId: id, workspace: ws });
      repo.git('checkout', '-q', b);
      const delta = (await engine.complete('oracle', id))!;
      const ours: Row[] = delta.files.map((f) => ({
        path: f.path,
        old: f.old_path,
        type: f.change_type,
        add: f.additions,
        del: f.deletions,
        binary: f.binary,
      }));
      expect(ours, `pair ${k} (${a.slice(0, 7)}..${b.slice(0, 7)})`).toEqual(gitRows(a, b));
      expect(delta.truncated).toBe(false);
      for (const r of ours) {
        seen.add(r.type);
        if (r.type === 'renamed') seen.add(r.add + r.del > 0 ? 'rename-edited' : 'rename-exact');
        if (r.binary) seen.add('binary');
        if (r.type === 'modified' && !r.binary && r.add + r.del === 0) seen.add('mode');
        if (/[ "\n]|😀|^-|-> /u.test(r.path.split('/').pop()!)) seen.add('odd-name');
        if (r.path === 'forced.log') seen.add('tracked-ignored');
        if (r.path.includes('crlf')) seen.add('crlf');
      }

      // Apply the whole-run patch to a clean A: every non-binary file must equal B.
      execFileSync('git', ['-C', applyDir, 'checkout', '-q', '-f', a]);
      execFileSync('git', ['-C', applyDir, 'clean', '-fdxq']);
      const patchFile = path.join(applyDir, '..', `rundiff-oracle-${process.pid}.patch`);
      fs.writeFileSync(patchFile, wholeRunPatch(delta.files));
      execFileSync('git', ['-C', applyDir, 'apply', '--allow-empty', patchFile]);
      fs.rmSync(patchFile);
      execFileSync('git', ['-C', applyDir, 'add', '-A', '-f']);
      const differing = splitNul(
        execFileSync('git', ['-C', applyDir, 'diff', '--cached', '--no-renames', '--name-only', '-z', b]),
      )
        .map((x) => x.toString('utf8'))
        .sort();
      const withheld = new Set(
        delta.files
          .filter((f) => f.binary || f.truncated || f.omitted_reason)
          .flatMap((f) => [f.path, f.old_path ?? f.path]),
      );
      for (const p of differing) expect(withheld.has(p), `${p} differs from B after applying pair ${k}`).toBe(true);
      execFileSync('git', ['-C', applyDir, 'reset', '-q']);
      pairs++;
    }
    expect(pairs).toBeGreaterThanOrEqual(24);
    // The generated history really exercised every kind of change.
    expect([...seen].sort()).toEqual(
      [
        'added',
        'binary',
        'crlf',
        'deleted',
        'mode',
        'modified',
        'odd-name',
        'rename-edited',
        'rename-exact',
        'renamed',
        'tracked-ignored',
      ].sort(),
    );
  },
);

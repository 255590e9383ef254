import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The benchmark's fixed trees, generated once and cached in the temp folder: a git repository of
 * 20,000 tracked files of 1-64 KiB four folders deep (about 20 files per folder) plus an ignored
 * node_modules of 10,000 files, and a plain folder of 20,000 files of 1-8 KiB.
 */

const VERSION = 'v1';
export const BENCH_ROOT = path.join(os.tmpdir(), `rundiff-bench-${VERSION}`);

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function text(rand: () => number, bytes: number): string {
  let out = '';
  while (out.length < bytes)
    out += `const v${Math.floor(rand() * 1e9)} = ${'x'.repeat(10 + Math.floor(rand() * 60))};\n`;
  return out.slice(0, bytes - 1) + '\n';
}

/** Relative paths of the 20,000 files, four levels deep, 20 per folder. */
export function layout(count: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < count; i++) {
    const [a, b, c, d] = [i % 5, Math.floor(i / 5) % 5, Math.floor(i / 25) % 8, Math.floor(i / 200)];
    for (let f = 0; f < 20 && out.length < count; f++) out.push(`m${a}/p${b}/q${c}/r${d}/file${f}.ts`);
  }
  return out;
}

const OLD = new Date(Date.now() - 24 * 3600_000);

export const gitEnv = (): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GIT_'))),
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.invalid',
});

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: gitEnv(), encoding: 'utf8', maxBuffer: 1 << 28 });
}

export function writeTree(root: string, files: string[], minBytes: number, maxBytes: number, seed: number): void {
  const rand = rng(seed);
  for (const rel of files) {
    const abs = path.join(root, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, text(rand, minBytes + Math.floor(rand() * (maxBytes - minBytes))));
    fs.utimesSync(abs, OLD, OLD);
  }
}

export interface BenchTrees {
  gitTree: string;
  plainTree: string;
  gitFiles: string[];
  plainFiles: string[];
}

export function ensureTrees(log: (s: string) => void): BenchTrees {
  const gitTree = path.join(BENCH_ROOT, 'git');
  const plainTree = path.join(BENCH_ROOT, 'plain');
  const gitFiles = layout(20_000);
  const plainFiles = layout(20_000);
  const done = path.join(BENCH_ROOT, 'ready');
  if (!fs.existsSync(done)) {
    log(`generating benchmark trees in ${BENCH_ROOT} (once)...`);
    fs.rmSync(BENCH_ROOT, { recursive: true, force: true });
    writeTree(gitTree, gitFiles, 1024, 64 * 1024, 1);
    writeTree(
      gitTree,
      Array.from({ length: 10_000 }, (_, i) => `node_modules/pkg${Math.floor(i / 20)}/lib/i${i}.js`),
      100,
      400,
      2,
    );
    fs.writeFileSync(path.join(gitTree, '.gitignore'), 'node_modules/\n');
    git(gitTree, 'init', '-q', '-b', 'main');
    git(gitTree, 'add', '-A');
    git(gitTree, 'commit', '-q', '-m', 'bench tree');
    writeTree(plainTree, plainFiles, 1024, 8 * 1024, 3);
    fs.writeFileSync(done, 'ok\n');
  }
  return { gitTree: fs.realpathSync(gitTree), plainTree: fs.realpathSync(plainTree), gitFiles, plainFiles };
}

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { computeDelta } from '../server/delta/index.ts';
import { createGitDiffEngine } from '../server/git/index.ts';
import { median } from './stats.ts';

/**
 * Large-file diff benchmark: a 500 KiB file whose every line changed, diffed by the engine alone
 * (`batchDiff`, counts and hunks) and through the whole delta (`computeDelta`, 128 KiB patch cap),
 * against `git diff --no-index --numstat --patch` on the same two files written to disk, measured in
 * the same interleaved rounds. The per-file diff budget is 100 ms of git's work plus spawn slack;
 * what is compared is the ratio, because absolute times on a shared machine move from run to run.
 */

export interface BigDiffBenchResult {
  rounds: number;
  lines: number;
  gitNoIndexMs: number;
  batchDiffMs: number;
  computeDeltaMs: number;
  maxBatchDiffMs: number;
  maxComputeDeltaMs: number;
}

function gitNoIndexMs(dir: string): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) =>
    execFile(
      'git',
      ['diff', '--no-index', '--no-ext-diff', '--no-textconv', '--numstat', '--patch', '--', 'before', 'after'],
      { cwd: dir, maxBuffer: 1 << 26, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dir } },
      // `git diff --no-index` exits 1 when the files differ.
      (err) =>
        err && err.code !== 1 ? reject(new Error(err.message, { cause: err })) : resolve(performance.now() - t0),
    ),
  );
}

export async function benchBigDiff(
  opts: { rounds?: number; log?: (s: string) => void } = {},
): Promise<BigDiffBenchResult> {
  const log = opts.log ?? ((s: string) => void process.stderr.write(`${s}\n`));
  const rounds = Math.max(3, opts.rounds ?? 7);
  const lines = (500 * 1024) / 20;
  const before = Buffer.from(
    Array.from({ length: lines }, (_, i) => `before line ${String(i).padStart(6, '0')}\n`).join(''),
  );
  const after = Buffer.from(
    Array.from({ length: lines }, (_, i) => `after  line ${String(i).padStart(6, '0')}\n`).join(''),
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-bench-bigdiff-'));
  fs.writeFileSync(path.join(dir, 'before'), before);
  fs.writeFileSync(path.join(dir, 'after'), after);
  const engineTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-bench-bigdiff-engine-'));
  const engine = createGitDiffEngine({ tmpDir: engineTmp });
  const g: number[] = [];
  const b: number[] = [];
  const d: number[] = [];
  try {
    // Round -1 warms the page cache and git; it is not counted.
    for (let r = -1; r < rounds; r++) {
      const git = await gitNoIndexMs(dir);
      const t0 = performance.now();
      const [res] = await engine.batchDiff([{ before, after }], 100);
      const t1 = performance.now();
      if (!res || res.additions !== lines || res.deletions !== lines)
        throw new Error(
          `batchDiff: expected +${lines} -${lines}, got ${res ? `+${res.additions} -${res.deletions}` : 'null'}`,
        );
      const out = await computeDelta({
        changes: [
          {
            path: 'big.txt',
            before: { bytes: before, size: before.length, mode: '100644' },
            after: { bytes: after, size: after.length, mode: '100644' },
          },
        ],
        limits: {
          maxChangedFiles: 10_000,
          maxFilePatchBytes: 128 * 1024,
          maxRunPatchBytes: 512 * 1024,
          diffTimeoutMs: 100,
        },
        ...engine,
      });
      const t2 = performance.now();
      const f = out.files[0];
      if (!f || f.additions !== lines || f.deletions !== lines)
        throw new Error(
          `computeDelta: expected exact counts, got ${f ? `+${f.additions} -${f.deletions}` : 'no file'}`,
        );
      if (r < 0) continue;
      g.push(git);
      b.push(t1 - t0);
      d.push(t2 - t1);
      log(
        `round ${r + 1}: git diff --no-index ${git.toFixed(0)} ms | batchDiff ${(t1 - t0).toFixed(0)} ms | computeDelta ${(t2 - t1).toFixed(0)} ms`,
      );
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(engineTmp, { recursive: true, force: true });
  }
  return {
    rounds,
    lines,
    gitNoIndexMs: median(g),
    batchDiffMs: median(b),
    computeDeltaMs: median(d),
    maxBatchDiffMs: Math.max(...b),
    maxComputeDeltaMs: Math.max(...d),
  };
}

export function formatBigDiffBench(r: BigDiffBenchResult): string {
  const x = (ms: number) => `${(ms / r.gitNoIndexMs).toFixed(2)}x`;
  return [
    `big diff: 500 KiB, ${r.lines} lines all changed, median of ${r.rounds} rounds`,
    `  git diff --no-index (baseline)  ${r.gitNoIndexMs.toFixed(0)} ms`,
    `  engine batchDiff                ${r.batchDiffMs.toFixed(0)} ms = ${x(r.batchDiffMs)} (max ${r.maxBatchDiffMs.toFixed(0)} ms; budget 100 ms + spawn slack)`,
    `  computeDelta (128 KiB cap)      ${r.computeDeltaMs.toFixed(0)} ms = ${x(r.computeDeltaMs)} (max ${r.maxComputeDeltaMs.toFixed(0)} ms)`,
  ].join('\n');
}

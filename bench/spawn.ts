import fs from 'node:fs';
import os from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createGitSpawner, directLauncher, runGitVia, type GitLauncher } from '../server/git/index.ts';

/**
 * What one git call costs the calling process's event loop, at a small and at a large resident
 * size, spawning git directly (a fork of this process) against through the git helper process.
 * Bursts of `git --version` one after another, interleaved between the two ways in each round:
 * the main thread's busy time per call (event-loop utilisation), the synchronous part of starting
 * a call, and the longest block `monitorEventLoopDelay` saw.
 */

export interface SpawnCost {
  /** Main-thread busy time per call (ms), median over rounds. */
  busyMsPerCall: number;
  /** Time inside the call that starts git, before it returns its promise (ms), median. */
  startMs: number;
  /** Longest event-loop block over all rounds (ms). */
  longestBlockMs: number;
}

export interface SpawnBenchResult {
  calls: number;
  rounds: number;
  small: { rssMiB: number; direct: SpawnCost; helper: SpawnCost };
  large: { rssMiB: number; direct: SpawnCost; helper: SpawnCost };
  helperRssMiB: number | null;
}

export interface SpawnBenchOptions {
  /** Calls per burst. Default 40. */
  calls?: number;
  /** Rounds (one burst each way per round). Default 5. */
  rounds?: number;
  /** Live memory added for the large case (MiB). Default 300. */
  extraMiB?: number;
  log?: (line: string) => void;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rssMiB = () => process.memoryUsage().rss / 2 ** 20;

function vmRssMiB(pid: number | null): number | null {
  if (pid === null) return null;
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : null;
}

async function burst(launcher: GitLauncher, calls: number, cwd: string) {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const starts: number[] = [];
  delay.enable();
  const elu = performance.eventLoopUtilization();
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    const p = runGitVia(launcher, { cwd, args: ['--version'] });
    starts.push(performance.now() - t);
    const r = await p;
    if (!r.stdout.toString().startsWith('git version')) throw new Error('unexpected git --version output');
  }
  const busy = performance.eventLoopUtilization(elu);
  delay.disable();
  return { busyMsPerCall: busy.active / calls, startMs: median(starts), longestBlockMs: delay.max / 1e6 };
}

async function compare(helper: GitLauncher, calls: number, rounds: number, cwd: string) {
  const runs = { direct: [] as SpawnCost[], helper: [] as SpawnCost[] };
  for (let r = 0; r < rounds; r++) {
    runs.direct.push(await burst(directLauncher, calls, cwd));
    runs.helper.push(await burst(helper, calls, cwd));
  }
  const sum = (xs: SpawnCost[]): SpawnCost => ({
    busyMsPerCall: median(xs.map((x) => x.busyMsPerCall)),
    startMs: median(xs.map((x) => x.startMs)),
    longestBlockMs: Math.max(...xs.map((x) => x.longestBlockMs)),
  });
  return { rssMiB: rssMiB(), direct: sum(runs.direct), helper: sum(runs.helper) };
}

/** Live memory the collector cannot free: half Buffers (touched), half small JS objects. */
function ballast(mib: number): unknown[] {
  const keep: unknown[] = [];
  for (let i = 0; i < mib / 2; i++) keep.push(Buffer.alloc(2 ** 20, i));
  // ~56 bytes per object with its slot in the array.
  const objects = Array.from({ length: Math.round(((mib / 2) * 2 ** 20) / 56) }, (_, i) => ({ i, j: i * 2 }));
  keep.push(objects);
  return keep;
}

export async function benchSpawn(opts: SpawnBenchOptions = {}): Promise<SpawnBenchResult> {
  const log = opts.log ?? ((l: string) => void process.stderr.write(`${l}\n`));
  const calls = opts.calls ?? 40;
  const rounds = opts.rounds ?? 5;
  const cwd = os.tmpdir();
  const helper = createGitSpawner();
  try {
    await burst(helper, 5, cwd); // start the helper and warm both paths
    await burst(directLauncher, 5, cwd);
    const small = await compare(helper, calls, rounds, cwd);
    log(
      `spawn cost at ${small.rssMiB.toFixed(0)} MiB RSS: direct ${small.direct.busyMsPerCall.toFixed(2)} ms/call, helper ${small.helper.busyMsPerCall.toFixed(2)} ms/call`,
    );
    const kept = ballast(opts.extraMiB ?? 300);
    const large = await compare(helper, calls, rounds, cwd);
    log(
      `spawn cost at ${large.rssMiB.toFixed(0)} MiB RSS: direct ${large.direct.busyMsPerCall.toFixed(2)} ms/call, helper ${large.helper.busyMsPerCall.toFixed(2)} ms/call`,
    );
    const helperRssMiB = vmRssMiB(helper.info().pid);
    if (kept.length === 0) throw new Error('unreachable'); // keeps the ballast alive until here
    return { calls, rounds, small, large, helperRssMiB };
  } finally {
    await helper.close();
  }
}

export function formatSpawnBench(r: SpawnBenchResult): string {
  const ms = (n: number) => `${n.toFixed(2)} ms`;
  const row = (label: string, at: SpawnBenchResult['small']) =>
    [
      `| ${label}, ${at.rssMiB.toFixed(0)} MiB RSS: direct spawn | ${ms(at.direct.busyMsPerCall)} | ${ms(at.direct.startMs)} | ${ms(at.direct.longestBlockMs)} |`,
      `| ${label}, ${at.rssMiB.toFixed(0)} MiB RSS: git helper | ${ms(at.helper.busyMsPerCall)} | ${ms(at.helper.startMs)} | ${ms(at.helper.longestBlockMs)} |`,
    ].join('\n');
  return [
    `Spawn cost (${r.rounds} rounds of ${r.calls} \`git --version\` calls each way; helper RSS ${r.helperRssMiB?.toFixed(0) ?? '?'} MiB)`,
    '',
    '| server process | main-thread busy per call | starting a call | longest event-loop block |',
    '| --- | --- | --- | --- |',
    row('small', r.small),
    row('large', r.large),
    '',
    `direct spawn grows ${(r.large.direct.busyMsPerCall / r.small.direct.busyMsPerCall).toFixed(1)}x with the memory, the helper ${(r.large.helper.busyMsPerCall / r.small.helper.busyMsPerCall).toFixed(1)}x; at the large size the helper costs ${(r.large.helper.busyMsPerCall / r.large.direct.busyMsPerCall).toFixed(2)}x of a direct spawn.`,
  ].join('\n');
}

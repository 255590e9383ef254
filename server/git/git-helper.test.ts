import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { AppError } from '../errors.ts';
import { createTempDir, createTempRepo, type TempRepo } from '../test-support/index.ts';
import { directLauncher } from './direct-spawn.ts';
import { startTestServer } from '../test-support/server-harness.ts';
import { createGitSpawner, type GitSpawner } from './helper-client.ts';
import { configEnv, gitArgv, gitHelperInfo, runGit, runGitVia, scrubbedGitEnv } from './runner.ts';
import { encodeFrame, encodeJsonFrame, SPAWN, STDIN, STDIN_END } from './frames.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
const repo = (files: Record<string, string | Buffer> = { 'a.txt': 'a\n' }): TempRepo => {
  const r = createTempRepo({ files });
  cleanups.push(() => r.cleanup());
  return r;
};
const spawner = (opts: Parameters<typeof createGitSpawner>[0] = {}): GitSpawner => {
  const s = createGitSpawner(opts);
  cleanups.push(() => s.close({ waitMs: 0 }));
  return s;
};

/** Process ids whose parent is `pid` (Linux /proc). */
function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** A process that exists and is not a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Waits for a condition another process brings about; the test's own timeout bounds it. */
async function until(what: () => boolean): Promise<void> {
  while (!what()) await new Promise((r) => setTimeout(r, 10));
}

/** A git that blocks forever reading a FIFO nobody writes: only a kill ends it. */
function hungGitArgs(r: TempRepo): string[] {
  const name = `pipe-${randomBytes(4).toString('hex')}`;
  execFileSync('mkfifo', [path.join(r.dir, name)]);
  return ['hash-object', '--', name];
}

const blobId = (b: Buffer) =>
  createHash('sha1')
    .update(Buffer.concat([Buffer.from(`blob ${b.length}\0`), b]))
    .digest('hex');

describe('git helper process', () => {
  it('runs git outside this process: concurrent calls with many MiB of stdin and stdout round-trip byte for byte', async () => {
    const r = repo();
    const blobs = [
      randomBytes(6 * 1024 * 1024),
      randomBytes(3 * 1024 * 1024 + 7),
      Buffer.alloc(0),
      randomBytes(65_537),
    ];
    // A small stdin window, so every large input goes through many acknowledgements.
    const via = spawner({ stdinWindowBytes: 64 * 1024 });
    const written = await Promise.all(
      blobs.map((b) => runGitVia(via, { cwd: r.dir, args: ['hash-object', '-w', '--stdin'], input: b })),
    );
    expect(written.map((w) => w.stdout.toString().trim())).toEqual(blobs.map(blobId));
    const batches = await Promise.all(
      [blobs, [...blobs].reverse()].map((list) =>
        runGitVia(via, {
          cwd: r.dir,
          args: ['cat-file', '--batch'],
          input: list.map((b) => `${blobId(b)}\n`).join(''),
        }),
      ),
    );
    const expectBatch = (list: Buffer[]) =>
      Buffer.concat(list.flatMap((b) => [Buffer.from(`${blobId(b)} blob ${b.length}\n`), b, Buffer.from('\n')]));
    expect(batches[0]!.stdout.equals(expectBatch(blobs))).toBe(true);
    expect(batches[1]!.stdout.equals(expectBatch([...blobs].reverse()))).toBe(true);
    // It was the helper that ran them, not this process.
    expect(via.info()).toMatchObject({ mode: 'helper', pending: 0 });
    expect(via.info().pid).not.toBe(process.pid);
    expect(childPids(process.pid)).toContain(via.info().pid);
  });

  it('answers exactly as a direct spawn does: results, exit codes, stderr and every error kind', async () => {
    const r = repo({ 'a.txt': 'one\n', 'b.txt': 'two\n' });
    const plain = createTempDir();
    cleanups.push(() => fs.rmSync(plain, { recursive: true, force: true }));
    const cases: Parameters<typeof runGitVia>[1][] = [
      { cwd: r.dir, args: ['rev-parse', 'HEAD'] },
      { cwd: r.dir, args: ['cat-file', '-p', 'deadbeef'] },
      { cwd: r.dir, args: ['diff', '--no-index', '--', 'a.txt', 'b.txt'], okExitCodes: [0, 1] },
      { cwd: r.dir, args: ['diff', '--no-index', '--', 'a.txt', 'b.txt'] },
      { cwd: r.dir, args: ['hash-object', '--stdin'], input: 'text input\n' },
      { cwd: plain, args: ['log'] },
      { cwd: path.join(plain, 'gone'), args: ['status'] },
      { cwd: plain, args: ['status'], gitBinary: path.join(plain, 'no-such-git') },
      { cwd: r.dir, args: ['status'], config: [['bad\nkey', 'x']] },
      { cwd: r.dir, args: ['rev-parse', 'HEAD\0'] },
    ];
    const via = spawner();
    const outcome = (p: Promise<unknown>) =>
      p.then(
        (res) => ({ res }),
        (err: AppError) => ({ code: err.code, message: err.message, details: err.details }),
      );
    const direct = await Promise.all(cases.map((c) => outcome(runGitVia(directLauncher, c))));
    const helped = await Promise.all(cases.map((c) => outcome(runGitVia(via, c))));
    expect(helped).toEqual(direct);
    expect(direct.map((d) => ('code' in d ? d.code : d.res && 'ok'))).toEqual([
      'ok',
      'git_failed',
      'ok',
      'git_failed',
      'ok',
      'not_a_repository',
      'not_found',
      'git_missing',
      'git_failed',
      'git_missing',
    ]);
    expect(via.info().mode).toBe('helper');
  });

  it('gives git exactly the scrubbed environment and overrides: nothing of the server or the helper added', async () => {
    const r = repo();
    const saved = { ...process.env };
    onTestFinished(() => void (process.env = saved));
    process.env.GIT_DIR = '/nonexistent';
    process.env.NODE_OPTIONS = '--max-old-space-size=99';
    process.env.RUNDIFF_LEAK_PROBE = 'leaked';
    const via = spawner();
    const call = runGitVia(via, {
      cwd: r.dir,
      args: hungGitArgs(r),
      env: { GIT_INDEX_FILE: '/tmp/x' },
      timeoutMs: 20_000,
    });
    call.catch(() => undefined);
    // Reported once spawn returned, so git has replaced the helper's copy of itself by then.
    await until(() => via.info().gitPids.length === 1);
    const gitPid = via.info().gitPids[0]!;
    const environ = fs.readFileSync(`/proc/${gitPid}/environ`, 'utf8').split('\0').filter(Boolean);
    // Plus the work tree the runner pins (the folder holding `.git`, whatever core.worktree says).
    const expected = {
      ...scrubbedGitEnv({ GIT_INDEX_FILE: '/tmp/x' }),
      ...configEnv(),
      GIT_WORK_TREE: fs.realpathSync(r.dir),
    };
    expect(Object.fromEntries(environ.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]))).toEqual(
      expected,
    );
    // The caller's entry (the positive control) is there; the server's own variables are not.
    expect(environ).toContain('GIT_INDEX_FILE=/tmp/x');
    expect(environ.some((e) => e.startsWith('RUNDIFF_LEAK_PROBE=') || e.startsWith('NODE_OPTIONS='))).toBe(false);
    // The helper itself started with an empty environment.
    expect(fs.readFileSync(`/proc/${via.info().pid!}/environ`, 'utf8')).toBe('');
    await via.close({ waitMs: 0 });
    await expect(call).rejects.toMatchObject({ code: 'git_failed' });
  });

  it('a hung git is killed at the deadline with git_timeout, its process group is gone, and the helper keeps serving', async () => {
    const r = repo();
    const via = spawner();
    await runGitVia(via, { cwd: r.dir, args: ['--version'] });
    const pid = via.info().pid!;
    const err = await runGitVia(via, { cwd: r.dir, args: hungGitArgs(r), timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('git_timeout');
    expect(childPids(pid)).toEqual([]);
    const next = await runGitVia(via, { cwd: r.dir, args: ['rev-parse', 'HEAD'] });
    expect(next.stdout.toString()).toMatch(/^[0-9a-f]{40}\n$/);
    expect(via.info().pid).toBe(pid);
  });

  it('a git that does not read its stdin holds at most the window in the helper, not the whole input', async () => {
    const r = repo();
    const input = Buffer.alloc(256 * 1024 * 1024, 'x');
    const peakMiB = (pid: number) =>
      Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
    // The hung git never reads stdin: whatever the server sends piles up in the helper.
    const blocked = async (via: GitSpawner, enough: () => boolean) => {
      const call = runGitVia(via, { cwd: r.dir, args: hungGitArgs(r), input, timeoutMs: 120_000 }).catch(
        (e: unknown) => e,
      );
      await until(() => via.info().pid !== null && childPids(via.info().pid!).length === 1 && enough());
      const peak = peakMiB(via.info().pid!);
      await via.close({ waitMs: 0 });
      expect(((await call) as AppError).code).toBe('git_failed');
      return peak;
    };
    const windowed = spawner({ stdinWindowBytes: 1024 * 1024 });
    const peak = await blocked(windowed, () => windowed.info().stdinInFlightBytes === 1024 * 1024);
    expect(peak).toBeLessThan(120);
    // Control: with a window as large as the input, the helper takes it all in.
    const unbounded = spawner({ stdinWindowBytes: input.length });
    const controlPeak = await blocked(unbounded, () => peakMiB(unbounded.info().pid!) > 200);
    expect(controlPeak).toBeGreaterThan(200);
  });

  it('a server that does not read holds git back: the helper queues about 1 MiB, not all git writes', async () => {
    const blob = Buffer.alloc(8 * 1024 * 1024, 'y');
    const r = repo({ 'big.bin': blob });
    const peakMiB = (pid: number) =>
      Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
    const written = (pid: number) => Number(/wchar: (\d+)/.exec(fs.readFileSync(`/proc/${pid}/io`, 'utf8'))![1]);
    // Asleep in a write to its stdout (Node's stdio "pipes" are socket pairs on Linux).
    const blockedWriting = (pid: number) => /send|write/.test(fs.readFileSync(`/proc/${pid}/wchan`, 'utf8'));
    // The helper on its own, driven with frames by a reader that never reads its answers.
    const run = async (extraArgs: string[], waitForEnd: boolean) => {
      const helperPath = fileURLToPath(new URL('./git-helper.js', import.meta.url));
      const helper = spawn(process.execPath, [helperPath, ...extraArgs], {
        stdio: ['pipe', 'pipe', 'inherit'],
        env: {},
      });
      cleanups.push(() => void helper.kill('SIGKILL'));
      await new Promise((resolve) => helper.stdout.once('data', resolve)); // READY
      helper.stdout.pause();
      const env = { ...scrubbedGitEnv(), ...configEnv() };
      const args = gitArgv(['cat-file', '--batch']);
      helper.stdin.write(encodeJsonFrame(SPAWN, 1, { file: 'git', args, cwd: r.dir, env, maxStdoutBytes: 2 ** 30 }));
      helper.stdin.write(encodeFrame(STDIN, 1, Buffer.from(`${blobId(blob)}\n`.repeat(25)))); // 200 MiB of answers
      helper.stdin.write(encodeFrame(STDIN_END, 1, undefined));
      await until(() => childPids(helper.pid!).length === 1);
      const git = childPids(helper.pid!)[0]!;
      // Until git has stopped writing (asleep in a write, the same count for 10 polls in a row) or
      // finished; the control waits for it to finish.
      let last = -1;
      let stalledPolls = 0;
      let gitWrote = 0;
      await until(() => {
        if (!alive(git)) return true;
        if (waitForEnd) return false;
        const now = written(git);
        stalledPolls = blockedWriting(git) && now === last ? stalledPolls + 1 : 0;
        last = now;
        gitWrote = now;
        return stalledPolls >= 10;
      });
      return { finished: !alive(git), gitWroteMiB: gitWrote / 2 ** 20, helperPeakMiB: peakMiB(helper.pid!) };
    };
    const bounded = await run([], false);
    expect(bounded.finished).toBe(false);
    expect(bounded.gitWroteMiB).toBeLessThan(8);
    expect(bounded.helperPeakMiB).toBeLessThan(120);
    // Control: with a bound larger than git's output, git writes it all into the helper.
    const control = await run([String(2 ** 30)], true);
    expect(control.finished).toBe(true);
    expect(control.helperPeakMiB).toBeGreaterThan(200);
  });

  it('the output cap truncates and kills a git that would write for minutes', async () => {
    const blob = randomBytes(1024 * 1024);
    const r = repo({ 'big.bin': blob });
    const via = spawner();
    // 10 GiB of answers: only the cap's kill ends this call before its deadline.
    const res = await runGitVia(via, {
      cwd: r.dir,
      args: ['cat-file', '--batch'],
      input: `${blobId(blob)}\n`.repeat(10_240),
      maxStdoutBytes: 3 * 1024 * 1024 + 5,
      timeoutMs: 600_000,
    });
    expect(res.stdoutTruncated).toBe(true);
    expect(res.stdout.length).toBe(3 * 1024 * 1024 + 5);
    const header = Buffer.from(`${blobId(blob)} blob ${blob.length}\n`);
    expect(res.stdout.subarray(0, header.length + blob.length).equals(Buffer.concat([header, blob]))).toBe(true);
    expect(childPids(via.info().pid!)).toEqual([]);
  });

  it('when the helper is killed mid-call, pending calls fail clearly, their git is killed, and the next call starts a new helper', async () => {
    const r = repo();
    const via = spawner();
    const calls = [1, 2].map(() =>
      runGitVia(via, { cwd: r.dir, args: hungGitArgs(r), timeoutMs: 60_000 }).catch((e: unknown) => e),
    );
    // Both gits started, and the helper has told this process their pids.
    await until(() => via.info().gitPids.length === 2);
    const pid = via.info().pid!;
    const gits = via.info().gitPids;
    expect([...gits].sort()).toEqual(childPids(pid).sort());
    expect(gits.every(alive)).toBe(true);
    process.kill(pid, 'SIGKILL');
    for (const err of await Promise.all(calls)) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('git_failed');
      expect((err as AppError).message).toMatch(
        /git hash-object did not finish: the git helper process exited \(signal SIGKILL\)/,
      );
    }
    await until(() => !gits.some(alive));
    const next = await runGitVia(via, { cwd: r.dir, args: ['rev-parse', 'HEAD'] });
    expect(next.exitCode).toBe(0);
    expect(via.info().pid).not.toBe(pid);
  });

  it("a call's deadline holds while the helper is stuck, and the stuck helper is replaced", async () => {
    const r = repo();
    const logged: string[] = [];
    const via = spawner({ killAckMs: 100, log: (m) => logged.push(m) });
    await runGitVia(via, { cwd: r.dir, args: ['--version'] });
    const pid = via.info().pid!;
    process.kill(pid, 'SIGSTOP');
    onTestFinished(() => {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    });
    const err = await runGitVia(via, { cwd: r.dir, args: ['rev-parse', 'HEAD'], timeoutMs: 200 }).catch(
      (e: unknown) => e,
    );
    expect((err as AppError).code).toBe('git_timeout');
    expect(logged.join('\n')).toMatch(/did not confirm a kill within 100 ms/);
    const next = await runGitVia(via, { cwd: r.dir, args: ['rev-parse', 'HEAD'] });
    expect(next.exitCode).toBe(0);
    expect(via.info().pid).not.toBe(pid);
  });

  it('when the helper cannot start, it says so once and git is spawned directly', async () => {
    const r = repo();
    for (const command of [
      { file: process.execPath, args: [path.join(r.dir, 'no-such-helper.js')] }, // exits at once
      { file: path.join(r.dir, 'no-such-node'), args: [] }, // cannot be executed
      { file: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] }, // never ready
    ]) {
      const logged: string[] = [];
      const via = spawner({ command, startTimeoutMs: 500, log: (m) => logged.push(m) });
      const results = await Promise.all(
        [1, 2, 3].map(() => runGitVia(via, { cwd: r.dir, args: ['rev-parse', 'HEAD'] })),
      );
      results.push(await runGitVia(via, { cwd: r.dir, args: ['rev-parse', 'HEAD'] }));
      expect(results.map((x) => x.exitCode)).toEqual([0, 0, 0, 0]);
      expect(via.info().mode).toBe('direct');
      expect(logged.filter((l) => /could not start/.test(l))).toHaveLength(1);
    }
    // Positive control: the real helper starts and says nothing.
    const logged: string[] = [];
    const real = spawner({ log: (m) => logged.push(m) });
    await runGitVia(real, { cwd: r.dir, args: ['rev-parse', 'HEAD'] });
    expect(real.info().mode).toBe('helper');
    expect(logged).toEqual([]);
  });

  it('the helper exits when the process that started it dies', async () => {
    const r = repo();
    const script = path.join(r.dir, 'parent.mts');
    const runner = new URL('./runner.ts', import.meta.url).href;
    fs.writeFileSync(
      script,
      `import { runGit, gitHelperInfo } from ${JSON.stringify(runner)};\n` +
        `await runGit({ cwd: ${JSON.stringify(r.dir)}, args: ['--version'] });\n` +
        `process.stdout.write(String(gitHelperInfo().pid) + '\\n');\n` +
        `setInterval(() => {}, 1000);\n`,
    );
    const tsx = new URL('../../bin/tsx.js', import.meta.url).pathname;
    const parent = spawn(process.execPath, [tsx, script], { stdio: ['ignore', 'pipe', 'inherit'] });
    onTestFinished(() => void parent.kill('SIGKILL'));
    const helperPid = await new Promise<number>((resolve) =>
      parent.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))),
    );
    expect(alive(helperPid)).toBe(true);
    parent.kill('SIGKILL');
    await until(() => !alive(helperPid));
  });

  it('closing the server stops the helper', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const r = repo();
    await runGit({ cwd: r.dir, args: ['--version'] });
    const pid = gitHelperInfo().pid!;
    expect(alive(pid)).toBe(true);
    await t.close();
    expect(alive(pid)).toBe(false);
    expect(gitHelperInfo().pid).toBeNull();
    // The next call starts another.
    await runGit({ cwd: r.dir, args: ['--version'] });
    expect(gitHelperInfo().pid).not.toBe(pid);
  });
});

/**
 * `npm run chaos`: fault and load checks against the real server, started as users start it
 * (`rundiff serve`), printing what each check found. Exits 1 when any check found a fault.
 *
 *  1. kill -9 under load, then restart: `PRAGMA integrity_check` is ok, every acknowledged
 *     completion is stored whole (its summary with all its file rows), no change is half stored;
 *  2. disk full: a completion that cannot be stored answers a storage error and keeps its
 *     checkpoint; once space is back, the retry stores the right files (needs root, for a small
 *     tmpfs; skipped, saying so, otherwise);
 *  3. a rename storm during an open run: the API keeps answering and the run's completion is stored;
 *  4. 200 concurrent runs on separate workspaces: every one answers and is stored exactly;
 *  5. hostile workspaces (`/proc`, `/sys`): refused at once, and other workspaces still work;
 *  6. a folder above a workspace flipped to a symlink while reverts run: nothing outside changes
 *     and no revert answers 500.
 *  7. planted temp names: `rundiff hooks install` in a repository that plants the installer's old
 *     temp name for every pid and a settings file linked outside writes nothing outside.
 *  8. the hook client's data folder flipped to a symlink while the client's state steps run
 *     (check, lock, log, pid): nothing is written outside.
 *
 * Every loop is bounded in count and time, every server listens on loopback, and every folder
 * and process it makes is removed at the end.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { io } from 'socket.io-client';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(repoRoot, 'bin', 'rundiff.js');

interface Finding {
  check: string;
  ok: boolean;
  detail: string;
}

const findings: Finding[] = [];
const cleanups: (() => void)[] = [];
const log = (line: string) => process.stderr.write(`chaos: ${line}\n`);

function tempDir(prefix: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `rundiff-chaos-${prefix}-`)));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const gitEnv = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: os.tmpdir(),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'chaos',
  GIT_AUTHOR_EMAIL: 'chaos@example.invalid',
  GIT_COMMITTER_NAME: 'chaos',
  GIT_COMMITTER_EMAIL: 'chaos@example.invalid',
};

/** A small workspace: a git repository with one commit, or a plain folder. */
function makeWorkspace(parent: string, name: string, git: boolean): string {
  const dir = path.join(parent, name);
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
  for (let i = 0; i < 5; i++) fs.writeFileSync(path.join(dir, 'src', `f${i}.txt`), `line one\nline two ${i}\n`);
  if (git) {
    execFileSync('git', ['init', '-q'], { cwd: dir, env: gitEnv });
    execFileSync('git', ['add', '-A'], { cwd: dir, env: gitEnv });
    execFileSync('git', ['commit', '-qm', 'init'], { cwd: dir, env: gitEnv });
  }
  return dir;
}

/** The edit every run makes: one file modified, one added (so 2 changed files). */
function editWorkspace(dir: string, tag: string): void {
  fs.appendFileSync(path.join(dir, 'src', 'f0.txt'), `edited by ${tag}\n`);
  fs.writeFileSync(path.join(dir, `new-${tag}.txt`), `added by ${tag}\n`);
}

interface Server {
  url: string;
  child: ChildProcess;
  stderr: () => string;
  stop(): Promise<void>;
}

function withoutToken(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  delete copy.RUNDIFF_TOKEN;
  return copy;
}

async function startServer(db: string, env: Record<string, string> = {}): Promise<Server> {
  const child = spawn(process.execPath, [cli, 'serve', '--port', '0', '--db', db], {
    env: withoutToken({ ...process.env, ...env }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.setEncoding('utf8');
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${err}`)), 60_000);
    child.stderr.on('data', (chunk: string) => {
      err += chunk;
      const m = /serving on (http:\/\/[^\s]+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before it served: ${err}`));
    });
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  cleanups.push(() => child.kill('SIGKILL'));
  return { url, child, stderr: () => err, stop };
}

interface Answer {
  status: number;
  body: Record<string, unknown> | null;
}

async function post(url: string, event: Record<string, unknown>, timeoutMs = 60_000): Promise<Answer> {
  const res = await fetch(new URL('/api/bridge/events', url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(event),
    signal: AbortSignal.timeout(timeoutMs),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> | null };
}

async function getJson(url: string, route: string): Promise<Answer> {
  const res = await fetch(new URL(route, url), { signal: AbortSignal.timeout(60_000) });
  return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> | null };
}

const changeRoute = (session: string, run: string) =>
  `/api/hermes/sessions/${encodeURIComponent(session)}/workspace-run-changes/${encodeURIComponent(`run:${run}`)}`;

/** One run: start, edit, complete. Returns the completion's answer. */
async function oneRun(url: string, session: string, run: string, dir: string): Promise<Answer> {
  await post(url, { type: 'session.upsert', session_id: session, workspace: dir });
  const started = await post(url, { type: 'run.started', session_id: session, run_id: run });
  if (started.status !== 200) return started;
  editWorkspace(dir, run);
  return post(url, { type: 'run.completed', session_id: session, run_id: run });
}

function record(check: string, ok: boolean, detail: string): void {
  findings.push({ check, ok, detail });
  log(`${ok ? 'ok  ' : 'FAIL'} ${check}: ${detail}`);
}

/** Checks that a stored change holds every file its summary counts. */
async function storedWhole(url: string, session: string, run: string, expected: number): Promise<string | null> {
  const got = await getJson(url, changeRoute(session, run));
  if (got.status !== 200) return `${session}/${run}: ${got.status}`;
  const change = got.body!.change as { changed_count: number; files: unknown[] };
  if (change.changed_count !== expected)
    return `${session}/${run}: ${change.changed_count} changed, expected ${expected}`;
  if (change.files.length !== expected) return `${session}/${run}: ${change.files.length} file rows of ${expected}`;
  return null;
}

async function killUnderLoad(cycles: number): Promise<void> {
  const base = tempDir('kill');
  const db = path.join(base, 'rundiff.db');
  const workers = 6;
  const dirs = Array.from({ length: workers }, (_, i) => makeWorkspace(base, `ws${i}`, i % 2 === 0));
  const acked: { session: string; run: string }[] = [];
  let problems: string[] = [];
  for (let cycle = 0; cycle < cycles; cycle++) {
    const server = await startServer(db);
    let killed = false;
    const loops = dirs.map(async (dir, w) => {
      for (let k = 0; k < 200 && !killed; k++) {
        const session = `kill-${w}`;
        const run = `c${cycle}-r${k}`;
        try {
          const done = await oneRun(server.url, session, run, dir);
          if (done.status === 200 && done.body?.tracking === true) acked.push({ session, run });
        } catch {
          return; // the kill cut this request: not acknowledged
        }
      }
    });
    // Kill at a different moment each cycle, while requests are in flight.
    await new Promise((r) => setTimeout(r, 700 + cycle * 350));
    killed = true;
    server.child.kill('SIGKILL');
    await Promise.all(loops);
    await new Promise((r) =>
      server.child.exitCode !== null || server.child.signalCode !== null ? r(null) : server.child.once('exit', r),
    );
    const check = new Database(db, { readonly: true });
    const integrity = check.pragma('integrity_check', { simple: true });
    check.close();
    if (integrity !== 'ok') problems.push(`cycle ${cycle}: integrity_check says ${String(integrity)}`);
  }
  const server = await startServer(db);
  // Every acknowledged completion is there, whole; every stored change of these sessions is whole.
  for (const a of acked) {
    const p = await storedWhole(server.url, a.session, a.run, 2);
    if (p) problems.push(`acknowledged but not stored whole: ${p}`);
  }
  let stored = 0;
  for (let w = 0; w < workers; w++) {
    const list = await getJson(server.url, `/api/hermes/sessions/kill-${w}/workspace-run-changes`);
    for (const c of (list.body?.changes as { changed_count: number; files: unknown[]; change_id: string }[]) ?? []) {
      stored++;
      if (c.files.length !== c.changed_count) problems.push(`half stored: kill-${w} ${c.change_id}`);
    }
  }
  await server.stop();
  problems = problems.slice(0, 10);
  record(
    'kill -9 under load',
    problems.length === 0 && acked.length > 0,
    `${cycles} cycles, ${acked.length} acknowledged completions, ${stored} stored changes checked` +
      (acked.length === 0 ? '; no completion was acknowledged before the kills' : '') +
      (problems.length ? `; ${problems.join('; ')}` : '; integrity ok, nothing lost, nothing half stored'),
  );
}

function mountTmpfs(dir: string, size: string): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
    cleanups.unshift(() => {
      try {
        execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
      } catch {
        /* already gone */
      }
    });
    return true;
  } catch {
    return false;
  }
}

/** Fills the file system holding `dir` with one file; returns the file. */
function fillDisk(dir: string): string {
  const filler = path.join(dir, 'filler.bin');
  const fd = fs.openSync(filler, 'w');
  const block = Buffer.alloc(64 * 1024, 1);
  try {
    for (let i = 0; i < 1_000_000; i++) fs.writeSync(fd, block);
  } catch {
    /* ENOSPC: full */
  }
  // Top off the last few bytes too.
  for (const size of [4096, 512, 64, 1]) {
    try {
      for (let i = 0; i < 64; i++) fs.writeSync(fd, Buffer.alloc(size, 1));
    } catch {
      /* full at this size */
    }
  }
  fs.closeSync(fd);
  return filler;
}

async function diskFullRetry(): Promise<void> {
  const base = tempDir('full');
  const dbDir = path.join(base, 'db');
  fs.mkdirSync(dbDir);
  if (!mountTmpfs(dbDir, '8m')) {
    record('disk full, then retry', true, 'skipped: a small tmpfs for the database needs root and mount');
    return;
  }
  const dir = makeWorkspace(base, 'ws', true);
  const server = await startServer(path.join(dbDir, 'rundiff.db'));
  const session = 'full';
  await post(server.url, { type: 'session.upsert', session_id: session, workspace: dir });
  const started = await post(server.url, { type: 'run.started', session_id: session, run_id: 'r1' });
  // A change large enough that its rows need fresh pages, made while the disk is full.
  for (let i = 0; i < 40; i++) fs.writeFileSync(path.join(dir, `big${i}.txt`), `${'x'.repeat(60)}\n`.repeat(400));
  const filler = fillDisk(dbDir);
  const failed = await post(server.url, { type: 'run.completed', session_id: session, run_id: 'r1' });
  fs.rmSync(filler);
  const retry = await post(server.url, { type: 'run.completed', session_id: session, run_id: 'r1' });
  const whole = retry.status === 200 ? await storedWhole(server.url, session, 'r1', 40) : 'retry failed';
  await server.stop();
  const failCode = (failed.body?.error as { code?: string } | undefined)?.code ?? null;
  const ok =
    started.status === 200 &&
    failed.status >= 500 &&
    failCode !== 'no_checkpoint' &&
    retry.status === 200 &&
    retry.body?.tracking === true &&
    whole === null;
  record(
    'disk full, then retry',
    ok,
    `full: ${failed.status} ${failCode ?? JSON.stringify(failed.body)}; after space came back: ${retry.status} ` +
      `${retry.body?.tracking === true ? `${String(retry.body.changed_count)} files` : JSON.stringify(retry.body)}` +
      (whole ? `; ${whole}` : ''),
  );
}

async function renameStorm(seconds: number): Promise<void> {
  const base = tempDir('storm');
  const dir = makeWorkspace(base, 'ws', true);
  const server = await startServer(path.join(base, 'rundiff.db'));
  const session = 'storm';
  await post(server.url, { type: 'session.upsert', session_id: session, workspace: dir });
  await post(server.url, { type: 'run.started', session_id: session, run_id: 'r1' });
  // The live feed says when it stops watching this run (and checks it periodically) or goes off.
  const socket = io(server.url, { transports: ['websocket'] });
  let feedOff: string | null = null;
  socket.on('workspace.diff.progress', (p: { available: boolean; mode?: string; reason?: string }) => {
    if (!p.available) feedOff = `off: ${p.reason ?? '?'}`;
    else if (p.mode === 'poll' && feedOff === null) feedOff = `checked periodically: ${p.reason ?? '?'}`;
  });
  await socket.emitWithAck('session.subscribe', { session_id: session });
  // A separate process renames one file back and forth as fast as it can, for `seconds`.
  const storm = spawn(
    process.execPath,
    [
      '-e',
      `const fs=require('fs');const a=process.argv[1]+'/a.tmp',b=process.argv[1]+'/b.tmp';` +
        `fs.writeFileSync(a,'x');const end=Date.now()+${seconds * 1000};let n=0;` +
        `while(Date.now()<end){fs.renameSync(a,b);fs.renameSync(b,a);n+=2}process.stdout.write(String(n))`,
      dir,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let renames = '';
  storm.stdout.on('data', (c: Buffer) => (renames += c.toString()));
  const stormDone = new Promise((r) => storm.once('exit', r));
  const latencies: number[] = [];
  let healthErrors = 0;
  const deadline = performance.now() + seconds * 1000;
  while (performance.now() < deadline) {
    const t = performance.now();
    try {
      const h = await getJson(server.url, '/api/health');
      if (h.status !== 200) healthErrors++;
    } catch {
      healthErrors++;
    }
    latencies.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 50));
  }
  await stormDone;
  editWorkspace(dir, 'r1');
  let done: Answer;
  try {
    done = await post(server.url, { type: 'run.completed', session_id: session, run_id: 'r1' });
  } catch (err) {
    done = { status: 0, body: { error: String(err) } };
  }
  const whole = done.status === 200 ? await storedWhole(server.url, session, 'r1', 3) : 'completion failed';
  socket.close();
  await server.stop();
  const max = Math.max(...latencies);
  const sorted = [...latencies].sort((a, b) => a - b);
  const p50 = sorted[Math.floor(sorted.length / 2)] ?? 0;
  // a.tmp exists at the end (it is renamed back), so the run changed f0.txt, new-r1.txt and a.tmp.
  record(
    'rename storm during a run',
    healthErrors === 0 && max < 1000 && whole === null,
    `${renames || '?'} renames in ${seconds} s; /api/health p50 ${p50.toFixed(1)} ms, max ${max.toFixed(0)} ms, ` +
      `${healthErrors} errors; live feed ${feedOff ? `changed (${String(feedOff)})` : 'kept watching'}; completion ${done.status}${whole ? ` (${whole})` : ', stored whole'}`,
  );
}

async function concurrentRuns(count: number): Promise<void> {
  const base = tempDir('many');
  const dirs = Array.from({ length: count }, (_, i) => makeWorkspace(base, `ws${i}`, i % 10 === 0));
  const server = await startServer(path.join(base, 'rundiff.db'));
  const t0 = performance.now();
  const started = await Promise.all(
    dirs.map(async (dir, i) => {
      await post(server.url, { type: 'session.upsert', session_id: `many-${i}`, workspace: dir });
      return post(server.url, { type: 'run.started', session_id: `many-${i}`, run_id: 'r1' }, 120_000);
    }),
  );
  dirs.forEach((dir, i) => editWorkspace(dir, `r${i}`));
  const completed = await Promise.all(
    dirs.map((_, i) => post(server.url, { type: 'run.completed', session_id: `many-${i}`, run_id: 'r1' }, 120_000)),
  );
  const elapsed = performance.now() - t0;
  const problems: string[] = [];
  started.forEach((s, i) => {
    if (s.status !== 200 || s.body?.tracking !== true) problems.push(`start ${i}: ${s.status}`);
  });
  completed.forEach((c, i) => {
    if (c.status !== 200 || c.body?.changed_count !== 2)
      problems.push(`complete ${i}: ${c.status} ${String(c.body?.changed_count)}`);
  });
  for (let i = 0; i < count && problems.length < 10; i++) {
    const p = await storedWhole(server.url, `many-${i}`, 'r1', 2);
    if (p) problems.push(p);
  }
  await server.stop();
  record(
    `${count} concurrent runs on separate workspaces`,
    problems.length === 0,
    `${count} started and completed at once in ${(elapsed / 1000).toFixed(1)} s` +
      (problems.length ? `; ${problems.slice(0, 10).join('; ')}` : '; every one tracked and stored exactly'),
  );
}

async function hostileWorkspaces(): Promise<void> {
  const base = tempDir('hostile');
  const dir = makeWorkspace(base, 'ws', true);
  const server = await startServer(path.join(base, 'rundiff.db'));
  const answers: string[] = [];
  let ok = true;
  for (const folder of ['/proc', '/sys', '/dev']) {
    if (!fs.existsSync(folder)) continue;
    const a = await post(
      server.url,
      { type: 'run.started', session_id: 'hostile', run_id: `r${folder}`, workspace: folder },
      30_000,
    );
    answers.push(`${folder}: ${a.body?.tracking === false ? String(a.body.reason) : `${a.status} tracked`}`);
    if (a.status !== 200 || a.body?.tracking !== false) ok = false;
  }
  const normal = await oneRun(server.url, 'hostile-after', 'r1', dir);
  if (normal.status !== 200 || normal.body?.changed_count !== 2) ok = false;
  await server.stop();
  record(
    'hostile workspaces',
    ok,
    `${answers.join(', ')}; a normal run after them: ${normal.status} ${String(normal.body?.changed_count)} files`,
  );
}

/** Every file below `dir`, with its bytes, to see that nothing there changed. */
function filesOf(dir: string): string {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      const r = path.join(rel, name);
      if (fs.lstatSync(path.join(dir, r)).isDirectory()) walk(r);
      else out.push(`${r}=${fs.readFileSync(path.join(dir, r)).toString('base64')}`);
    }
  };
  walk('');
  return out.join(',');
}

const FLIP = `
const fs = require('node:fs');
const [at, target, ms] = process.argv.slice(1);
const end = Date.now() + Number(ms);
const pause = new Int32Array(new SharedArrayBuffer(4));
let n = 0;
while (Date.now() < end) {
  fs.renameSync(at, at + '.real'); fs.symlinkSync(target, at); fs.unlinkSync(at); fs.renameSync(at + '.real', at);
  n += 1;
  // Real for a millisecond between flips, so reverts also get through and write.
  Atomics.wait(pause, 0, 0, 1);
}
process.stdout.write(String(n));
`;

async function workspaceFlip(seconds: number): Promise<void> {
  const base = tempDir('flip');
  const ws = makeWorkspace(path.join(base, 'p'), 'ws', false);
  const outside = path.join(base, 'outside');
  makeWorkspace(outside, 'ws', false);
  fs.writeFileSync(path.join(outside, 'ws', 'src', 'f0.txt'), 'the run\n');
  fs.writeFileSync(path.join(outside, 'ws', 'outside.txt'), 'outside\n');
  const server = await startServer(path.join(base, 'rundiff.db'));
  const session = 'flip';
  await post(server.url, { type: 'session.upsert', session_id: session, workspace: ws });
  await post(server.url, { type: 'run.started', session_id: session, run_id: 'r1' });
  fs.writeFileSync(path.join(ws, 'src', 'f0.txt'), 'the run\n');
  await post(server.url, { type: 'run.completed', session_id: session, run_id: 'r1' });
  const outsideBefore = filesOf(outside);
  // Held open: the run's end is put back between reverts wherever the folder is at that moment.
  const wsFd = fs.openSync(ws, 'r');
  const flipper = spawn(process.execPath, ['-e', FLIP, path.join(base, 'p'), outside, String(seconds * 1000)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let flips = '';
  flipper.stdout.on('data', (d: Buffer) => (flips += d.toString()));
  const flipped = new Promise<void>((resolve) => flipper.on('exit', () => resolve()));
  let running = true;
  void flipped.then(() => (running = false));
  const statuses: Record<string, number> = {};
  let reverts = 0;
  let applied = 0;
  let seenOutside = 0;
  const route = `/api/hermes/sessions/${session}/workspace-run-changes/run%3Ar1/revert`;
  while (running && reverts < 5000) {
    fs.writeFileSync(`/proc/self/fd/${wsFd}/src/f0.txt`, 'the run\n');
    const res = await fetch(new URL(route, server.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
      signal: AbortSignal.timeout(60_000),
    });
    const body = (await res.json().catch(() => null)) as { applied_count?: number } | null;
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    if (res.status === 200 && body?.applied_count === 1) applied++;
    reverts++;
    // Positive control: the outside folder is seen through the workspace's path during the run.
    if (fs.existsSync(path.join(ws, 'outside.txt'))) seenOutside++;
  }
  await flipped;
  fs.closeSync(wsFd);
  await server.stop();
  const untouched = filesOf(outside) === outsideBefore;
  const no500 = Object.keys(statuses).every((s) => ['200', '404', '409'].includes(s));
  record(
    'workspace flipped during reverts',
    untouched && no500 && applied > 0 && seenOutside > 0,
    `${reverts} reverts over ${flips || '?'} flips in ${seconds} s: ${Object.entries(statuses)
      .map(([s, n]) => `${n} x ${s}`)
      .join(
        ', ',
      )}; ${applied} wrote the workspace; the outside folder seen through its path ${seenOutside} times and ${untouched ? 'untouched' : 'CHANGED'}`,
  );
}

/**
 * Flips a folder that is re-created under it: the hook client makes its data folder when it finds
 * none, so a flip finding a new folder at the name takes that one away and goes on.
 */
const STATE_FLIP = `
const fs = require('node:fs');
const [at, target, ms] = process.argv.slice(1);
const end = Date.now() + Number(ms);
const pause = new Int32Array(new SharedArrayBuffer(4));
let n = 0;
let strays = 0;
// Whatever the client made at the name meanwhile is moved aside, and the real folder put back.
const restore = () => {
  if (!fs.existsSync(at + '.real')) return;
  try { fs.renameSync(at, at + '.stray' + ++strays); } catch {}
  fs.renameSync(at + '.real', at);
};
while (Date.now() < end) {
  try {
    fs.renameSync(at, at + '.real');
    fs.symlinkSync(target, at);
    fs.unlinkSync(at);
    fs.renameSync(at + '.real', at);
    n += 1;
  } catch {
    restore();
  }
  Atomics.wait(pause, 0, 0, 1);
}
process.stdout.write(String(n));
`;

/**
 * The hook client's own state steps (`bin/hook-state.js`, in the client's order: the folder's
 * check, the start lock, the log, the pid file), looped for `ms` against a data folder; prints
 * how many rounds wrote and how many were refused.
 */
const STATE_STEPS = `
const fs = require('node:fs');
const [module, dir, ms] = process.argv.slice(1);
import(module).then((s) => {
  const end = Date.now() + Number(ms);
  let wrote = 0;
  let refused = 0;
  while (Date.now() < end) {
    try {
      const state = s.openStateDir(dir);
      if (state instanceof Error) { refused++; continue; }
      try {
        s.takeStartLock(state);
        const log = s.openLog(state);
        fs.writeSync(log.fd, 'hook\\n');
        fs.closeSync(log.fd);
        s.writePidFile(state, 4242);
        s.releaseStartLock(state);
        wrote++;
        // The positive control: the same write by the folder's name, as the client did before.
        try { fs.appendFileSync(dir + '/byname.log', 'x'); } catch {}
      } finally {
        state.close();
      }
    } catch {
      refused++;
    }
  }
  process.stdout.write(JSON.stringify({ wrote, refused }));
});
`;

/**
 * The hook client's data folder flipped between itself and a symlink to a folder outside while the
 * client's state steps run: what was checked is what is written, so nothing lands outside. The
 * positive controls: some rounds wrote (the folder was real at their check), and a write by the
 * folder's name after the same check (what the client did before) landed outside.
 */
async function hookStateFlip(seconds: number): Promise<void> {
  const base = tempDir('hookstate');
  const parent = path.join(base, 'data');
  const dir = path.join(parent, 'rundiff');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.mkdirSync(outside, { mode: 0o700 });
  fs.writeFileSync(path.join(outside, 'keep.txt'), 'outside\n');
  const outsideBefore = filesOf(outside);
  const ms = String(seconds * 1000);
  const flipper = spawn(process.execPath, ['-e', STATE_FLIP, dir, outside, ms], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const steps = spawn(process.execPath, ['-e', STATE_STEPS, path.join(repoRoot, 'bin', 'hook-state.js'), dir, ms], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let flips = '';
  let counts = '';
  flipper.stdout.on('data', (d: Buffer) => (flips += d.toString()));
  steps.stdout.on('data', (d: Buffer) => (counts += d.toString()));
  await Promise.all([new Promise((r) => flipper.on('exit', r)), new Promise((r) => steps.on('exit', r))]);
  const { wrote, refused } = JSON.parse(counts || '{"wrote":0,"refused":0}') as { wrote: number; refused: number };
  const byName = path.join(outside, 'byname.log');
  const landedOutside = fs.existsSync(byName) ? fs.statSync(byName).size : 0;
  fs.rmSync(byName, { force: true });
  const untouched = filesOf(outside) === outsideBefore;
  record(
    'hook data folder flipped',
    untouched && wrote > 0 && landedOutside > 0,
    `${wrote + refused} rounds of the hook's state steps over ${flips || '?'} flips in ${seconds} s: ${wrote} wrote, ${refused} refused; the outside folder ${untouched ? 'untouched' : 'CHANGED'}, where ${landedOutside} writes by the folder's name landed`,
  );
}

/**
 * `rundiff hooks install` inside a hostile repository: every pid's old temp name
 * (`.claude/settings.json.rundiff-<pid>.tmp`) planted as a link to a file outside, and
 * `.gemini/settings.json` a link to a credential file outside. The install must leave both outside
 * files byte for byte, write a regular `.claude/settings.json`, refuse the Gemini link naming its
 * target, and leave no temp file.
 */
async function plantedTempNames(): Promise<void> {
  const base = tempDir('planted');
  const ws = path.join(base, 'project');
  const home = path.join(base, 'home');
  const outside = path.join(base, 'outside');
  for (const d of [path.join(ws, '.claude'), path.join(ws, '.gemini'), home, outside])
    fs.mkdirSync(d, { recursive: true });
  const victim = path.join(outside, 'victim.txt');
  const secret = path.join(outside, 'config.json');
  fs.writeFileSync(victim, 'untouched\n');
  fs.writeFileSync(secret, '{"auths":{"registry.example":{"auth":"c2VjcmV0"}}}\n');
  const pidMax = Math.min(Number(fs.readFileSync('/proc/sys/kernel/pid_max', 'utf8')) || 32_768, 65_536);
  for (let pid = 1; pid <= pidMax; pid++)
    fs.symlinkSync(victim, path.join(ws, '.claude', `settings.json.rundiff-${pid}.tmp`));
  fs.symlinkSync(secret, path.join(ws, '.gemini', 'settings.json'));
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, XDG_DATA_HOME: path.join(base, 'data') };
  const hooks = (agent: string) => {
    try {
      execFileSync(process.execPath, [cli, 'hooks', 'install', agent, '--workspace', ws], {
        env,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 60_000,
      });
      return { code: 0, stderr: '' };
    } catch (err) {
      const e = err as { status?: number | null; stderr?: string };
      return { code: e.status ?? -1, stderr: e.stderr ?? '' };
    }
  };
  const claude = hooks('claude-code');
  const gemini = hooks('gemini');
  const settings = path.join(ws, '.claude', 'settings.json');
  const problems: string[] = [];
  if (claude.code !== 0) problems.push(`claude-code install failed: ${claude.stderr.trim()}`);
  if (fs.readFileSync(victim, 'utf8') !== 'untouched\n') problems.push('the planted temp name was written through');
  if (!fs.lstatSync(settings).isFile()) problems.push('.claude/settings.json is not a regular file');
  if (fs.readdirSync(path.join(ws, '.claude')).length !== pidMax + 1) problems.push('a temp file was left behind');
  if (gemini.code === 0 || !gemini.stderr.includes(secret))
    problems.push('the Gemini link out of the project was not refused naming its target');
  if (fs.readFileSync(secret, 'utf8') !== '{"auths":{"registry.example":{"auth":"c2VjcmV0"}}}\n')
    problems.push('the linked credential file changed');
  if (!fs.lstatSync(path.join(ws, '.gemini', 'settings.json')).isSymbolicLink())
    problems.push('the Gemini link was replaced');
  record(
    'planted temp names',
    problems.length === 0,
    problems.length
      ? problems.join('; ')
      : `${pidMax} planted temp links untouched, settings written as a regular file; the Gemini link refused, its target unchanged`,
  );
}

/** Bodies nested far deeper than the bound, on every JSON route family; the server must live on. */
async function deepBodies(): Promise<void> {
  const base = tempDir('deep');
  const dir = makeWorkspace(base, 'ws', true);
  const edgeToken = 'chaos-edge-token-0123456789abcdef';
  const server = await startServer(path.join(base, 'rundiff.db'), { RUNDIFF_EDGE_TOKENS: `chaos=${edgeToken}` });
  const routes: [string, Record<string, string>][] = [
    ['/api/bridge/events', {}],
    ['/api/hooks/claude-code', {}],
    ['/api/hermes/sessions/s/workspace-run-changes/run:r/revert', {}],
    ['/api/reviews/deliver', {}],
    ['/api/edge/batches', { authorization: `Bearer ${edgeToken}` }],
  ];
  const problems: string[] = [];
  let refused = 0;
  for (const depth of [5_000, 100_000]) {
    const body = `{"hook_event_name":"PreToolUse","x":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    for (const [route, headers] of routes) {
      const res = await fetch(new URL(route, server.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
        signal: AbortSignal.timeout(30_000),
      }).catch((err: unknown) => err as Error);
      const health = await getJson(server.url, '/api/health').catch(() => null);
      if (res instanceof Error) problems.push(`${route} at ${depth}: ${res.message}`);
      else if (res.status !== (route.startsWith('/api/hooks/') ? 200 : 400))
        problems.push(`${route} at ${depth}: ${res.status}`);
      else refused++;
      if (health?.status !== 200) problems.push(`health after ${route} at ${depth}: ${health?.status ?? 'no answer'}`);
    }
  }
  const normal = await oneRun(server.url, 'deep-after', 'r1', dir);
  if (normal.status !== 200 || normal.body?.changed_count !== 2) problems.push(`a normal run after: ${normal.status}`);
  await server.stop();
  record(
    'deep bodies',
    problems.length === 0,
    problems.length
      ? problems.slice(0, 10).join('; ')
      : `${refused} refused, the server answered after each; a normal run stored`,
  );
}

async function main(): Promise<void> {
  const only = new Set(process.argv.slice(2));
  const want = (name: string) => only.size === 0 || only.has(name);
  try {
    const checks: [string, string, () => Promise<void>][] = [
      ['hostile', 'hostile workspaces', hostileWorkspaces],
      ['planted', 'planted temp names', plantedTempNames],
      ['deep', 'deep bodies', deepBodies],
      ['kill', 'kill -9 under load', () => killUnderLoad(5)],
      ['full', 'disk full, then retry', diskFullRetry],
      ['storm', 'rename storm during a run', () => renameStorm(5)],
      ['many', '200 concurrent runs on separate workspaces', () => concurrentRuns(200)],
      ['flip', 'workspace flipped during reverts', () => workspaceFlip(5)],
      ['hookstate', 'hook data folder flipped', () => hookStateFlip(5)],
    ];
    for (const [name, title, check] of checks) {
      if (!want(name)) continue;
      try {
        await check();
      } catch (err) {
        // A check that could not finish (a request that never answered, a server that died) is a finding.
        record(title, false, `did not finish: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  } finally {
    for (const c of cleanups.reverse()) {
      try {
        c();
      } catch {
        /* best effort */
      }
    }
  }
  const lines = ['| check | found | details |', '| --- | --- | --- |'];
  for (const f of findings) lines.push(`| ${f.check} | ${f.ok ? 'ok' : 'FAULT'} | ${f.detail} |`);
  process.stdout.write(`${lines.join('\n')}\n`);
  process.exitCode = findings.every((f) => f.ok) ? 0 : 1;
}

await main();

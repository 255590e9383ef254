import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { BLOCKING_SCAN_WORKER, plantBlockingFifo, unblockFifo, waitingMarker } from '../test-support/index.ts';
import { createTempDir, createTempRepo } from '../test-support/temp-repo.ts';

// The checkout's own command on the sources (not the test run's compiled copy): two tests hand the
// server a scan worker from test-support, which only the TypeScript loader can run.
const BIN = new URL('../../bin/rundiff.js', import.meta.url).pathname;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function serve(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/nonexistent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, ended, stderr: () => stderr };
}

async function urlOf(s: ReturnType<typeof serve>): Promise<string> {
  let url: string | undefined;
  await vi.waitFor(
    () => {
      url = /serving on (http:\/\/\S+)/.exec(s.stderr())?.[1];
      if (!url) throw new Error('not serving yet');
    },
    { timeout: 20_000, interval: 50 },
  );
  return url!;
}

describe('rundiff serve', () => {
  it('prints its URL on stderr, serves the API, and closes cleanly on SIGTERM', async () => {
    const dir = createTempDir();
    dirs.push(dir);
    const db = path.join(dir, 'sub', 'r.db');
    const s = serve(['--port', '0', '--db', db, '--max-changed-files', '7']);
    const until = Date.now() + 20_000;
    let url: string | undefined;
    while (!url && Date.now() < until) {
      url = /serving on (http:\/\/\S+)/.exec(s.stderr())?.[1];
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${url}/api/health`);
    expect(await res.json()).toMatchObject({ ok: true });
    expect(fs.existsSync(db)).toBe(true);
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });

  it("tells GET /api/agents/notices that Codex has not trusted rundiff's hooks, and stops telling once it has", async () => {
    const dir = createTempDir();
    dirs.push(dir);
    const home = path.join(dir, 'home');
    const hooksFile = path.join(home, '.codex', 'hooks.json');
    fs.mkdirSync(path.dirname(hooksFile), { recursive: true });
    // rundiff's four Codex hooks as `rundiff hooks install codex` writes them.
    const handler = {
      type: 'command',
      command: `'${process.execPath}' '/opt/r/bin/rundiff-hook.js' codex --server 'x'`,
    };
    const events = ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop'];
    fs.writeFileSync(
      hooksFile,
      JSON.stringify({ hooks: Object.fromEntries(events.map((e) => [e, [{ hooks: [handler] }]])) }),
    );
    const s = serve(['--port', '0', '--db', path.join(dir, 'r.db')], { HOME: home });
    onTestFinished(() => void s.child.kill('SIGKILL'));
    const url = await urlOf(s);
    const notices = async () =>
      ((await (await fetch(`${url}/api/agents/notices`)).json()) as { notices: unknown[] }).notices;
    expect(await notices()).toEqual([
      expect.objectContaining({ agent: 'codex', code: 'hooks_untrusted', file: hooksFile }),
    ]);
    // The person trusts the hooks while the server runs: the next answer says nothing.
    const keys = ['user_prompt_submit', 'pre_tool_use', 'post_tool_use', 'stop'].map((e) => `${hooksFile}:${e}:0:0`);
    fs.writeFileSync(
      path.join(home, '.codex', 'config.toml'),
      keys.map((k) => `[hooks.state.${JSON.stringify(k)}]\ntrusted_hash = "sha256:ab"\n`).join('\n'),
    );
    expect(await notices()).toEqual([]);
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });

  it('stops on SIGTERM while a scan is blocked in a system call, with a keep-alive connection open', async () => {
    const dir = createTempDir();
    const ws = path.join(dir, 'ws');
    fs.mkdirSync(ws);
    fs.writeFileSync(path.join(ws, 'a.txt'), 'a\n');
    const fifo = plantBlockingFifo(ws);
    const s = serve(['--port', '0', '--db', path.join(dir, 'r.db'), '--scan-timeout-ms', '600000'], {
      RUNDIFF_TEST_SCAN_WORKER: fileURLToPath(BLOCKING_SCAN_WORKER),
    });
    // Registered so that the FIFO is released and the folder removed even if the server survives.
    dirs.push(dir);
    onTestFinished(() => {
      s.child.kill('SIGKILL');
      unblockFifo(fifo);
    });
    const url = await urlOf(s);
    // A run.started whose checkpoint walk blocks: its answer never comes while the walk waits.
    const pending = fetch(`${url}/api/bridge/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', connection: 'keep-alive' },
      body: JSON.stringify({ type: 'run.started', session_id: 's', run_id: 'r', workspace: ws }),
    }).catch((err: unknown) => err);
    await vi.waitFor(() => expect(fs.existsSync(waitingMarker(fifo))).toBe(true), { timeout: 20_000, interval: 50 });
    s.child.kill('SIGTERM');
    const end = await s.ended;
    // Exited: by the signal's default action when a thread cannot be ended, else normally.
    expect(end.code === 0 || end.signal === 'SIGTERM').toBe(true);
    expect(s.stderr()).toMatch(/SIGTERM, closing/);
    await pending;
  });

  it('control: the blocked scan really holds its run.started answer back while the server runs', async () => {
    const dir = createTempDir();
    dirs.push(dir);
    const ws = path.join(dir, 'ws');
    fs.mkdirSync(ws);
    const fifo = plantBlockingFifo(ws);
    const s = serve(['--port', '0', '--db', path.join(dir, 'r.db'), '--scan-timeout-ms', '600000'], {
      RUNDIFF_TEST_SCAN_WORKER: fileURLToPath(BLOCKING_SCAN_WORKER),
    });
    onTestFinished(() => {
      s.child.kill('SIGKILL');
      unblockFifo(fifo);
    });
    const url = await urlOf(s);
    let answered = false;
    const pending = fetch(`${url}/api/bridge/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'run.started', session_id: 's', run_id: 'r', workspace: ws }),
    }).then((r) => ((answered = true), r.json()));
    await vi.waitFor(() => expect(fs.existsSync(waitingMarker(fifo))).toBe(true), { timeout: 20_000, interval: 50 });
    const health = await fetch(`${url}/api/health`);
    expect(health.ok).toBe(true);
    expect(answered).toBe(false);
    unblockFifo(fifo);
    // Released, the same request is answered (what the walk then counts depends on when the FIFO
    // and its marker were removed, so only the answer itself is checked).
    expect(await pending).toMatchObject({ tracking: true, change_id: 'run:r' });
  });

  it('refuses a non-loopback --host without RUNDIFF_TOKEN (exit 2, clear message)', async () => {
    const s = serve(['--host', '0.0.0.0', '--port', '0']);
    expect(await s.exited).toBe(2);
    expect(s.stderr()).toMatch(/refusing to listen on 0\.0\.0\.0 without a token/);
    expect(s.stderr()).toMatch(/RUNDIFF_TOKEN/);
  });

  it('says so when the port is taken (exit 1)', async () => {
    const blocker = net.createServer();
    onTestFinished(() => void blocker.close());
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as net.AddressInfo).port;
    const dir = createTempDir();
    dirs.push(dir);
    const s = serve(['--port', String(port), '--db', path.join(dir, 'r.db')]);
    expect(await s.exited).toBe(1);
    expect(s.stderr()).toMatch(new RegExp(`port ${port} on 127\\.0\\.0\\.1 is in use`));
  });

  it('rejects unknown flags with usage (exit 2) and prints help with every limit flag', async () => {
    const bad = serve(['--bogus']);
    expect(await bad.exited).toBe(2);
    expect(bad.stderr()).toMatch(/unknown option --bogus/);
    const help = spawn(process.execPath, [BIN, 'serve', '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    help.stdout.on('data', (c: Buffer) => (out += c.toString()));
    expect(await new Promise((r) => help.on('exit', r))).toBe(0);
    expect(out).toMatch(/--max-changes-per-session/);
    expect(out).toMatch(/--require-commit-approval/);
    // The edge settings, with their defaults.
    expect(out).toMatch(/RUNDIFF_UPSTREAM_RETRY_MAX_MS[\s\S]*default 30000 ms/);
    expect(out).toMatch(/RUNDIFF_EDGE_MAX_BATCH_BYTES[\s\S]*default 67108864 bytes/);
  });

  it('the git helper process ends with the server: on SIGTERM, and when the server is killed', async () => {
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
      onTestFinished(() => repo.cleanup());
      const dir = createTempDir();
      dirs.push(dir);
      const s = serve(['--port', '0', '--db', path.join(dir, 'r.db')]);
      onTestFinished(() => void s.child.kill('SIGKILL'));
      const url = await urlOf(s);
      const started = await fetch(`${url}/api/bridge/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'run.started', session_id: 's', run_id: 'r', workspace: repo.dir }),
      });
      expect(started.status).toBe(200);
      // The git workspace's checkpoint ran git, so the helper is running (the positive control).
      const helper = gitHelperOf(s.child.pid!);
      expect(helper).not.toBeNull();
      expect(alive(helper!)).toBe(true);
      s.child.kill(signal);
      await s.ended;
      await vi.waitFor(() => expect(alive(helper!)).toBe(false), { timeout: 20_000, interval: 20 });
    }
  });
});

/** The git helper among the children of `pid` (Linux /proc), or null. */
function gitHelperOf(pid: number): number | null {
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (ppid === pid && cmdline.includes('git-helper.js')) return Number(name);
    } catch {
      // exited meanwhile
    }
  }
  return null;
}

/** Exists and is not a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

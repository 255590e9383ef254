import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTempDir, createTempRepo } from '../test-support/temp-repo.ts';
import { startTestServer } from '../test-support/server-harness.ts';
import { RUNDIFF_BIN } from '../test-support/cli-process.ts';

const HOOK = fileURLToPath(new URL('../../bin/rundiff-hook.js', import.meta.url));
const BIN = RUNDIFF_BIN;
const HOOK_STATE = new URL('../../bin/hook-state.js', import.meta.url).href;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Runs the hook client as an agent does: the payload on stdin; resolves its exit code and output. */
function runHook(args: string[], stdin: string, env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [HOOK, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: 'pipe',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

/** A loopback port nothing listens on (taken, then released). */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

function tempHome() {
  const home = createTempDir('rundiff-hook-home-');
  cleanups.push(() => fs.rmSync(home, { recursive: true, force: true }));
  return { HOME: home, XDG_DATA_HOME: path.join(home, 'data') };
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Stops the server a hook started in `dir` (its pid file), if it runs. */
function stopsServerOf(dir: string) {
  cleanups.push(async () => {
    let pid: number;
    try {
      pid = Number(fs.readFileSync(path.join(dir, 'server.pid'), 'utf8'));
    } catch {
      return;
    }
    if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
    process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 200 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 50));
  });
}

/** GET with a chosen Host header (fetch cannot set one); resolves the status. */
function getWithHost(url: string, host: string, headers: Record<string, string> = {}) {
  return new Promise<number>((resolve, reject) => {
    const req = http.get(url, { headers: { host, ...headers } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
  });
}

/** The names of the variables in a process's environment (Linux), or null where /proc has none. */
function environNames(pid: number): string[] | null {
  try {
    return fs
      .readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter((e) => e !== '')
      .map((e) => e.slice(0, e.indexOf('=')));
  } catch {
    return null;
  }
}

/** A prompt event in a fresh repository, as an agent sends it. */
function promptPayload(sessionId: string) {
  const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
  cleanups.push(() => repo.cleanup());
  return JSON.stringify({
    session_id: sessionId,
    cwd: repo.dir,
    hook_event_name: 'UserPromptSubmit',
    turn_id: 't1',
    prompt: 'go',
  });
}

async function runIds(server: string, sessionId: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server}/api/hermes/sessions/codex%3A${sessionId}`, { headers });
  if (res.status !== 200) return res.status;
  return ((await res.json()) as { runs: { run_id: string }[] }).runs.map((r) => r.run_id);
}

describe('bin/rundiff-hook.js', () => {
  it('posts the payload to the running server, prints nothing and exits 0', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    cleanups.push(() => repo.cleanup());
    const payload = {
      session_id: 'c1',
      cwd: repo.dir,
      hook_event_name: 'UserPromptSubmit',
      turn_id: 't1',
      prompt: 'hi',
    };
    const out = await runHook(['codex', '--server', t.server.url], JSON.stringify(payload), tempHome());
    expect(out).toEqual({ code: 0, stdout: '', stderr: '' });
    const d = (await t.get('/api/hermes/sessions/codex%3Ac1')).body;
    expect(d.runs.map((r: { run_id: string }) => r.run_id)).toEqual(['t1']);
    expect(d.messages.map((m: { content: string }) => m.content)).toEqual(['hi']);
  });

  it("prints the server's answer exactly when it carries a pending review (Codex prompt hook), nothing otherwise", async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    cleanups.push(() => repo.cleanup());
    const env = tempHome();
    const hook = (payload: Record<string, unknown>) =>
      runHook(
        ['codex', '--server', t.server.url],
        JSON.stringify({ session_id: 'rv', cwd: repo.dir, ...payload }),
        env,
      );
    const first = await hook({ hook_event_name: 'UserPromptSubmit', turn_id: 't1', prompt: 'edit' });
    repo.write('a.txt', 'a changed\n');
    await hook({ hook_event_name: 'Stop' });
    // Positive control: nothing pending, nothing printed.
    expect(first).toEqual({ code: 0, stdout: '', stderr: '' });
    const base = '/api/hermes/sessions/codex%3Arv';
    const fileId = (await t.get(`${base}/workspace-run-changes/run%3At1/files`)).body.files[0].id as string;
    const post = (p: string, body: unknown) =>
      t.request('POST', p, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const made = await post(`${base}/comments`, {
      change_id: 'run:t1',
      file_id: fileId,
      side: 'after',
      start_line: 1,
      end_line: 1,
      body: 'Say why "changed" \\ here.',
    });
    expect(made.status).toBe(201);
    const text = (await post(`${base}/reviews`, {})).body.review.text as string;

    const next = await hook({ hook_event_name: 'UserPromptSubmit', turn_id: 't2', prompt: 'next' });
    expect(next.code).toBe(0);
    const expected = JSON.stringify({
      hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: text },
    });
    expect(next.stdout).toBe(`${expected}\n`);
  });

  it('sends RUNDIFF_TOKEN to a server that requires it', async () => {
    const t = await startTestServer({ env: { RUNDIFF_TOKEN: 'tok-123' } });
    cleanups.push(() => t.close());
    const payload = JSON.stringify({ session_id: 'c2', hook_event_name: 'SessionStart' });
    const without = await runHook(['codex', '--server', t.server.url], payload, tempHome());
    expect(without.code).toBe(0);
    expect(without.stderr).toMatch(/401/);
    const withToken = await runHook(['codex', '--server', t.server.url], payload, {
      ...tempHome(),
      RUNDIFF_TOKEN: 'tok-123',
    });
    expect(withToken).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await t.get('/api/hermes/sessions/codex%3Ac2', { authorization: 'Bearer tok-123' })).status).toBe(200);
  });

  it('with --no-autostart and no server: exits 0, prints nothing on stdout and starts nothing', async () => {
    const env = tempHome();
    const port = await freePort();
    const out = await runHook(['claude-code', '--server', `http://127.0.0.1:${port}`, '--no-autostart'], '{}', env);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe('');
    expect(out.stderr).toMatch(/ECONNREFUSED/);
    expect(fs.existsSync(path.join(env.XDG_DATA_HOME, 'rundiff', 'server.pid'))).toBe(false);
  });

  it('an agent that reads JSON on stdout gets {} even when nothing answers', async () => {
    const port = await freePort();
    const out = await runHook(['gemini', '--server', `http://127.0.0.1:${port}`, '--no-autostart'], '{}', tempHome());
    expect([out.code, out.stdout]).toEqual([0, '{}\n']);
  });

  it('with no server running, starts one in the background under the data folder and records the event', async () => {
    const env = tempHome();
    const port = await freePort();
    const dir = path.join(env.XDG_DATA_HOME, 'rundiff');
    cleanups.push(async () => {
      const pidFile = path.join(dir, 'server.pid');
      if (!fs.existsSync(pidFile)) return;
      const pid = Number(fs.readFileSync(pidFile, 'utf8'));
      if (!isAlive(pid)) return;
      process.kill(pid, 'SIGTERM');
      for (let i = 0; i < 200 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 50));
    });
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    cleanups.push(() => repo.cleanup());
    const server = `http://127.0.0.1:${port}`;
    const payload = {
      session_id: 'auto',
      cwd: repo.dir,
      hook_event_name: 'UserPromptSubmit',
      turn_id: 't1',
      prompt: 'go',
    };
    const out = await runHook(['codex', '--server', server], JSON.stringify(payload), env);
    expect([out.code, out.stdout]).toEqual([0, '']);
    expect(fs.existsSync(path.join(dir, 'server.log'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'rundiff.db'))).toBe(true);
    const res = await fetch(`${server}/api/hermes/sessions/codex%3Aauto`);
    const d = (await res.json()) as { runs: { run_id: string }[] };
    expect(d.runs.map((r) => r.run_id)).toEqual(['t1']);
    // A second event finds the server running and starts nothing more.
    const pid = fs.readFileSync(path.join(dir, 'server.pid'), 'utf8');
    const again = await runHook(
      ['codex', '--server', server],
      JSON.stringify({ ...payload, hook_event_name: 'Stop' }),
      env,
    );
    expect(again).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(fs.readFileSync(path.join(dir, 'server.pid'), 'utf8')).toBe(pid);
  });

  it("the server a hook starts takes none of the agent's RUNDIFF_* or Node settings; given to rundiff serve, they apply", async () => {
    const env = tempHome();
    const dir = path.join(env.XDG_DATA_HOME, 'rundiff');
    stopsServerOf(dir);
    const marker = path.join(env.HOME, 'preloaded');
    const preload = path.join(env.HOME, 'preload.cjs');
    fs.writeFileSync(
      preload,
      `if (process.argv.includes('serve')) require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran');\n`,
    );
    const elsewhereDb = path.join(env.HOME, 'elsewhere.db');
    const agentEnv = {
      RUNDIFF_UPSTREAM: `http://127.0.0.1:${await freePort()}`,
      RUNDIFF_UPSTREAM_TOKEN: 'u'.repeat(40),
      RUNDIFF_ALLOWED_HOSTS: 'rebound.example',
      RUNDIFF_HOST: '0.0.0.0',
      RUNDIFF_TOKEN: 'token-from-the-agent-env',
      RUNDIFF_DB: elsewhereDb,
      NODE_OPTIONS: `--require ${preload}`,
    };
    const port = await freePort();
    const server = `http://127.0.0.1:${port}`;
    const out = await runHook(['codex', '--server', server], promptPayload('env'), { ...env, ...agentEnv });
    expect([out.code, out.stdout]).toEqual([0, '']);
    // No token required (the agent's RUNDIFF_TOKEN is only sent), the Host guard knows no extra name,
    // the default database is used, nothing was preloaded, no upstream was attached.
    expect(await runIds(server, 'env')).toEqual(['t1']);
    expect(await getWithHost(`${server}/api/health`, 'rebound.example')).toBe(403);
    expect(fs.existsSync(path.join(dir, 'rundiff.db'))).toBe(true);
    expect(fs.existsSync(elsewhereDb)).toBe(false);
    expect(fs.existsSync(marker)).toBe(false);
    expect(fs.readFileSync(path.join(dir, 'server.log'), 'utf8')).not.toMatch(/attached to/);
    const names = environNames(Number(fs.readFileSync(path.join(dir, 'server.pid'), 'utf8')));
    if (names !== null) {
      expect(names).toContain('PATH');
      expect(names.filter((n) => n.startsWith('RUNDIFF_') || n.startsWith('NODE_'))).toEqual([]);
    }

    // Positive control: the same variables given to `rundiff serve` do take effect.
    const child = spawn(process.execPath, [BIN, 'serve'], {
      env: { PATH: process.env.PATH ?? '', ...env, ...agentEnv, RUNDIFF_PORT: '0' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise((r) => child.on('exit', r));
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    });
    await vi.waitFor(
      () => {
        if (!/serving on http:\/\/0\.0\.0\.0:\d+/.test(stderr) || !/attached to/.test(stderr))
          throw new Error(`not serving yet: ${stderr}`);
      },
      { timeout: 20_000, interval: 50 },
    );
    const direct = `http://127.0.0.1:${/serving on http:\/\/0\.0\.0\.0:(\d+)/.exec(stderr)![1]}`;
    // Bound to 0.0.0.0, the extra Host name is let through to the token check: refused without it.
    expect(await getWithHost(`${direct}/api/health`, 'rebound.example')).toBe(401);
    const auth = { authorization: `Bearer ${agentEnv.RUNDIFF_TOKEN}` };
    expect(await getWithHost(`${direct}/api/health`, 'rebound.example', auth)).toBe(200);
    expect(fs.existsSync(elsewhereDb)).toBe(true);
    expect(fs.readFileSync(marker, 'utf8')).toBe('ran');
  });

  const planted = [
    { name: 'server.log', how: 'symlink' },
    { name: 'server.log', how: 'hard link' },
    { name: 'server.pid', how: 'symlink' },
    { name: 'server.starting', how: 'symlink' },
  ] as const;
  it.each(planted)('a $how planted at $name is never written through: its target keeps its bytes', async (p) => {
    const env = tempHome();
    const dir = path.join(env.XDG_DATA_HOME, 'rundiff');
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    stopsServerOf(dir);
    const outside = path.join(env.HOME, 'outside.txt');
    fs.writeFileSync(outside, 'precious\n');
    // Old enough that a lock at this name would count as stale, so the client acts on it.
    const old = new Date(Date.now() - 3_600_000);
    fs.utimesSync(outside, old, old);
    if (p.how === 'symlink') fs.symlinkSync(outside, path.join(dir, p.name));
    else fs.linkSync(outside, path.join(dir, p.name));
    const server = `http://127.0.0.1:${await freePort()}`;
    const out = await runHook(['codex', '--server', server], promptPayload('planted'), env);
    expect([out.code, out.stdout]).toEqual([0, '']);
    expect(fs.readFileSync(outside, 'utf8')).toBe('precious\n');
    // Positive control: the client started the server and wrote its own log and pid file.
    expect(await runIds(server, 'planted')).toEqual(['t1']);
    const log = fs.lstatSync(path.join(dir, 'server.log'));
    expect([log.isFile(), log.nlink]).toEqual([true, 1]);
    expect(fs.readFileSync(path.join(dir, 'server.log'), 'utf8')).toMatch(/started by a hook/);
    expect(fs.lstatSync(path.join(dir, 'server.pid')).isFile()).toBe(true);
    expect(isAlive(Number(fs.readFileSync(path.join(dir, 'server.pid'), 'utf8')))).toBe(true);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a data folder that is a symlink to another folder is refused: nothing starts or is written there, the agent carries on', async () => {
    const env = tempHome();
    const dir = path.join(env.XDG_DATA_HOME, 'rundiff');
    stopsServerOf(dir);
    const other = path.join(env.HOME, 'other');
    fs.mkdirSync(other);
    fs.mkdirSync(env.XDG_DATA_HOME);
    fs.symlinkSync(other, dir);
    const server = `http://127.0.0.1:${await freePort()}`;
    const out = await runHook(['gemini', '--server', server], promptPayload('dir'), env);
    expect([out.code, out.stdout]).toEqual([0, '{}\n']);
    expect(out.stderr).toMatch(/is a symlink/);
    expect(fs.readdirSync(other)).toEqual([]);
    expect(await fetch(`${server}/api/health`).catch((err: Error) => err.cause)).toMatchObject({
      code: 'ECONNREFUSED',
    });
    // Positive control: with a real folder there, the same hook starts the server.
    fs.unlinkSync(dir);
    const again = await runHook(['codex', '--server', server], promptPayload('dir'), env);
    expect([again.code, again.stdout]).toEqual([0, '']);
    expect(await runIds(server, 'dir')).toEqual(['t1']);
  });

  for (const pin of ['proc', 'cwd'] as const)
    it(`a data folder swapped for a symlink after its check gets nothing written through the link: the opened folder keeps it (pinned by ${pin})`, async () => {
      const env = tempHome();
      const dir = path.join(env.XDG_DATA_HOME, 'rundiff');
      const moved = path.join(env.HOME, 'moved');
      const outside = path.join(env.HOME, 'outside');
      fs.mkdirSync(outside);
      // The client's own steps, in its order, paused between the folder's check and the first use.
      const script = `
      import fs from 'node:fs';
      import readline from 'node:readline';
      const s = await import(${JSON.stringify(HOOK_STATE)});
      const state = s.openStateDir(${JSON.stringify(dir)}, { pin: ${JSON.stringify(pin)} });
      if (state instanceof Error) throw state;
      process.stdout.write('checked\\n');
      await readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]().next();
      const out = [s.takeStartLock(state)];
      const log = s.openLog(state);
      fs.writeSync(log.fd, 'log line\\n');
      fs.closeSync(log.fd);
      s.writePidFile(state, 4242);
      state.close();
      process.stdout.write(JSON.stringify(out) + '\\n');
    `;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const exited = new Promise<number | null>((r) => child.on('close', r));
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (c: Buffer) => {
          stdout += c.toString();
          if (stdout.includes('checked\n')) resolve();
        });
        void exited.then(() => reject(new Error(`the client steps ended early: ${stderr}`)));
      });
      // Checked, not yet used: the folder moves away and a symlink to another folder takes its name.
      fs.renameSync(dir, moved);
      fs.symlinkSync(outside, dir);
      // Positive control: the name now leads outside, so a write by name lands there.
      expect(fs.realpathSync(dir)).toBe(fs.realpathSync(outside));
      child.stdin.end('go\n');
      expect([await exited, stderr]).toEqual([0, '']);
      expect(stdout).toBe('checked\n[true]\n');
      expect(fs.readdirSync(outside)).toEqual([]);
      expect(fs.readdirSync(moved).sort()).toEqual(['server.log', 'server.pid', 'server.starting']);
      expect(fs.readFileSync(path.join(moved, 'server.log'), 'utf8')).toBe('log line\n');
      expect(fs.readFileSync(path.join(moved, 'server.pid'), 'utf8')).toBe('4242\n');
    });
});

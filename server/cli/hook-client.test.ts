import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempDir, createTempRepo } from '../test-support/temp-repo.ts';
import { startTestServer } from '../test-support/server-harness.ts';

const HOOK = fileURLToPath(new URL('../../bin/rundiff-hook.js', import.meta.url));
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
});

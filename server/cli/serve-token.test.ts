import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { createTestDatabase } from '../test-support/postgres.ts';
import { createTempDir } from '../test-support/temp-repo.ts';
import { RUNDIFF_BIN } from '../test-support/cli-process.ts';

const BIN = RUNDIFF_BIN;
const dirs: string[] = [];
const children: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function serve(env: Record<string, string>, args: string[] = []) {
  const dir = createTempDir();
  dirs.push(dir);
  const db = path.join(dir, 'r.db');
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--db', db, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/nonexistent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  /** Resolves once stderr says the server listens, or the process has exited. */
  const listening = new Promise<void>((resolve) => {
    child.stderr.on('data', () => /serving on/.test(stderr) && resolve());
    child.on('exit', () => resolve());
  });
  return { child, exited, listening, db, stderr: () => stderr };
}

describe('rundiff serve refuses a token no client could send', () => {
  it('a whitespace-only RUNDIFF_TOKEN exits 2 with the reason', async () => {
    const s = serve({ RUNDIFF_TOKEN: '   ' });
    expect(await s.exited).toBe(2);
    expect(s.stderr()).toMatch(/RUNDIFF_TOKEN is only whitespace/);
  });

  it('a RUNDIFF_TOKEN with a space inside exits 2 naming the position', async () => {
    const s = serve({ RUNDIFF_TOKEN: 'two words' });
    expect(await s.exited).toBe(2);
    expect(s.stderr()).toMatch(/RUNDIFF_TOKEN contains whitespace at position 4/);
    expect(s.stderr()).not.toContain('two words');
  });

  it('positive control: a usable token starts the server', async () => {
    const s = serve({ RUNDIFF_TOKEN: 'tok-123' });
    await s.listening;
    const url = /serving on (http:\/\/\S+)/.exec(s.stderr())?.[1];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${url}/api/health`)).status).toBe(401);
    expect((await fetch(`${url}/api/health`, { headers: { authorization: 'Bearer tok-123' } })).status).toBe(200);
    s.child.kill('SIGTERM');
    await s.exited;
  });
});

describe('rundiff serve and the database URL', () => {
  it('--database-url naming a PostgreSQL server that cannot be reached exits 1 with the reason, the password hidden; no SQLite file is made', async () => {
    const s = serve({}, ['--database-url', 'postgres://rundiff:hunter2@127.0.0.1:1/rundiff']);
    expect(await s.exited).toBe(1);
    expect(s.stderr()).toMatch(
      /opening the PostgreSQL store at postgres:\/\/rundiff:\*\*\*@127\.0\.0\.1:1\/rundiff.*ECONNREFUSED/,
    );
    expect(s.stderr()).not.toContain('hunter2');
    expect(fs.existsSync(s.db)).toBe(false);
  });

  it('RUNDIFF_DATABASE_URL naming a PostgreSQL database serves from it and says so; no SQLite file is made', async () => {
    const db = await createTestDatabase();
    onTestFinished(() => db.drop());
    const s = serve({ RUNDIFF_DATABASE_URL: db.url });
    await s.listening;
    expect(s.stderr()).toContain(`(database ${db.url})`);
    const url = /serving on (http:\/\/\S+)/.exec(s.stderr())?.[1];
    const post = await fetch(`${url}/api/bridge/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'session.upsert', session_id: 'pg', title: 'stored in PostgreSQL' }),
    });
    expect(post.status).toBe(200);
    expect(
      ((await (await fetch(`${url}/api/hermes/sessions/pg`)).json()) as { session: { title: string } }).session.title,
    ).toBe('stored in PostgreSQL');
    expect(fs.existsSync(s.db)).toBe(false);
    s.child.kill('SIGTERM');
    await s.exited;
  });

  it('RUNDIFF_DATABASE_URL of another scheme exits 1 naming the schemes taken', async () => {
    const s = serve({ RUNDIFF_DATABASE_URL: 'mysql://h/db' });
    expect(await s.exited).toBe(1);
    expect(s.stderr()).toMatch(/must start with postgres:\/\/ or postgresql:\/\//);
  });

  it('positive control: without a URL the server starts on the SQLite file and says so', async () => {
    const s = serve({});
    await s.listening;
    expect(s.stderr()).toContain(`(database ${s.db})`);
    expect(fs.existsSync(s.db)).toBe(true);
    s.child.kill('SIGTERM');
    await s.exited;
  });
});

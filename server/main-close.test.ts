import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { resolveConfig } from './config.ts';
import http from 'node:http';
import { createCloserStack, createServer } from './main.ts';
import { createSocketServer, shareEventsThroughPostgres } from './socket/index.ts';
import { createTestDatabase, sharedPostgres, type TestDatabase } from './test-support/postgres.ts';
import { createTempDir } from './test-support/index.ts';
import { RUNDIFF_BIN } from './test-support/cli-process.ts';

/**
 * A start that fails part way closes what it had opened, and `close()` closes everything once: both
 * run the server's one stack of closers (server/main.ts).
 */

const BIN = RUNDIFF_BIN;
const TOKEN = 'edge-token-0123456789';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
// The throwaway PostgreSQL server starts once, outside the tests' own time.
beforeAll(() => sharedPostgres(), 120_000);

function tempDb(): string {
  const dir = createTempDir('rundiff-close-');
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'rundiff.db');
}

async function database(): Promise<TestDatabase & { connections(): Promise<number>; gone(): Promise<void> }> {
  const db = await createTestDatabase();
  const watcher = new pg.Client({ connectionString: db.url });
  await watcher.connect();
  cleanups.push(() => db.drop());
  cleanups.push(() => watcher.end());
  const connections = async () =>
    Number(
      (
        await watcher.query(
          'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
        )
      ).rows[0].n,
    );
  return {
    ...db,
    // The connections of this process's rundiff (the store's pool and the socket.io replicas' LISTEN).
    connections,
    // A closed connection leaves pg_stat_activity once its backend has exited, a moment after the
    // client; well before the pool's own idle timeout (10 s) would have closed a forgotten one.
    gone: () =>
      vi.waitFor(
        async () => {
          const n = await connections();
          if (n !== 0) throw new Error(`${n} connections still open`);
        },
        { timeout: 3_000, interval: 50 },
      ),
  };
}

/** True when nothing listens on `port` (it can be bound again). */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

describe('the server closes what it opened', () => {
  it('a start failing at the shipper (--upstream on a PostgreSQL store) leaves no connection, store or socket open', async () => {
    const db = await database();
    const logged: string[] = [];
    const env = { HOME: '/nonexistent', RUNDIFF_DATABASE_URL: db.url, RUNDIFF_UPSTREAM_TOKEN: TOKEN };
    const failing = resolveConfig({ port: 0, db: tempDb(), upstream: 'http://127.0.0.1:9' }, env);
    await expect(createServer(failing, { log: (m) => logged.push(m) })).rejects.toThrow(
      '--upstream needs the SQLite store',
    );
    await db.gone();
    expect(logged.filter((m) => m.includes('close failed'))).toEqual([]);

    // Positive control: the same server without --upstream holds connections while it runs.
    const server = await createServer(resolveConfig({ port: 0, db: tempDb() }, env), { log: (m) => logged.push(m) });
    expect(await db.connections()).toBeGreaterThan(0);
    await server.close();
    await db.gone();
  });

  it('the serve command whose start fails at the shipper exits by itself, with the reason (nothing holds the process)', async () => {
    const db = await database();
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--upstream', 'http://127.0.0.1:9'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: createTempDir('rundiff-close-home-'),
        RUNDIFF_DATABASE_URL: db.url,
        RUNDIFF_UPSTREAM_TOKEN: TOKEN,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    cleanups.push(() => void child.kill('SIGKILL'));
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // A deadline, not a signal: a process some handle keeps alive would never exit.
    let deadline: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      exit,
      new Promise<'still running'>((resolve) => (deadline = setTimeout(() => resolve('still running'), 20_000))),
    ]);
    clearTimeout(deadline);
    expect(code, stderr).toBe(1);
    expect(stderr).toContain('--upstream needs the SQLite store');
    await db.gone();
  }, 40_000);

  it('a start failing after the store, engine and socket opened (SQLite) closes the database file', async () => {
    const dbPath = tempDb();
    const wal = `${dbPath}-wal`;
    const config = resolveConfig({ port: 0, db: dbPath }, { HOME: '/nonexistent' });
    await expect(
      createServer(config, {
        log: () => undefined,
        toolsRouter: () => {
          // The store is open (its write-ahead log exists) when the last part before listen fails.
          expect(fs.existsSync(wal)).toBe(true);
          throw new Error('tools router failed');
        },
      }),
    ).rejects.toThrow('tools router failed');
    // SQLite removes the write-ahead log when the last connection to the file closes.
    expect(fs.existsSync(wal)).toBe(false);

    // Positive control: a server that started keeps the file open until close().
    const server = await createServer(config, { log: () => undefined });
    expect(fs.existsSync(wal)).toBe(true);
    await server.close();
    expect(fs.existsSync(wal)).toBe(false);
  });

  it('close() closes everything once: the port is free, the database closed, a second close is the same close', async () => {
    const dbPath = tempDb();
    const logged: string[] = [];
    const server = await createServer(resolveConfig({ port: 0, db: dbPath }, { HOME: '/nonexistent' }), {
      log: (m) => logged.push(m),
    });
    expect(await portIsFree(server.port)).toBe(false);
    const first = server.close();
    const second = server.close();
    expect(second).toBe(first);
    await first;
    expect(await portIsFree(server.port)).toBe(true);
    expect(fs.existsSync(`${dbPath}-wal`)).toBe(false);
    await server.close();
    expect(logged.filter((m) => m.includes('close failed'))).toEqual([]);
  });

  it('replicas closed while their listener is still connecting give its connection back (a start failing right after them)', async () => {
    const db = await database();
    const httpServer = http.createServer();
    const socket = createSocketServer(httpServer, {
      bindHost: '127.0.0.1',
      allowedHosts: [],
      token: null,
      port: () => 0,
    });
    const replicas = await shareEventsThroughPostgres(socket.io, db.url, () => undefined);
    // At once, as a start failing on the next step closes them: the LISTEN connection is not set up yet.
    await socket.close();
    await replicas.close();
    await db.gone();

    // Positive control: replicas left running hold their LISTEN connection.
    const other = createSocketServer(http.createServer(), {
      bindHost: '127.0.0.1',
      allowedHosts: [],
      token: null,
      port: () => 0,
    });
    const running = await shareEventsThroughPostgres(other.io, db.url, () => undefined);
    await vi.waitFor(
      async () => {
        if ((await db.connections()) === 0) throw new Error('no LISTEN connection yet');
      },
      { timeout: 10_000, interval: 50 },
    );
    await other.close();
    await running.close();
    await db.gone();
  });

  it('the closer stack: last opened closes first, each once, and a failing close does not skip the rest', async () => {
    const logged: string[] = [];
    const stack = createCloserStack((m) => logged.push(m));
    const closed: string[] = [];
    stack.push('store', () => void closed.push('store'));
    stack.push('socket', () => {
      closed.push('socket');
      throw new Error('socket would not close');
    });
    stack.push('engine', async () => {
      await Promise.resolve();
      closed.push('engine');
    });
    const first = stack.close();
    expect(stack.close()).toBe(first);
    await expect(first).rejects.toThrow('closing failed: socket: socket would not close');
    expect(closed).toEqual(['engine', 'socket', 'store']);
    expect(logged).toEqual(['socket close failed: socket would not close']);
    await expect(stack.close()).rejects.toThrow('socket would not close');
    expect(closed).toEqual(['engine', 'socket', 'store']);
    // Positive control: a stack whose closes all succeed resolves.
    const clean = createCloserStack(() => undefined);
    clean.push('store', () => undefined);
    await expect(clean.close()).resolves.toBeUndefined();
  });
});

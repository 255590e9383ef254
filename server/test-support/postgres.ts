import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

/**
 * A real, throwaway PostgreSQL server for tests: `initdb` into a temp folder, the server on a free
 * port of 127.0.0.1 (its unix socket in the same folder, so nothing outside it is touched), fsync
 * off (the data is thrown away). PostgreSQL refuses to run as root, so as root it runs as the
 * `postgres` user through `runuser` with the folder given to that user.
 *
 * A start (initdb + first connection) takes about 1.5 s on a two-core machine, so a test run shares
 * one server (`sharedPostgres`, started by the run's global setup `postgres-run.ts`) and each test
 * file or suite takes its own database from it (`createTestDatabase`). The server and its folder are removed at stop, and at process exit when a
 * test forgot (or failed before) stopping it.
 */
export interface TestPostgres {
  /** The folder holding the data directory, the socket and the log. */
  dir: string;
  port: number;
  /** A URL for `database` (default `postgres`) as the superuser, over TCP on 127.0.0.1. */
  url(database?: string): string;
  /** The server's process id (from postmaster.pid). */
  pid: number;
  stop(): Promise<void>;
}

/** Where Debian installs the server programs; `RUNDIFF_PG_BIN` overrides it. */
export function postgresBinDir(): string {
  if (process.env.RUNDIFF_PG_BIN) return process.env.RUNDIFF_PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0)
    throw new Error('PostgreSQL server programs not found: install Debian\'s "postgresql" or set RUNDIFF_PG_BIN');
  return path.join(root, versions[0]!, 'bin');
}

const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

/** The command line for a server program: as root through runuser, else as is. */
function asServerUser(bin: string, args: string[]): [string, string[]] {
  return isRoot() ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const running = new Set<{ stopSync(): void }>();
let exitHooked = false;

function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  const stopAll = () => {
    for (const r of [...running]) r.stopSync();
  };
  process.once('exit', stopAll);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      stopAll();
      process.kill(process.pid, signal);
    });
  }
}

async function waitReady(url: string, logFile: string, exited: () => string | null): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const gone = exited();
    if (gone !== null) throw new Error(`PostgreSQL exited (${gone}) while starting:\n${readLog(logFile)}`);
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('select 1');
      return;
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(`PostgreSQL did not accept connections within 30 s: ${String(err)}\n${readLog(logFile)}`);
      // The server is still starting: poll its socket again shortly (the signal we wait on is a
      // successful connection, which no event announces).
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      await client.end().catch(() => {});
    }
  }
}

function readLog(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').slice(-4000);
  } catch {
    return '(no log)';
  }
}

export interface StartPostgresOptions {
  /**
   * Keep fsync on (commits still do not wait for the disk: synchronous_commit off, as SQLite's WAL
   * with synchronous NORMAL). Off by default: test data is thrown away. The bench turns it on so the
   * engines are compared on like terms.
   */
  fsync?: boolean;
}

/** Starts a new server in a new temp folder. */
export async function startPostgres(opts: StartPostgresOptions = {}): Promise<TestPostgres> {
  const bin = postgresBinDir();
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-pg-')));
  const dataDir = path.join(dir, 'data');
  const logFile = path.join(dir, 'server.log');
  const removeDir = () => fs.rmSync(dir, { recursive: true, force: true });
  try {
    if (isRoot()) {
      // Only the server user may read its data folder; the temp folder itself must be reachable.
      fs.chmodSync(dir, 0o755);
      execFileSync('chown', ['postgres:postgres', dir]);
    }
    const [initCmd, initArgs] = asServerUser(path.join(bin, 'initdb'), [
      '-D',
      dataDir,
      '-U',
      'postgres',
      '--auth=trust',
      '--encoding=UTF8',
      '--locale=C',
      '--no-sync',
    ]);
    execFileSync(initCmd, initArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    removeDir();
    throw err;
  }

  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const [cmd, args] = asServerUser(path.join(bin, 'postgres'), [
      '-D',
      dataDir,
      '-p',
      String(port),
      '-h',
      '127.0.0.1',
      '-k',
      dir,
      '-c',
      `fsync=${opts.fsync ? 'on' : 'off'}`,
      '-c',
      'synchronous_commit=off',
      '-c',
      `full_page_writes=${opts.fsync ? 'on' : 'off'}`,
      '-c',
      'max_connections=200',
      '-c',
      `logging_collector=off`,
    ]);
    const log = fs.openSync(logFile, 'a');
    const child = spawn(cmd, args, { stdio: ['ignore', log, log], detached: false });
    fs.closeSync(log);
    let exitedWith: string | null = null;
    child.once('exit', (code, signal) => {
      exitedWith = signal ?? String(code);
    });
    const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
    const pidOf = (): number | null => {
      try {
        return Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      } catch {
        return null;
      }
    };
    const killSync = () => {
      running.delete(handle);
      // Immediate shutdown, waited for, so the folder can go afterwards.
      const [c, a] = asServerUser(path.join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
      if (pidOf() !== null) spawnSync(c, a, { stdio: 'ignore' });
    };
    const stopSync = () => {
      killSync();
      removeDir();
    };
    const handle = { stopSync };
    running.add(handle);
    hookExit();
    try {
      await waitReady(url(), logFile, () => exitedWith);
    } catch (err) {
      killSync();
      // Another process took the port between our probe and the server's bind: try another.
      if (attempt < 3 && /could not bind|Address already in use/i.test(String(err))) continue;
      removeDir();
      throw err;
    }
    const pid = pidOf() ?? child.pid ?? -1;
    return {
      dir,
      port,
      url,
      pid,
      stop: async () => {
        if (!running.has(handle)) return;
        running.delete(handle);
        const [c, a] = asServerUser(path.join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
        await new Promise<void>((resolve) => {
          const p = spawn(c, a, { stdio: 'ignore' });
          p.once('exit', () => resolve());
          p.once('error', () => resolve());
        });
        if (exitedWith === null) await new Promise((r) => child.once('exit', r));
        removeDir();
      },
    };
  }
}

/**
 * Set by the test run's global setup (`postgres-run.ts`): the unix socket where a test process
 * asks for the run's one server.
 */
export const POSTGRES_RUN_ENV = 'RUNDIFF_TEST_POSTGRES_RUN';

/** What a test process learns of the run's server. */
export interface RunPostgres {
  dir: string;
  port: number;
  pid: number;
}

/** The run's server, started by the runner on the first request; the runner stops it, not `stop()`. */
function runPostgres(socketPath: string): Promise<TestPostgres> {
  return new Promise<RunPostgres>((resolve, reject) => {
    const req = http.get({ socketPath, path: '/' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        if (res.statusCode === 200) resolve(JSON.parse(body) as RunPostgres);
        else reject(new Error(`the test run's PostgreSQL did not start: ${body}`));
      });
      res.on('error', reject);
    });
    req.on('error', reject);
  }).then(({ dir, port, pid }) => ({
    dir,
    port,
    pid,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    stop: () => Promise.resolve(),
  }));
}

/** The run leaves PostgreSQL out (`RUNDIFF_TEST_POSTGRES=off`, set by `npm run test:quick`). */
export function postgresOff(): boolean {
  return process.env.RUNDIFF_TEST_POSTGRES === 'off';
}

let shared: Promise<TestPostgres> | null = null;

/**
 * One server per test run when the run's global setup offers it, else one per test process; either
 * is started on first use and removed when the run (or the process) ends.
 */
export function sharedPostgres(): Promise<TestPostgres> {
  if (postgresOff())
    return Promise.reject(new Error('this test needs PostgreSQL, which RUNDIFF_TEST_POSTGRES=off leaves out'));
  const run = process.env[POSTGRES_RUN_ENV];
  shared ??= (run ? runPostgres(run) : startPostgres()).catch((err: unknown) => {
    shared = null;
    throw err;
  });
  return shared;
}

/** Stops the shared server if this process started one (a benchmark ends with it; tests rely on exit). */
export async function stopSharedPostgres(): Promise<void> {
  const started = shared;
  shared = null;
  if (started) await (await started.catch(() => null))?.stop();
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A new, empty database on the shared server; `drop()` ends its connections and removes it. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const server = await sharedPostgres();
  const name = `rundiff_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server.url() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: server.url(name),
    drop: async () => {
      const c = new pg.Client({ connectionString: server.url() });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

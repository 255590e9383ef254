/**
 * Test harness (used by the *.test.ts files only): the real server on an ephemeral port with a real
 * SQLite file in a temp folder (or a PostgreSQL database: RUNDIFF_TEST_STORE=postgres), raw HTTP requests (any Host/Origin/body), and a real socket.io client
 * recording every event it receives in order.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { io as connect, type Socket } from 'socket.io-client';
import type { Limits } from '../../shared/index.ts';
import { resolveConfig } from '../config.ts';
import { createServer, type RunningServer, type ServerOptions } from '../main.ts';
import { compiledScanWorker } from './compiled-cli.ts';
import { createTempDir } from './temp-repo.ts';
import type { StoreEngine } from '../store/types.ts';
import { createTestDatabase, type TestDatabase } from './postgres.ts';
import { registerPostgresStore } from './postgres-engine.ts';

export interface TestServerOptions extends ServerOptions {
  /** Reuse a database file (restart tests). */
  dbPath?: string;
  limits?: Partial<Limits>;
  env?: Record<string, string>;
  host?: string;
  /** The store engine; default the test run's (`testStoreEngine()`). An edge (`RUNDIFF_UPSTREAM`) needs SQLite. */
  engine?: StoreEngine;
}

export interface TestServer {
  server: RunningServer;
  dbPath: string;
  /** The PostgreSQL database the server stores in; null on SQLite (its file is `dbPath`). */
  databaseUrl: string | null;
  dir: string;
  /** POST /api/bridge/events with a JSON body; resolves with status and parsed body. */
  post(event: unknown, headers?: Record<string, string>): Promise<RawResponse>;
  get(p: string, headers?: Record<string, string>): Promise<RawResponse>;
  request(
    method: string,
    p: string,
    opts?: { headers?: Record<string, string>; body?: string | Buffer },
  ): Promise<RawResponse>;
  close(): Promise<void>;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  raw: Buffer;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/**
 * The engine the test servers store in: SQLite by default, PostgreSQL with
 * `RUNDIFF_TEST_STORE=postgres` (every API test then runs on a database of this process's throwaway
 * PostgreSQL server).
 */
export function testStoreEngine(): StoreEngine {
  const wanted = process.env.RUNDIFF_TEST_STORE ?? 'sqlite';
  if (wanted !== 'sqlite' && wanted !== 'postgres')
    throw new Error(`RUNDIFF_TEST_STORE must be sqlite or postgres, not ${JSON.stringify(wanted)}`);
  return wanted;
}

// One database per database file a test names, so a restarted server finds what it stored.
const databases = new Map<string, Promise<TestDatabase>>();
function databaseFor(dbPath: string): Promise<TestDatabase> {
  let db = databases.get(dbPath);
  if (!db) databases.set(dbPath, (db = createTestDatabase()));
  return db;
}

export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const dir = createTempDir('rundiff-server-');
  const dbPath = opts.dbPath ?? path.join(dir, 'data', 'rundiff.db');
  const env: Record<string, string> = { HOME: process.env.HOME ?? '/nonexistent', ...opts.env };
  if ((opts.engine ?? testStoreEngine()) === 'postgres' && env.RUNDIFF_DATABASE_URL === undefined)
    env.RUNDIFF_DATABASE_URL = (await databaseFor(dbPath)).url;
  const limits = Object.fromEntries(Object.entries(opts.limits ?? {}).map(([k, v]) => [k, String(v)]));
  const config = resolveConfig({ port: 0, db: dbPath, host: opts.host ?? '127.0.0.1', limits }, env);
  const scanWorkerUrl = opts.scanWorkerUrl ?? compiledScanWorker();
  const server = await createServer(config, {
    reuseScanWorkers: true,
    ...opts,
    ...(scanWorkerUrl ? { scanWorkerUrl } : {}),
    log: opts.log ?? (() => {}),
  });
  if (config.databaseUrl) registerPostgresStore(server.store, config.databaseUrl);
  const hostHeader = `127.0.0.1:${server.port}`;

  const request = (method: string, p: string, o: { headers?: Record<string, string>; body?: string | Buffer } = {}) =>
    new Promise<RawResponse>((resolve, reject) => {
      const headers: Record<string, string> = { host: hostHeader, ...o.headers };
      if (o.body !== undefined && headers['content-length'] === undefined)
        headers['content-length'] = String(Buffer.byteLength(o.body));
      const req = http.request(
        { host: '127.0.0.1', port: server.port, method, path: p, headers, setHost: false },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const raw = Buffer.concat(chunks);
            const text = raw.toString('utf8');
            let body: unknown = undefined;
            if ((res.headers['content-type'] ?? '').includes('json') && !res.headers['content-encoding'])
              body = JSON.parse(text);
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, raw, body });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      if (o.body !== undefined) req.write(o.body);
      req.end();
    });

  return {
    server,
    dbPath,
    databaseUrl: config.databaseUrl,
    dir,
    request,
    post: (event, headers = {}) =>
      request('POST', '/api/bridge/events', {
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(event),
      }),
    get: (p, headers = {}) => request('GET', p, { headers }),
    close: async () => {
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Recorded {
  event: string;
  payload: unknown;
}

export interface TestClient {
  socket: Socket;
  events: Recorded[];
  /** Emits with an acknowledgement and resolves with it. */
  ask(event: string, payload: unknown): Promise<unknown>;
  /** Resolves once `count` events named `event` have arrived (fails after `timeoutMs`). */
  waitFor(event: string, count?: number, timeoutMs?: number): Promise<Recorded[]>;
  names(): string[];
  close(): void;
}

/** A connected socket.io client; rejects with the connect_error when the handshake is refused. */
export function connectClient(
  url: string,
  opts: { token?: string; headers?: Record<string, string> } = {},
): Promise<TestClient> {
  const socket = connect(url, {
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
    ...(opts.token !== undefined ? { auth: { token: opts.token } } : {}),
    ...(opts.headers ? { extraHeaders: opts.headers } : {}),
  });
  const events: Recorded[] = [];
  socket.onAny((event: string, payload: unknown) => events.push({ event, payload }));
  const client: TestClient = {
    socket,
    events,
    ask: (event, payload) => socket.timeout(5_000).emitWithAck(event, payload),
    waitFor: async (event, count = 1, timeoutMs = 5_000) => {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const got = events.filter((e) => e.event === event);
        if (got.length >= count) return got;
        if (Date.now() > until)
          throw new Error(
            `timed out waiting for ${count} x ${event}; got ${JSON.stringify(events.map((e) => e.event))}`,
          );
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    names: () => events.map((e) => e.event),
    close: () => void socket.close(),
  };
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(client));
    socket.once('connect_error', (err) => {
      socket.close();
      reject(err);
    });
  });
}

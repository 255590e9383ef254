import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { POSTGRES_RUN_ENV, startPostgres, type RunPostgres, type TestPostgres } from './postgres.ts';

/**
 * Vitest global setup: one throwaway PostgreSQL for the whole test run instead of one per test
 * file (the files run in many processes, and a start costs 2-8 s of the two cores). The server
 * is started in the runner's process on the first request of a test process, through a unix socket
 * whose path reaches the test processes in {@link POSTGRES_RUN_ENV}; a run whose tests never ask
 * starts none. The runner stops it at the end of the run (and at its exit, as any test server).
 */

export default async function setup(): Promise<() => Promise<void>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-pg-run-'));
  const socketPath = path.join(dir, 'postgres.sock');
  let server: Promise<TestPostgres> | null = null;
  const broker = http.createServer((_req, res) => {
    server ??= startPostgres();
    server.then(
      (pg) => res.end(JSON.stringify({ dir: pg.dir, port: pg.port, pid: pg.pid } satisfies RunPostgres)),
      (err: unknown) => {
        // A failed start is answered to the asking test, and the next request tries again.
        server = null;
        res.statusCode = 500;
        res.end(err instanceof Error ? err.message : String(err));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    broker.once('error', reject);
    broker.listen(socketPath, resolve);
  });
  process.env[POSTGRES_RUN_ENV] = socketPath;
  return async () => {
    delete process.env[POSTGRES_RUN_ENV];
    await new Promise<void>((resolve) => broker.close(() => resolve()));
    const started = server;
    server = null;
    if (started) await (await started.catch(() => null))?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
}

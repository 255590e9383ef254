/**
 * The store engines side by side (`npm run bench -- engines`): the same server on SQLite (the
 * embedded default) and on PostgreSQL, measured in the same run on the same machine:
 *  1. ingest: changes stored per second through the bridge (run.started, 10 files edited,
 *     run.completed over HTTP), from `sessions` agents at once, each in its own plain folder;
 *  2. session detail under load: autocannon on a session of 200 stored changes x 50 files while a
 *     run completes in it every second: req/s, p50, p99.
 * PostgreSQL is a throwaway server from Debian's packages (fsync on, commits not waiting for the
 * disk, as SQLite's WAL with synchronous NORMAL), or the database named by
 * RUNDIFF_BENCH_DATABASE_URL (an empty database: the bench refuses one holding tables).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createRequire } from 'node:module';
import pg from 'pg';
import { resolveConfig } from '../server/config.ts';
import { createServer, type RunningServer } from '../server/main.ts';
import type { NewChange, NewFile } from '../server/store/index.ts';
import { startPostgres, type TestPostgres } from '../server/test-support/postgres.ts';
import { modifiedChange, modifiedFile } from '../server/test-support/store-fixtures.ts';

export interface EngineFigures {
  engine: 'sqlite' | 'postgres';
  ingest: { sessions: number; seconds: number; changes: number; changesPerSec: number; medianCompleteMs: number };
  detail: { requestsPerSec: number; p50Ms: number; p99Ms: number; non2xx: number; runsCompleted: number };
}

export interface StoreEnginesBenchOptions {
  /** Agents storing at once (count). Default 4. */
  sessions?: number;
  /** Ingest duration (s). Default 8. */
  ingestS?: number;
  /** autocannon duration (s). Default 8. */
  loadS?: number;
  /** autocannon connections. Default 10. */
  connections?: number;
  log?: (line: string) => void;
}

interface AutocannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
}
// autocannon ships no types; this is the part of its API used here.
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: {
  url: string;
  connections: number;
  duration: number;
  workers?: number;
  headers?: Record<string, string>;
}) => Promise<AutocannonResult>;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const FILES_PER_RUN = 10;

async function post(server: RunningServer, event: object): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.url}/api/bridge/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(event),
  });
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** A plain folder of 20 small files. */
function makeFolder(root: string, name: string): string {
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(dir, `f${i}.txt`), `file ${i}\n`.repeat(20));
  return dir;
}

/** One agent: runs back to back until `until`, each editing FILES_PER_RUN files. */
async function agent(server: RunningServer, sessionId: string, dir: string, until: number) {
  const completeMs: number[] = [];
  let changes = 0;
  for (let i = 0; performance.now() < until; i++) {
    await post(server, { type: 'run.started', session_id: sessionId, run_id: `r${i}`, workspace: dir });
    for (let f = 0; f < FILES_PER_RUN; f++) fs.appendFileSync(path.join(dir, `f${f}.txt`), `run ${i}\n`);
    const t = performance.now();
    const done = await post(server, { type: 'run.completed', session_id: sessionId, run_id: `r${i}` });
    completeMs.push(performance.now() - t);
    if (done.changed_count !== FILES_PER_RUN)
      throw new Error(`expected ${FILES_PER_RUN} changed files, got ${String(done.changed_count)}`);
    changes++;
  }
  return { changes, completeMs };
}

function syntheticChange(sessionId: string, i: number, at: number): { change: NewChange; files: NewFile[] } {
  const files = Array.from({ length: 50 }, (_, f) =>
    modifiedFile(
      `src/module-${String(f).padStart(2, '0')}/file.ts`,
      `diff --git a/src/m${f}.ts b/src/m${f}.ts\n@@ -1,3 +1,3 @@\n context\n-old ${i}\n+new ${i}\n`.repeat(8),
      8,
    ),
  );
  return modifiedChange(sessionId, `seed-${i}`, at, files, {
    workspace: '/bench',
    workspace_kind: 'filesystem',
    started_at: at - 1000,
  });
}

/** The bench writes thousands of rows: only into a database that holds nothing yet. */
async function assertEmpty(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ n: string }>("SELECT COUNT(*) AS n FROM pg_tables WHERE schemaname = 'public'");
    if (Number(rows[0]!.n) > 0)
      throw new Error('RUNDIFF_BENCH_DATABASE_URL must name an empty database (it holds tables)');
  } finally {
    await c.end();
  }
}

async function benchOne(
  engine: 'sqlite' | 'postgres',
  databaseUrl: string | null,
  opts: Required<Omit<StoreEnginesBenchOptions, 'log'>>,
  log: (line: string) => void,
): Promise<EngineFigures> {
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `rundiff-bench-${engine}-`)));
  const env: NodeJS.ProcessEnv = { HOME: os.homedir() };
  if (databaseUrl !== null) env.RUNDIFF_DATABASE_URL = databaseUrl;
  const config = resolveConfig({ port: 0, db: path.join(tmp, 'bench.db') }, env);
  const server = await createServer(config, { log: () => {} });
  try {
    // 1. Ingest from several agents at once.
    const folders = Array.from({ length: opts.sessions }, (_, i) => makeFolder(tmp, `ws${i}`));
    await Promise.all(folders.map((dir, i) => agent(server, `warm${i}`, dir, performance.now() + 500)));
    const t0 = performance.now();
    const until = t0 + opts.ingestS * 1000;
    const results = await Promise.all(folders.map((dir, i) => agent(server, `ingest${i}`, dir, until)));
    const seconds = (performance.now() - t0) / 1000;
    const changes = results.reduce((n, r) => n + r.changes, 0);
    const ingest = {
      sessions: opts.sessions,
      seconds,
      changes,
      changesPerSec: changes / seconds,
      medianCompleteMs: median(results.flatMap((r) => r.completeMs)),
    };
    log(
      `${engine}: ingest ${ingest.changesPerSec.toFixed(1)} changes/s (${changes} in ${seconds.toFixed(1)} s, ${opts.sessions} agents), run.completed median ${ingest.medianCompleteMs.toFixed(1)} ms`,
    );

    // 2. Session detail under load.
    const sessionId = 'big';
    await server.store.sessions.touch(sessionId, Date.now());
    const base = Date.now() - 200_000;
    await server.store.transaction(async (tx) => {
      for (let i = 0; i < 200; i++) {
        const { change, files } = syntheticChange(sessionId, i, base + i * 1000);
        await tx.changes.insert(change, files, config.limits.maxChangesPerSession);
      }
    });
    const detailUrl = `${server.url}/api/hermes/sessions/${sessionId}`;
    const first = (await (await fetch(detailUrl)).json()) as { changes: unknown[] };
    if (first.changes.length !== 200) throw new Error(`expected 200 changes, got ${first.changes.length}`);
    const small = makeFolder(tmp, 'bg');
    let stop = false;
    let runsCompleted = 0;
    const background = (async () => {
      for (let i = 0; !stop; i++) {
        const t = performance.now();
        await post(server, { type: 'run.started', session_id: sessionId, run_id: `bg${i}`, workspace: small });
        fs.appendFileSync(path.join(small, 'f0.txt'), `bg ${i}\n`);
        const done = await post(server, { type: 'run.completed', session_id: sessionId, run_id: `bg${i}` });
        if (done.changed_count === 1) runsCompleted++;
        await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (performance.now() - t))));
      }
    })();
    const result = await autocannon({
      url: detailUrl,
      connections: opts.connections,
      duration: opts.loadS,
      workers: 1,
      headers: { 'accept-encoding': 'gzip, deflate, br' },
    });
    stop = true;
    await background;
    const detail = {
      requestsPerSec: result.requests.average,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      non2xx: result.non2xx,
      runsCompleted,
    };
    log(
      `${engine}: session detail under load ${detail.requestsPerSec.toFixed(0)} req/s, p50 ${detail.p50Ms} ms, p99 ${detail.p99Ms} ms, non-2xx ${detail.non2xx}, runs ${runsCompleted}, load average ${os.loadavg()[0]!.toFixed(1)}`,
    );
    return { engine, ingest, detail };
  } finally {
    await server.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

export async function benchStoreEngines(opts: StoreEnginesBenchOptions = {}): Promise<EngineFigures[]> {
  const log = opts.log ?? ((l: string) => void process.stderr.write(`${l}\n`));
  const o = {
    sessions: opts.sessions ?? 4,
    ingestS: opts.ingestS ?? 8,
    loadS: opts.loadS ?? 8,
    connections: opts.connections ?? 10,
  };
  const given = process.env.RUNDIFF_BENCH_DATABASE_URL ?? null;
  let local: TestPostgres | null = null;
  try {
    let url = given;
    if (url === null) {
      const t = performance.now();
      local = await startPostgres({ fsync: true });
      log(`postgres: a throwaway server started in ${((performance.now() - t) / 1000).toFixed(1)} s`);
      url = local.url();
    } else await assertEmpty(url);
    const sqlite = await benchOne('sqlite', null, o, log);
    const postgres = await benchOne('postgres', url, o, log);
    return [sqlite, postgres];
  } finally {
    await local?.stop();
  }
}

/** The figures as markdown table rows, for docs/performance.md. */
export function storeEnginesReport(rows: EngineFigures[]): string {
  const sqlite = rows.find((r) => r.engine === 'sqlite');
  const lines = [
    '| engine | ingest through the bridge | run.completed median | session detail under load (200 x 50) |',
    '| --- | --- | --- | --- |',
  ];
  for (const r of rows) {
    const ratio =
      sqlite && r !== sqlite ? ` (${(r.ingest.changesPerSec / sqlite.ingest.changesPerSec).toFixed(2)}x SQLite)` : '';
    lines.push(
      `| ${r.engine} | ${r.ingest.changesPerSec.toFixed(1)} changes/s${ratio}, ${r.ingest.sessions} agents | ${r.ingest.medianCompleteMs.toFixed(1)} ms | ${r.detail.requestsPerSec.toFixed(0)} req/s, p50 ${r.detail.p50Ms} ms, p99 ${r.detail.p99Ms} ms, non-2xx ${r.detail.non2xx} |`,
    );
  }
  return lines.join('\n');
}

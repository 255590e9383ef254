import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { BridgeEvent } from '../../shared/index.ts';
import { httpBridgeSender } from '../bridge-client/index.ts';
import { TYPES } from '../store/sql/postgres.ts';
import { createTestDatabase } from '../test-support/postgres.ts';
import { serveProcess, type ServeProcess } from '../test-support/serve-process.ts';
import { connectClient } from '../test-support/server-harness.ts';
import { createTempDir } from '../test-support/temp-repo.ts';

/**
 * Edge to centre with real parts: `rundiff serve` processes for the edge and the centre, each on
 * its own SQLite file, runs sent through the real bridge client over a real workspace, and the
 * centre stopped and started again on the same port.
 */

const EDGE_TOKEN = 'edge-token-0123456789abcdef';
const OTHER_TOKEN = 'other-token-0123456789abcdef';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const serve = (args: string[], env: Record<string, string> = {}): Promise<ServeProcess> =>
  serveProcess(args, env, (stop) => cleanups.push(stop));

/** Where a centre keeps its history: a SQLite file, or a PostgreSQL database. */
interface CentreDb {
  args: string[];
  env: Record<string, string>;
  snapshot(): Promise<Snapshot>;
  blob(sha: string): Promise<Buffer | null>;
}

function sqliteCentre(file: string): CentreDb {
  return {
    args: ['--db', file],
    env: {},
    snapshot: async () => snapshot(file),
    blob: async (sha) => blobBytes(file, sha),
  };
}

async function postgresCentre(dir: string): Promise<CentreDb> {
  const db = await createTestDatabase();
  const pool = new pg.Pool({ connectionString: db.url, types: TYPES });
  pool.on('error', () => {});
  cleanups.push(async () => {
    await pool.end();
    await db.drop();
  });
  return {
    // The SQLite file is still named: a centre on PostgreSQL must not create or use it.
    args: ['--db', path.join(dir, 'unused.db')],
    env: { RUNDIFF_DATABASE_URL: db.url },
    snapshot: async () => {
      const out = {} as Snapshot;
      for (const [t, sql] of Object.entries(TABLES)) out[t as keyof Snapshot] = (await pool.query(sql)).rows;
      return out;
    },
    blob: async (sha) =>
      (await pool.query<{ data: Buffer }>('SELECT data FROM content_blobs WHERE sha256 = $1', [sha])).rows[0]?.data ??
      null,
  };
}

function centre(db: CentreDb, port = 0) {
  return serve(['--port', String(port), ...db.args], {
    RUNDIFF_EDGE_TOKENS: `laptop=${EDGE_TOKEN},ci=${OTHER_TOKEN}`,
    ...db.env,
  });
}

function edge(db: string, upstream: string) {
  return serve(['--port', '0', '--db', db, '--upstream', upstream], {
    RUNDIFF_UPSTREAM_TOKEN: EDGE_TOKEN,
    RUNDIFF_UPSTREAM_RETRY_MAX_MS: '400',
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers of several shapes
async function getJson(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
}

/** Waits until the edge's outbox is empty (the centre acknowledged everything). */
async function drained(edgeUrl: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const s = (await getJson(`${edgeUrl}/api/edge/status`)).body;
      if (s.pending_entries !== 0) throw new Error(`outbox holds ${s.pending_entries} (${s.last_error})`);
    },
    { timeout: 30_000, interval: 100 },
  );
}

/** One run in `ws` that writes `files`, with a message and a tool call, through the real bridge client. */
async function runOn(edgeUrl: string, sessionId: string, ws: string, files: Record<string, string>) {
  const send = httpBridgeSender(edgeUrl, null);
  const runId = randomUUID();
  const toolCallId = randomUUID();
  const events: BridgeEvent[] = [
    { type: 'session.upsert', session_id: sessionId, workspace: ws, title: `session ${sessionId.slice(0, 4)}` },
    {
      type: 'message',
      session_id: sessionId,
      role: 'user',
      content: `write ${Object.keys(files).join(', ')}`,
      run_id: runId,
    },
    { type: 'run.started', session_id: sessionId, run_id: runId, workspace: ws, source: 'run' },
    {
      type: 'tool.started',
      session_id: sessionId,
      run_id: runId,
      tool_call_id: toolCallId,
      name: 'Write',
      workspace: ws,
    },
  ];
  for (const e of events) await send(e);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(ws, name), text);
  await send({ type: 'tool.completed', session_id: sessionId, run_id: runId, tool_call_id: toolCallId });
  await send({ type: 'run.completed', session_id: sessionId, run_id: runId });
  return runId;
}

const TABLES = {
  sessions: 'SELECT id, title, workspace, created_at, updated_at FROM sessions ORDER BY id',
  messages:
    'SELECT session_id, id, role, content, run_id, tool_call_id, created_at FROM messages ORDER BY session_id, id',
  runs: `SELECT session_id, run_id, status, source, workspace, started_at, finished_at, error, change_id, tracking, reason
         FROM runs ORDER BY session_id, run_id`,
  tool_calls: `SELECT session_id, tool_call_id, run_id, name, status, started_at, finished_at, change_id, tracking
               FROM tool_calls ORDER BY session_id, tool_call_id`,
  changes: `SELECT session_id, change_id, run_id, tool_call_id, source, changed_count, added_count, modified_count,
              truncated_reasons, total_patch_bytes, created_at FROM workspace_run_changes ORDER BY session_id, change_id`,
  files: `SELECT id, session_id, change_id, ord, path, change_type, additions, deletions, patch
          FROM workspace_run_change_files ORDER BY id`,
  contents: `SELECT file_id, before_mode, before_sha256, before_reason, after_mode, after_sha256, after_reason
             FROM change_file_contents ORDER BY file_id`,
  blobs: 'SELECT sha256, size FROM content_blobs ORDER BY sha256',
  viewed: 'SELECT session_id, path, change_id, file_id, viewed_at FROM viewed_marks ORDER BY session_id, path',
} as const;
type Snapshot = Record<keyof typeof TABLES, unknown[]>;

/** Every compared table of a database, read with its own connection (the server may be running). */
function snapshot(db: string, sessions?: readonly string[]): Snapshot {
  const conn = new Database(db, { readonly: true });
  try {
    const out = {} as Snapshot;
    for (const [t, sql] of Object.entries(TABLES)) {
      const rows = conn.prepare(sql).all() as Record<string, unknown>[];
      out[t as keyof Snapshot] = sessions
        ? rows.filter((r) => !('session_id' in r) || sessions.includes(r.session_id as string))
        : rows;
    }
    return out;
  } finally {
    conn.close();
  }
}

function blobBytes(db: string, sha: string): Buffer | null {
  const conn = new Database(db, { readonly: true });
  try {
    return (
      (conn.prepare('SELECT data FROM content_blobs WHERE sha256 = ?').pluck().get(sha) as Buffer | undefined) ?? null
    );
  } finally {
    conn.close();
  }
}

/** A run's live events as a subscriber saw them: their names, a change's diff event by its kind. */
const LIFECYCLE = new Set([
  'message.created',
  'run.started',
  'tool.started',
  'workspace.diff.completed',
  'tool.completed',
  'run.completed',
  'run.failed',
]);
function lifecycle(client: { events: { event: string; payload: unknown }[] }): string[] {
  return client.events
    .filter((e) => LIFECYCLE.has(e.event))
    .map((e) =>
      e.event === 'workspace.diff.completed'
        ? `diff(${(e.payload as { change_id: string }).change_id.split(':')[0]})`
        : e.event,
    );
}
/** What the edge itself tells for `runOn` (contract section 4: a change's diff before its terminal event). */
const RUN_ON_EVENTS = [
  'message.created',
  'run.started',
  'tool.started',
  'diff(tool)',
  'tool.completed',
  'diff(run)',
  'run.completed',
];

async function watching(url: string, sessionId: string) {
  const w = await connectClient(url);
  cleanups.push(() => w.close());
  expect(await w.ask('session.subscribe', { session_id: sessionId })).toMatchObject({ ok: true });
  return w;
}

const ENGINES: [string, (dir: string) => Promise<CentreDb>][] = [
  ['SQLite', async (dir) => sqliteCentre(path.join(dir, 'centre', 'r.db'))],
  ['PostgreSQL', postgresCentre],
];

describe.each(ENGINES)('edge to a centre on %s', (_engine, centreDbIn) => {
  async function setup() {
    const dir = createTempDir('rundiff-edge-');
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const ws = path.join(dir, 'ws');
    fs.mkdirSync(ws);
    fs.writeFileSync(path.join(ws, 'kept.txt'), 'before\n');
    return { dir, ws, edgeDb: path.join(dir, 'edge', 'r.db'), centreDb: await centreDbIn(dir) };
  }

  it('sends runs, messages, tool calls, changes with their rows, patches and kept contents, and the centre tells its subscribers live', async () => {
    const { ws, edgeDb, centreDb } = await setup();
    const c = await centre(centreDb);
    const e = await edge(edgeDb, c.url);
    const watcher = await connectClient(c.url);
    cleanups.push(() => watcher.close());
    const sessionId = randomUUID();
    expect(await watcher.ask('sessions.subscribe', {})).toMatchObject({ ok: true });
    expect(await watcher.ask('session.subscribe', { session_id: sessionId })).toMatchObject({ ok: true });

    await runOn(e.url, sessionId, ws, { 'kept.txt': 'after\n', 'new.txt': 'new file\n' });
    await drained(e.url);

    const onEdge = snapshot(edgeDb);
    const onCentre = await centreDb.snapshot();
    expect(onEdge.changes).toHaveLength(2); // the run's change and the tool call's
    expect(onEdge.files.length).toBeGreaterThanOrEqual(2);
    expect(onEdge.blobs.length).toBeGreaterThanOrEqual(2);
    expect(onCentre).toEqual(onEdge);
    const anyBlob = (onEdge.blobs[0] as { sha256: string }).sha256;
    expect(await centreDb.blob(anyBlob)).toEqual(blobBytes(edgeDb, anyBlob));

    // The centre's REST serves the edge's session like one of its own.
    const detail = await getJson(`${c.url}/api/hermes/sessions/${sessionId}`);
    expect(detail.status).toBe(200);
    // The centre's subscribers saw the run as a local run's subscribers would.
    await watcher.waitFor('run.completed', 1, 10_000);
    await watcher.waitFor('workspace.diff.completed', 2, 10_000);
    await watcher.waitFor('message.created', 1, 10_000);
    expect(watcher.names()).toContain('session.updated');
  });

  it('sends contents larger than a batch in parts, to a centre that takes less than their whole', async () => {
    const { ws, edgeDb, centreDb } = await setup();
    // 12 files of 1 MiB that do not compress: about 12 MiB of contents in one change, a centre that
    // takes 8 MiB per batch, an edge that packs 4 MiB per batch.
    const c = await serve(['--port', '0', ...centreDb.args], {
      RUNDIFF_EDGE_TOKENS: `laptop=${EDGE_TOKEN}`,
      RUNDIFF_EDGE_MAX_BATCH_BYTES: String(8 * 1024 * 1024),
      ...centreDb.env,
    });
    const e = await edge(edgeDb, c.url);
    const sessionId = randomUUID();
    const files = Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [`big-${i}.bin`, randomBytes(768 * 1024).toString('base64')]),
    );
    await runOn(e.url, sessionId, ws, files);
    // The contents are written after the completion's answer; then the outbox notes them.
    await vi.waitFor(() => expect(snapshot(edgeDb).blobs.length).toBeGreaterThanOrEqual(12), {
      timeout: 20_000,
      interval: 100,
    });
    await drained(e.url);
    const onEdge = snapshot(edgeDb);
    expect(await centreDb.snapshot()).toEqual(onEdge);
    const status = (await getJson(`${e.url}/api/edge/status`)).body;
    expect(status.last_error).toBeNull();
  });

  it("tells the centre's subscribers a run's events in the edge's order (started, diff, terminal), live and after the edge was offline for the whole run", async () => {
    const { ws, edgeDb, centreDb } = await setup();
    let c = await centre(centreDb);
    const port = c.port;
    let e = await edge(edgeDb, c.url);
    const live = randomUUID();
    const onEdge = await watching(e.url, live);
    const onCentre = await watching(c.url, live);
    await runOn(e.url, live, ws, { 'kept.txt': 'after\n' });
    await drained(e.url);
    await onEdge.waitFor('run.completed', 1, 10_000);
    await onCentre.waitFor('run.completed', 1, 10_000);
    expect(lifecycle(onEdge)).toEqual(RUN_ON_EVENTS);
    expect(lifecycle(onCentre)).toEqual(lifecycle(onEdge));

    // The centre is down for the whole of a run: the run is started and finished before any of it is sent.
    await c.stop();
    const offline = randomUUID();
    const offlineOnEdge = await watching(e.url, offline);
    await runOn(e.url, offline, ws, { 'kept.txt': 'offline\n', 'b.txt': 'b\n' });
    await offlineOnEdge.waitFor('run.completed', 1, 10_000);
    expect(lifecycle(offlineOnEdge)).toEqual(RUN_ON_EVENTS);
    // The edge stops too, so the centre's subscriber is in place before anything is sent.
    await e.stop();
    c = await centre(centreDb, port);
    const offlineOnCentre = await watching(c.url, offline);
    e = await edge(edgeDb, c.url);
    await drained(e.url);
    await offlineOnCentre.waitFor('run.completed', 1, 10_000);
    expect(lifecycle(offlineOnCentre)).toEqual(RUN_ON_EVENTS);
  });

  it('keeps working while the centre is down, across an edge restart, and sends everything once when it is back', async () => {
    const { ws, edgeDb, centreDb } = await setup();
    let c = await centre(centreDb);
    const port = c.port;
    let e = await edge(edgeDb, c.url);
    const sessionId = randomUUID();
    await runOn(e.url, sessionId, ws, { 'a.txt': 'one\n' });
    await drained(e.url);

    await c.stop();
    // Offline: the edge records and serves as before.
    await runOn(e.url, sessionId, ws, { 'a.txt': 'two\n', 'b.txt': 'b\n' });
    const offline = await getJson(`${e.url}/api/hermes/sessions/${sessionId}`);
    expect(offline.status).toBe(200);
    await vi.waitFor(
      async () => {
        const s = (await getJson(`${e.url}/api/edge/status`)).body;
        expect(s.pending_entries).toBeGreaterThan(0);
        expect(s.last_error).toMatch(/unreachable/);
      },
      { timeout: 20_000, interval: 100 },
    );

    // The edge restarts while the centre is still down: the outbox survives in its database.
    await e.stop();
    e = await edge(edgeDb, c.url);
    const second = randomUUID();
    await runOn(e.url, second, ws, { 'c.txt': 'c\n' });
    expect((await getJson(`${e.url}/api/edge/status`)).body.pending_entries).toBeGreaterThan(0);

    c = await centre(centreDb, port);
    await drained(e.url);
    const onEdge = snapshot(edgeDb);
    const onCentre = await centreDb.snapshot();
    expect(onCentre).toEqual(onEdge);
    expect(onCentre.runs).toHaveLength(3);
    expect(onCentre.changes).toHaveLength(6);
    expect(new Set((onCentre.files as { id: string }[]).map((f) => f.id)).size).toBe(onCentre.files.length);
  });

  it('sends a session deletion, viewed marks and the history stored before the edge was attached', async () => {
    const { ws, edgeDb, centreDb } = await setup();
    // History first, on a server of its own.
    const alone = await serve(['--port', '0', '--db', edgeDb]);
    const early = randomUUID();
    await runOn(alone.url, early, ws, { 'early.txt': 'early\n' });
    const gone = randomUUID();
    await runOn(alone.url, gone, ws, { 'gone.txt': 'gone\n' });
    await alone.stop();

    const c = await centre(centreDb);
    const e = await edge(edgeDb, c.url);
    await drained(e.url);
    expect(await centreDb.snapshot()).toEqual(snapshot(edgeDb));
    expect((await centreDb.snapshot()).sessions).toHaveLength(2);

    const changes = (await getJson(`${e.url}/api/hermes/sessions/${early}/workspace-run-changes`)).body;
    const change = (changes.changes ?? changes)[0];
    const put = await fetch(`${e.url}/api/hermes/sessions/${early}/viewed`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ change_id: change.change_id, file_id: change.files[0].id }),
    });
    expect(put.status).toBe(200);
    const del = await fetch(`${e.url}/api/hermes/sessions/${gone}`, { method: 'DELETE' });
    expect(del.status).toBeLessThan(300);
    await drained(e.url);
    const onCentre = await centreDb.snapshot();
    expect(onCentre).toEqual(snapshot(edgeDb));
    expect(onCentre.viewed).toHaveLength(1);
    expect((onCentre.sessions as { id: string }[]).map((s) => s.id)).toEqual([early]);
  });
});

describe('an edge whose batch the centre refuses', () => {
  it("reports the centre's 413 answer (never an unreachable centre) and the setting to raise, try after try", async () => {
    const dir = createTempDir('rundiff-edge-');
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const c = await serve(['--port', '0', '--db', path.join(dir, 'centre.db')], {
      RUNDIFF_EDGE_TOKENS: `laptop=${EDGE_TOKEN}`,
      RUNDIFF_EDGE_MAX_BATCH_BYTES: '4096',
    });
    const e = await edge(path.join(dir, 'edge.db'), c.url);
    const sessionId = randomUUID();
    const send = httpBridgeSender(e.url, null);
    await send({ type: 'session.upsert', session_id: sessionId });
    // Far more than the centre reads before it answers and closes the connection.
    for (let i = 0; i < 4; i++)
      await send({ type: 'message', session_id: sessionId, role: 'user', content: 'x'.repeat(900_000) });
    const seen = new Set<string>();
    const deadline = Date.now() + 3_000;
    while (Date.now() < deadline) {
      const s = (await getJson(`${e.url}/api/edge/status`)).body;
      if (s.last_error) seen.add(s.last_error);
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(seen.size).toBeGreaterThan(0);
    for (const err of seen) expect(err).toMatch(/413/);
    for (const err of seen) expect(err).not.toMatch(/unreachable/);
  });
});

import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EdgeBatchRequest, EdgeEntry } from '../../shared/index.ts';
import { httpBridgeSender } from '../bridge-client/index.ts';
import { connectClient, startTestServer, type TestClient, type TestServer } from '../test-support/server-harness.ts';
import { countRows, selectRows } from '../test-support/store-engines.ts';
import { createTempDir } from '../test-support/temp-repo.ts';

/** The centre's batch route on a real server: who may send, what it accepts, and what a refusal leaves. */

const TOKEN = 'laptop-token-0123456789abcdef';
const CI_TOKEN = 'ci-token-0123456789abcdef0123';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function started(p: Promise<TestServer>): Promise<TestServer> {
  const s = await p;
  cleanups.push(() => s.close());
  return s;
}

const centre = (env: Record<string, string> = {}) =>
  started(startTestServer({ env: { RUNDIFF_EDGE_TOKENS: `laptop=${TOKEN},ci=${CI_TOKEN}`, ...env } }));

/** Rows per table in the centre's store, read the store engine's way (SQLite or PostgreSQL). */
async function counts(s: TestServer): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of [
    'sessions',
    'messages',
    'runs',
    'tool_calls',
    'workspace_run_changes',
    'workspace_run_change_files',
    'change_file_contents',
    'content_blobs',
    'edge_sessions',
  ])
    out[t] = await countRows(s.server.store, t);
  return out;
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A valid batch: a session with a run, a change of one added file and its kept content. */
function batch(sessionId = randomUUID()): EdgeBatchRequest {
  // Incompressible enough that the batch is a few KiB on the wire.
  const content = Buffer.from(`${randomBytes(2048).toString('hex')}\n`);
  const data = deflateSync(content);
  const fileId = randomUUID();
  const changeId = 'run:r1';
  const entries: EdgeEntry[] = [
    {
      id: 1,
      kind: 'session',
      item: sessionId,
      row: { title: 't', workspace: '/w', created_at: 1000, updated_at: 2000 },
    },
    {
      id: 2,
      kind: 'run',
      item: 'r1',
      row: {
        status: 'completed',
        source: 'run',
        workspace: '/w',
        started_at: 1000,
        finished_at: 2000,
        error: null,
        change_id: changeId,
        tracking: 1,
        reason: null,
      },
    },
    {
      id: 3,
      kind: 'change',
      item: changeId,
      row: {
        run_id: 'r1',
        tool_call_id: null,
        source: 'run',
        workspace: '/w',
        workspace_kind: 'filesystem',
        started_at: 1000,
        finished_at: 2000,
        changed_count: 1,
        added_count: 1,
        modified_count: 0,
        deleted_count: 0,
        renamed_count: 0,
        binary_count: 0,
        truncated: 0,
        truncated_reasons: '[]',
        total_patch_bytes: 10,
        overlapping: 0,
        omitted_count: 0,
        created_at: 2000,
        files: [
          {
            id: fileId,
            ord: 0,
            path: 'a.txt',
            old_path: null,
            path_base64: null,
            old_path_base64: null,
            change_type: 'added',
            additions: 50,
            deletions: 0,
            size_before: null,
            size_after: content.length,
            patch: '@@ -0,0 +1 @@\n+hello\n',
            patch_bytes: 10,
            truncated: 0,
            binary: 0,
            omitted_reason: null,
            created_at: 2000,
          },
        ],
      },
    },
    {
      id: 4,
      kind: 'contents',
      item: changeId,
      row: {
        change_id: changeId,
        rows: [
          {
            file_id: fileId,
            before_mode: null,
            before_sha256: null,
            before_reason: null,
            after_mode: '100644',
            after_sha256: sha(content),
            after_reason: null,
          },
        ],
      },
    },
  ];
  return {
    database_id: 'abcdef0123456789',
    session_id: sessionId,
    entries,
    blobs: [{ sha256: sha(content), size: content.length, codec: 'deflate', data: data.toString('base64') }],
  };
}

function send(s: TestServer, body: unknown, token: string | null = TOKEN) {
  return s.request('POST', '/api/edge/batches', {
    headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('the centre accepts edge batches', () => {
  it('applies a valid batch in one go, and the same batch again changes nothing (no duplicate rows)', async () => {
    const c = await centre();
    const b = batch();
    const first = await send(c, b);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ applied: [1, 2, 3, 4], skipped: [] });
    const after = await counts(c);
    expect(after).toMatchObject({ sessions: 1, runs: 1, workspace_run_changes: 1, content_blobs: 1, edge_sessions: 1 });
    expect((await send(c, b)).status).toBe(200);
    expect(await counts(c)).toEqual(after);
    // The kept content is the one sent, and the REST route serves the change.
    const detail = await c.get(`/api/hermes/sessions/${b.session_id}/workspace-run-changes/run:r1`);
    expect(detail.status).toBe(200);
  });

  it('refuses a missing or wrong token before reading the body, storing nothing', async () => {
    const c = await centre();
    const before = await counts(c);
    for (const token of [null, 'wrong-token-0123456789abcdef', TOKEN.slice(0, -1)]) {
      const res = await send(c, batch(), token);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    }
    expect(await counts(c)).toEqual(before);
    // Positive control: the right token stores.
    expect((await send(c, batch())).status).toBe(200);
    expect((await counts(c)).sessions).toBe(1);
  });

  it('answers 404 on a server that accepts no edges, even with a token', async () => {
    const c = await started(startTestServer());
    const res = await send(c, batch());
    expect(res.status).toBe(404);
    expect(res.body.error.hint).toMatch(/RUNDIFF_EDGE_TOKENS/);
  });

  it('refuses a malformed batch whole, naming the field, and stores nothing of it', async () => {
    const c = await centre();
    const before = await counts(c);
    const bad: [string, (b: EdgeBatchRequest) => unknown][] = [
      ['not JSON', () => '{"entries": ['],
      ['a run with an unknown status', (b) => ((b.entries[1]!.row!.status = 'exploded'), b)],
      [
        'a content whose bytes do not match its sha256',
        (b) => ((b.blobs[0]!.data = deflateSync('evil').toString('base64')), b),
      ],
      ['a session id of control characters', (b) => ((b.session_id = 'a\u0007b'), b)],
      ['entries out of order', (b) => ((b.entries[2]!.id = 1), b)],
      [
        'a file row with a position out of order',
        (b) => (((b.entries[2]!.row!.files as { ord: number }[])[0]!.ord = 3), b),
      ],
      ['a relative workspace', (b) => ((b.entries[0]!.row!.workspace = 'w'), b)],
      ['a contents entry of another change', (b) => ((b.entries[3]!.row!.change_id = 'run:other'), b)],
    ];
    for (const [what, corrupt] of bad) {
      const res = await send(c, corrupt(batch()));
      expect(res.status, what).toBe(400);
      expect(res.body.error.code, what).toBe('invalid_input');
    }
    expect(await counts(c)).toEqual(before);
  });

  it('refuses a batch over RUNDIFF_EDGE_MAX_BATCH_BYTES with 413, storing nothing', async () => {
    const c = await centre({ RUNDIFF_EDGE_MAX_BATCH_BYTES: '2048' });
    const res = await send(c, batch());
    expect(res.status).toBe(413);
    // The hint names this route's setting, not the one for the other routes' bodies.
    expect(res.body.error.hint).toMatch(/RUNDIFF_EDGE_MAX_BATCH_BYTES/);
    expect(res.body.error.hint).not.toMatch(/RUNDIFF_MAX_BODY_BYTES/);
    expect((await counts(c)).sessions).toBe(0);
    // Also when the size is found while reading (no Content-Length announced: chunked).
    const chunked = await new Promise<{ status: number; hint: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: c.server.port,
          method: 'POST',
          path: '/api/edge/batches',
          headers: {
            host: `127.0.0.1:${c.server.port}`,
            'content-type': 'application/json',
            authorization: `Bearer ${TOKEN}`,
            'transfer-encoding': 'chunked',
          },
        },
        (r) => {
          let text = '';
          r.on('data', (d: Buffer) => (text += d.toString()));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, hint: JSON.parse(text).error.hint }));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(batch()));
    });
    expect(chunked.status).toBe(413);
    expect(chunked.hint).toMatch(/RUNDIFF_EDGE_MAX_BATCH_BYTES/);
    // Positive control: a batch under the bound is accepted.
    const small = batch();
    small.entries = small.entries.slice(0, 1);
    small.blobs = [];
    expect((await send(c, small)).status).toBe(200);
  });

  it('refuses a batch referring to a content it neither holds nor was sent, naming it, with nothing stored', async () => {
    const c = await centre();
    const b = batch();
    const blob = b.blobs[0]!.sha256;
    b.blobs = [];
    const res = await send(c, b);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'missing_blobs', details: { missing_blobs: [blob] } });
    expect(await counts(c)).toMatchObject({ sessions: 0, workspace_run_changes: 0, content_blobs: 0 });
  });

  it("refuses one edge's batch for a session another edge owns (logged once), and the owner's own still goes in", async () => {
    const log: string[] = [];
    const c = await started(
      startTestServer({ env: { RUNDIFF_EDGE_TOKENS: `laptop=${TOKEN},ci=${CI_TOKEN}` }, log: (m) => log.push(m) }),
    );
    const b = batch();
    expect((await send(c, b)).status).toBe(200);
    const theirs = await send(c, b, CI_TOKEN);
    expect(theirs.status).toBe(409);
    expect(theirs.body.error.code).toBe('session_conflict');
    // The other edge retries for ever: the centre's log says it once.
    for (let i = 0; i < 5; i++) expect((await send(c, b, CI_TOKEN)).status).toBe(409);
    expect(log.filter((l) => l.includes('refused'))).toHaveLength(1);
    // A session the centre stored itself is not taken over either.
    const own = randomUUID();
    await httpBridgeSender(c.server.url, null)({ type: 'session.upsert', session_id: own });
    expect((await send(c, batch(own))).body.error.code).toBe('session_conflict');
    expect((await send(c, b)).status).toBe(200);
  });

  it('skips a batch read before one already applied: an older batch sent after a newer one changes nothing', async () => {
    const c = await centre();
    const newer = { ...batch(), read_seq: 20 };
    newer.entries[0]!.row = { ...newer.entries[0]!.row, title: 'newer title' };
    // The same session read earlier: its old title, the run still running, its content pending.
    const older: EdgeBatchRequest = {
      ...newer,
      read_seq: 10,
      blobs: [],
      entries: newer.entries.map((e) => {
        if (e.kind === 'session') return { ...e, row: { ...e.row, title: 'older title' } };
        if (e.kind === 'run') return { ...e, row: { ...e.row, status: 'running', finished_at: null } };
        if (e.kind === 'contents') {
          const row = e.row as { change_id: string; rows: Record<string, unknown>[] };
          return {
            ...e,
            row: { ...row, rows: row.rows.map((r) => ({ ...r, after_sha256: null, after_reason: 'pending' })) },
          };
        }
        return e;
      }),
    };
    const state = async () => {
      const detail = (await c.get(`/api/hermes/sessions/${newer.session_id}`)).body;
      const fileId = (newer.entries[2]!.row as { files: { id: string }[] }).files[0]!.id;
      const content = (
        await c.get(
          `/api/hermes/sessions/${newer.session_id}/workspace-run-changes/run:r1/files/${fileId}/content?side=after`,
        )
      ).body.content;
      return {
        title: detail.session.title as string,
        run: (detail.runs as { run_id: string; status: string }[]).find((r) => r.run_id === 'r1')?.status,
        after: (content.omitted_reason as string | null) ?? 'kept',
      };
    };
    // Controls: the older read applies while nothing newer is applied, and the newer one changes it.
    expect((await send(c, older)).body).toEqual({ applied: [1, 2, 3, 4], skipped: [] });
    expect(await state()).toEqual({ title: 'older title', run: 'running', after: 'not_stored' });
    expect((await send(c, newer)).body).toEqual({ applied: [1, 2, 3, 4], skipped: [] });
    const current = await state();
    expect(current).toEqual({ title: 'newer title', run: 'completed', after: 'kept' });
    // The older read arriving late is answered skipped (the edge removes it) and rolls nothing back.
    expect((await send(c, older)).body).toEqual({ applied: [], skipped: [1, 2, 3, 4] });
    expect(await state()).toEqual(current);
    // The same read sent again (a lost answer) is applied again, changing nothing.
    expect((await send(c, newer)).body).toEqual({ applied: [1, 2, 3, 4], skipped: [] });
    expect(await state()).toEqual(current);
  });

  it('gives a new session id claimed by two edges at once to one of them and answers the other 409, never 500', async () => {
    const c = await centre();
    const b = batch();
    let inFlight = 0;
    let mostInFlight = 0;
    const answers = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const token = i % 2 === 0 ? TOKEN : CI_TOKEN;
        inFlight++;
        mostInFlight = Math.max(mostInFlight, inFlight);
        const res = await send(c, b, token);
        inFlight--;
        return { edge: token === TOKEN ? 'laptop' : 'ci', status: res.status, code: res.body?.error?.code };
      }),
    );
    // The claims really ran at once: every request was sent before the first answer came.
    expect(mostInFlight).toBeGreaterThan(1);
    expect(answers.filter((a) => a.status >= 500)).toEqual([]);
    const owners = new Set(answers.filter((a) => a.status === 200).map((a) => a.edge));
    expect(owners.size).toBe(1);
    const [owner] = [...owners];
    for (const a of answers)
      expect(a).toEqual(
        a.edge === owner
          ? { edge: owner, status: 200, code: undefined }
          : { edge: a.edge, status: 409, code: 'session_conflict' },
      );
    // The owner's batches still go in; the other edge's are still refused.
    expect((await send(c, b, owner === 'laptop' ? TOKEN : CI_TOKEN)).status).toBe(200);
    expect((await send(c, b, owner === 'laptop' ? CI_TOKEN : TOKEN)).status).toBe(409);
  });
});

describe('an edge sending to a centre', () => {
  it("tells a run's terminal event after its change's diff when they come in separate batches, as the edge told them", async () => {
    const lifecycle = (w: TestClient) =>
      w.events
        .filter((e) => /^(run|tool)\.|^workspace\.diff\.completed$/.test(e.event))
        .map((e) =>
          e.event === 'workspace.diff.completed' ? `diff(${(e.payload as { change_id: string }).change_id})` : e.event,
        );
    const watch = async (url: string, sessionId: string) => {
      const w = await connectClient(url);
      cleanups.push(() => w.close());
      expect(await w.ask('session.subscribe', { session_id: sessionId })).toMatchObject({ ok: true });
      return w;
    };
    const c = await centre();
    for (const maxEntries of [1, 2, 3]) {
      const dir = createTempDir('rundiff-edge-');
      cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
      const ws = path.join(dir, 'ws');
      fs.mkdirSync(ws);
      const dbPath = path.join(dir, 'edge.db');
      const sessionId = randomUUID();
      // Recorded while the centre cannot be reached: the whole run waits in the outbox.
      const offline = await startTestServer({
        dbPath,
        // An edge keeps its outbox in SQLite, whichever engine the centre stores in.
        engine: 'sqlite',
        env: { RUNDIFF_UPSTREAM: 'http://127.0.0.1:1', RUNDIFF_UPSTREAM_TOKEN: TOKEN },
      });
      const onEdge = await watch(offline.server.url, sessionId);
      const bridge = httpBridgeSender(offline.server.url, null);
      await bridge({ type: 'session.upsert', session_id: sessionId, workspace: ws });
      await bridge({ type: 'run.started', session_id: sessionId, run_id: 'r', workspace: ws });
      await bridge({ type: 'tool.started', session_id: sessionId, run_id: 'r', tool_call_id: 't', workspace: ws });
      fs.writeFileSync(path.join(ws, 'a.txt'), 'a\n');
      await bridge({ type: 'tool.completed', session_id: sessionId, run_id: 'r', tool_call_id: 't' });
      await bridge({ type: 'run.completed', session_id: sessionId, run_id: 'r' });
      // A run that changes nothing has no change to wait for: its terminal event follows its start.
      await bridge({ type: 'run.started', session_id: sessionId, run_id: 'quiet', workspace: ws });
      await bridge({ type: 'run.completed', session_id: sessionId, run_id: 'quiet' });
      await onEdge.waitFor('run.completed', 2);
      await offline.close();

      const onCentre = await watch(c.server.url, sessionId);
      const edge = await started(
        startTestServer({
          dbPath,
          // An edge keeps its outbox in SQLite, whichever engine the centre stores in.
          engine: 'sqlite',
          env: { RUNDIFF_UPSTREAM: c.server.url, RUNDIFF_UPSTREAM_TOKEN: TOKEN },
          // Every run's terminal row and its change go in different batches.
          shipper: { idleMs: 20, minBackoffMs: 20, maxBackoffMs: 100, bounds: { maxEntries, maxBytes: 1 << 20 } },
        }),
      );
      await vi.waitFor(
        async () => {
          const s = (await edge.get('/api/edge/status')).body;
          if (s.pending_entries !== 0) throw new Error(`pending ${s.pending_entries}`);
        },
        { timeout: 20_000, interval: 20 },
      );
      await onCentre.waitFor('run.completed', 2);
      expect(lifecycle(onEdge), `${maxEntries} per batch`).toEqual([
        'run.started',
        'tool.started',
        'diff(tool:t)',
        'tool.completed',
        'diff(run:r)',
        'run.completed',
        'run.started',
        'run.completed',
      ]);
      expect(lifecycle(onCentre), `${maxEntries} per batch`).toEqual(lifecycle(onEdge));
    }
  });

  it('keeps when the centre last acknowledged a batch across an edge restart (last_sent_at)', async () => {
    const c = await centre();
    const dir = createTempDir('rundiff-edge-');
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const dbPath = path.join(dir, 'edge.db');
    const opts = {
      dbPath,
      // An edge keeps its outbox in SQLite, whichever engine the centre stores in.
      engine: 'sqlite' as const,
      env: { RUNDIFF_UPSTREAM: c.server.url, RUNDIFF_UPSTREAM_TOKEN: TOKEN },
      shipper: { idleMs: 20, minBackoffMs: 20, maxBackoffMs: 100 },
    };
    const first = await startTestServer(opts);
    await httpBridgeSender(first.server.url, null)({ type: 'session.upsert', session_id: randomUUID() });
    let sentAt = 0;
    await vi.waitFor(
      async () => {
        const s = (await first.get('/api/edge/status')).body;
        expect(s.pending_entries).toBe(0);
        expect(s.last_sent_at).toEqual(expect.any(Number));
        sentAt = s.last_sent_at;
      },
      { timeout: 20_000, interval: 20 },
    );
    await first.close();
    const again = await started(startTestServer(opts));
    expect((await again.get('/api/edge/status')).body).toMatchObject({ pending_entries: 0, last_sent_at: sentAt });
  });

  it('sends again the contents the centre lost, and holds back only a session it refuses', async () => {
    const c = await centre();
    const ws = createTempDir('rundiff-ws-');
    cleanups.push(() => fs.rmSync(ws, { recursive: true, force: true }));
    const edge = await started(
      startTestServer({
        // An edge keeps its outbox in SQLite, whichever engine the centre stores in.
        engine: 'sqlite',
        env: { RUNDIFF_UPSTREAM: c.server.url, RUNDIFF_UPSTREAM_TOKEN: TOKEN },
        // Small batches: a session's entries go over several requests, still in order.
        shipper: { idleMs: 20, minBackoffMs: 20, maxBackoffMs: 100, bounds: { maxEntries: 3, maxBytes: 1 << 20 } },
      }),
    );
    const drained = () =>
      vi.waitFor(
        async () => {
          const s = (await edge.get('/api/edge/status')).body;
          if (s.pending_entries !== 0) throw new Error(`pending ${s.pending_entries}`);
        },
        { timeout: 20_000, interval: 20 },
      );
    const bridge = httpBridgeSender(edge.server.url, null);
    const runWriting = async (sessionId: string, runId: string, text: string) => {
      await bridge({ type: 'session.upsert', session_id: sessionId, workspace: ws });
      await bridge({ type: 'run.started', session_id: sessionId, run_id: runId, workspace: ws });
      fs.writeFileSync(path.join(ws, `${runId}.txt`), text);
      await bridge({ type: 'run.completed', session_id: sessionId, run_id: runId });
    };
    // A change's contents are written just after its completion is answered: wait for the centre to
    // hold them, not only for the edge's outbox to be empty.
    const centreHolds = (n: number) =>
      vi.waitFor(async () => expect((await counts(c)).content_blobs).toBe(n), { timeout: 20_000, interval: 20 });
    const a = randomUUID();
    await runWriting(a, 'one', 'same content\n');
    await centreHolds(1);
    await drained();
    // The centre loses the content (its session deleted there); the edge believes it sent it.
    expect((await c.request('DELETE', `/api/hermes/sessions/${a}`)).status).toBeLessThan(300);
    expect((await counts(c)).content_blobs).toBe(0);
    const b = randomUUID();
    await runWriting(b, 'two', 'same content\n');
    await centreHolds(1);
    await drained();

    // A session id the centre gives to another edge: that session waits, the others go on.
    const taken = batch();
    expect((await send(c, taken, CI_TOKEN)).status).toBe(200);
    await runWriting(taken.session_id, 'three', 'x\n');
    const free = randomUUID();
    await runWriting(free, 'four', 'y\n');
    await vi.waitFor(
      async () => {
        const s = (await edge.get('/api/edge/status')).body;
        expect(s.pending_sessions).toBe(1);
        expect(s.last_error).toMatch(/session_conflict/);
      },
      { timeout: 20_000, interval: 20 },
    );
    const runsOf = async (sessionId: string) =>
      (
        await selectRows<{ run_id: string }>(c.server.store, 'SELECT run_id FROM runs WHERE session_id = ?', [
          sessionId,
        ])
      ).map((r) => r.run_id);
    expect(await runsOf(free)).toHaveLength(1);
    expect(await runsOf(taken.session_id)).toEqual(['r1']);
  });
});

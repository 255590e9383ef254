import fs from 'node:fs';
import zlib from 'node:zlib';
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { HealthResponse } from '../../shared/index.ts';
import { systemWatchLimit } from '../live/index.ts';
import { VERSION } from '../version.ts';
import { openStoreFrom } from '../store/index.ts';
import { createTempDir } from '../test-support/temp-repo.ts';
import { connectClient, startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { countRows } from '../test-support/store-engines.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
async function setup(opts: Parameters<typeof startTestServer>[0] = {}) {
  const t = await startTestServer(opts);
  cleanups.push(() => t.close());
  return t;
}
const TABLES = ['sessions', 'messages', 'runs', 'tool_calls', 'workspace_run_changes', 'workspace_run_change_files'];
const rows = async (t: TestServer) =>
  (await Promise.all(TABLES.map((table) => countRows(t.server.store, table)))).reduce((n, c) => n + c, 0);

function expectError(res: { status: number; body: unknown; text: string }, status: number, code: string) {
  expect(res.status).toBe(status);
  const body = res.body as { error: Record<string, unknown> };
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(Object.keys(body.error).every((k) => ['code', 'message', 'hint', 'details'].includes(k))).toBe(true);
  expect(res.text).not.toMatch(/\n\s+at /); // never a stack trace
}

describe('REST basics', () => {
  it('GET /api/health answers ok, the version and the content store use', async () => {
    const t = await setup();
    const res = await t.get('/api/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ok: true,
      version: VERSION,
      content_store: { bytes_used: 0, max_bytes: 1024 * 1024 * 1024, blobs: 0 },
      inotify: { watches: expect.any(Number), limit: systemWatchLimit() },
    });
  });

  it('GET /api/health counts every inotify watch the server process holds', async () => {
    const t = await setup();
    const watchesNow = async () => ((await t.get('/api/health')).body as HealthResponse).inotify!.watches;
    const before = await watchesNow();
    const dirs = [createTempDir(), createTempDir()];
    const watchers = dirs.map((d) => fs.watch(d));
    cleanups.push(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
    try {
      expect(await watchesNow()).toBe(before + 2);
    } finally {
      watchers.forEach((w) => w.close());
    }
    expect(await watchesNow()).toBe(before);
  });

  it('unknown routes, sessions, changes and files are 404 with the error shape; bad ids are 400', async () => {
    const t = await setup();
    await t.post({ type: 'session.upsert', session_id: 'a b/c:d' });
    expectError(await t.get('/api/nope'), 404, 'not_found');
    expectError(await t.get('/api/hermes/sessions/missing'), 404, 'not_found');
    expectError(await t.get('/api/hermes/sessions/missing/workspace-run-changes'), 404, 'not_found');
    expectError(await t.get('/api/hermes/sessions/a%20b%2Fc%3Ad/workspace-run-changes/run%3Ax'), 404, 'not_found');
    expectError(
      await t.get('/api/hermes/sessions/a%20b%2Fc%3Ad/workspace-run-changes/run%3Ax/files/f'),
      404,
      'not_found',
    );
    expectError(
      await t.get('/api/hermes/sessions/a%20b%2Fc%3Ad/workspace-run-changes/run%3Ax/patch'),
      404,
      'not_found',
    );
    expectError(await t.get('/api/hermes/sessions/a%20b%2Fc%3Ad/workspace-run-changes/nonsense'), 400, 'invalid_input');
    expectError(await t.get(`/api/hermes/sessions/${'x'.repeat(201)}`), 400, 'invalid_input');
    expectError(await t.get('/api/hermes/sessions/%E0%A4%A'), 400, 'invalid_input');
    expectError(await t.get('/api/hermes/sessions/bad%01id'), 400, 'invalid_input');
    // the id is decoded exactly once: "%2541" is the id "%41", not "A"
    await t.post({ type: 'session.upsert', session_id: '%41' });
    expect((await t.get('/api/hermes/sessions/%2541')).body.session.id).toBe('%41');
    expect((await t.get('/api/hermes/sessions/a%20b%2Fc%3Ad')).body.session.id).toBe('a b/c:d');
  });

  it('sessions page newest first with limit/before; limit is clamped to 200 and must be a whole number', async () => {
    let clock = 1_000;
    const t = await setup({ now: () => clock });
    for (let i = 0; i < 5; i++) {
      clock += 10;
      await t.post({ type: 'session.upsert', session_id: `s${i}`, title: `T${i}` });
    }
    const p1 = await t.get('/api/hermes/sessions?limit=2');
    expect(p1.body.sessions.map((s: { id: string }) => s.id)).toEqual(['s4', 's3']);
    expect(p1.body.next_before).toBe(1_040);
    const p2 = await t.get(`/api/hermes/sessions?limit=2&before=${p1.body.next_before}`);
    expect(p2.body.sessions.map((s: { id: string }) => s.id)).toEqual(['s2', 's1']);
    const p3 = await t.get(`/api/hermes/sessions?limit=2&before=${p2.body.next_before}`);
    expect(p3.body).toMatchObject({ next_before: null });
    expect(p3.body.sessions.map((s: { id: string }) => s.id)).toEqual(['s0']);
    expect((await t.get('/api/hermes/sessions?limit=999')).body.sessions).toHaveLength(5);
    expectError(await t.get('/api/hermes/sessions?limit=abc'), 400, 'invalid_input');
    expectError(await t.get('/api/hermes/sessions?limit=0'), 400, 'invalid_input');
    expectError(await t.get('/api/hermes/sessions?before=-1'), 400, 'invalid_input');
  });

  it('session detail pages messages: newest 500 by default, oldest first, messages_before / messages_limit', async () => {
    const t = await setup();
    for (let i = 0; i < 505; i++) {
      await t.server.store.sessions.touch('s', 1);
      await t.server.store.messages.insert({
        id: `m${i}`,
        session_id: 's',
        role: 'user',
        content: `${i}`,
        run_id: null,
        tool_call_id: null,
        created_at: 1_000 + i,
      });
    }
    const all = (await t.get('/api/hermes/sessions/s')).body.messages;
    expect(all).toHaveLength(500);
    expect(all[0].id).toBe('m5');
    expect(all[499].id).toBe('m504');
    const older = (await t.get(`/api/hermes/sessions/s?messages_before=${all[0].created_at}&messages_limit=3`)).body
      .messages;
    expect(older.map((m: { id: string }) => m.id)).toEqual(['m2', 'm3', 'm4']);
  });
});

describe('session detail caching', () => {
  it('an answer kept between requests is renewed by every write, also by another connection to the database', async () => {
    const t = await setup();
    await t.post({ type: 'message', session_id: 's', role: 'user', content: 'one' });
    expect((await t.get('/api/hermes/sessions/s')).body.messages).toHaveLength(1);
    expect((await t.get('/api/hermes/sessions/s')).body.messages).toHaveLength(1);
    await t.post({ type: 'message', session_id: 's', role: 'assistant', content: 'two' });
    expect((await t.get('/api/hermes/sessions/s')).body.messages.map((m: { content: string }) => m.content)).toEqual([
      'one',
      'two',
    ]);
    // Another process on the same database: a second SQLite connection, or a second replica.
    const other = await openStoreFrom({ dbPath: t.dbPath, databaseUrl: t.databaseUrl });
    await other.messages.insert({
      id: 'x',
      session_id: 's',
      role: 'tool',
      content: 'three',
      run_id: null,
      tool_call_id: null,
      created_at: Date.now() + 1000,
    });
    await other.close();
    expect((await t.get('/api/hermes/sessions/s')).body.messages.map((m: { content: string }) => m.content)).toEqual([
      'one',
      'two',
      'three',
    ]);
    await t.request('DELETE', '/api/hermes/sessions/s');
    expect((await t.get('/api/hermes/sessions/s')).status).toBe(404);
  });

  it('each list of a kept answer is renewed by the writes to its own rows, also by another connection', async () => {
    const t = await setup();
    const detail = async () => {
      const res = await t.request('GET', '/api/hermes/sessions/s', { headers: { 'accept-encoding': 'gzip' } });
      const plain = await t.get('/api/hermes/sessions/s');
      const body =
        res.headers['content-encoding'] === 'gzip' ? JSON.parse(zlib.gunzipSync(res.raw).toString('utf8')) : res.body;
      expect(body).toEqual(plain.body);
      const b = plain.body as {
        messages: { content: string }[];
        runs: { run_id: string; status: string }[];
        tool_calls: { tool_call_id: string; status: string }[];
        session: { run_count: number };
      };
      return {
        messages: b.messages.map((m) => m.content),
        runs: b.runs.map((r) => `${r.run_id} ${r.status}`),
        tools: b.tool_calls.map((c) => `${c.tool_call_id} ${c.status}`),
        runCount: b.session.run_count,
      };
    };
    // Long enough for the gzip path.
    await t.post({ type: 'message', session_id: 's', role: 'user', content: 'one '.repeat(3000) });
    expect(await detail()).toEqual({ messages: ['one '.repeat(3000)], runs: [], tools: [], runCount: 0 });
    await t.post({ type: 'run.started', session_id: 's', run_id: 'r1' });
    expect(await detail()).toMatchObject({
      messages: ['one '.repeat(3000)],
      runs: ['r1 running'],
      tools: [],
      runCount: 1,
    });
    await t.post({ type: 'tool.started', session_id: 's', run_id: 'r1', tool_call_id: 't1' });
    expect(await detail()).toMatchObject({ runs: ['r1 running'], tools: ['t1 running'] });
    await t.post({ type: 'tool.completed', session_id: 's', run_id: 'r1', tool_call_id: 't1' });
    await t.post({ type: 'run.completed', session_id: 's', run_id: 'r1' });
    expect(await detail()).toMatchObject({ runs: ['r1 completed'], tools: ['t1 completed'] });
    await t.post({ type: 'message', session_id: 's', role: 'assistant', content: 'two' });
    expect(await detail()).toMatchObject({ messages: ['one '.repeat(3000), 'two'], runs: ['r1 completed'] });
    const other = await openStoreFrom({ dbPath: t.dbPath, databaseUrl: t.databaseUrl });
    await other.runs.insertRun({
      run_id: 'r2',
      session_id: 's',
      title: null,
      status: 'running',
      source: 'run',
      workspace: null,
      started_at: Date.now() + 1000,
      finished_at: null,
      error: null,
      change_id: 'run:r2',
      tracking: false,
      reason: null,
    });
    await other.close();
    expect(await detail()).toMatchObject({ runs: ['r1 completed', 'r2 running'], runCount: 2 });
  });

  it('a large detail is sent gzip-compressed to clients that accept it, identical once decoded', async () => {
    const t = await setup();
    await t.post({ type: 'message', session_id: 's', role: 'user', content: 'x'.repeat(20_000) });
    const plain = await t.get('/api/hermes/sessions/s');
    const zipped = await t.request('GET', '/api/hermes/sessions/s', { headers: { 'accept-encoding': 'gzip' } });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toMatch(/Accept-Encoding/i);
    expect(JSON.parse(zlib.gunzipSync(zipped.raw).toString('utf8'))).toEqual(plain.body);
  });
});

describe('bridge input validation: malformed events are a clear 4xx and store nothing', () => {
  const long = 'x'.repeat(201);
  const cases: [string, unknown, number, string][] = [
    ['array body', [{ type: 'session.upsert', session_id: 's' }], 400, 'invalid_input'],
    ['unknown type', { type: 'session.create', session_id: 's' }, 400, 'invalid_input'],
    ['missing type', { session_id: 's' }, 400, 'invalid_input'],
    ['type not a string', { type: 5, session_id: 's' }, 400, 'invalid_input'],
    ['missing session_id', { type: 'session.upsert' }, 400, 'invalid_input'],
    ['session_id a number', { type: 'session.upsert', session_id: 5 }, 400, 'invalid_input'],
    ['empty session_id', { type: 'session.upsert', session_id: '' }, 400, 'invalid_input'],
    ['over-long session_id', { type: 'session.upsert', session_id: long }, 400, 'invalid_input'],
    ['control character in id', { type: 'run.started', session_id: 's', run_id: 'a\nb' }, 400, 'invalid_input'],
    ['NUL in id', { type: 'run.started', session_id: 's\u0000', run_id: 'r' }, 400, 'invalid_input'],
    [
      'relative workspace',
      { type: 'run.started', session_id: 's', run_id: 'r', workspace: 'src/app' },
      400,
      'invalid_input',
    ],
    ['workspace not a string', { type: 'session.upsert', session_id: 's', workspace: ['/'] }, 400, 'invalid_input'],
    ['title over 500 chars', { type: 'session.upsert', session_id: 's', title: 't'.repeat(501) }, 400, 'invalid_input'],
    ['run.started without run_id', { type: 'run.started', session_id: 's' }, 400, 'invalid_input'],
    ['unknown source', { type: 'run.started', session_id: 's', run_id: 'r', source: 'cron' }, 400, 'invalid_input'],
    ['tool.started without tool_call_id', { type: 'tool.started', session_id: 's', run_id: 'r' }, 400, 'invalid_input'],
    [
      'tool.completed with numeric error',
      { type: 'tool.completed', session_id: 's', run_id: 'r', tool_call_id: 't', error: 1 },
      400,
      'invalid_input',
    ],
    ['run.completed without run_id', { type: 'run.completed', session_id: 's' }, 400, 'invalid_input'],
    [
      'message with unknown role',
      { type: 'message', session_id: 's', role: 'system', content: 'x' },
      400,
      'invalid_input',
    ],
    ['message without content', { type: 'message', session_id: 's', role: 'user' }, 400, 'invalid_input'],
    [
      'message content over 1 MiB',
      { type: 'message', session_id: 's', role: 'user', content: 'é'.repeat(600_000) },
      400,
      'invalid_input',
    ],
    [
      'created_at not a number',
      { type: 'message', session_id: 's', role: 'user', content: 'x', created_at: '2024' },
      400,
      'invalid_input',
    ],
    [
      'created_at fractional',
      { type: 'message', session_id: 's', role: 'user', content: 'x', created_at: 1.5 },
      400,
      'invalid_input',
    ],
    [
      'over-long message_id',
      { type: 'message', session_id: 's', role: 'user', content: 'x', message_id: long },
      400,
      'invalid_input',
    ],
  ];
  it.each(cases)('%s', async (_name, body, status, code) => {
    const t = await setup();
    const res = await t.post(body);
    expectError(res, status, code);
    expect(await rows(t)).toBe(0);
  });

  it('names every bad field in details.issues', async () => {
    const t = await setup();
    const res = await t.post({ type: 'run.started', session_id: '', run_id: 7, workspace: 'rel' });
    expectError(res, 400, 'invalid_input');
    expect(res.body.error.details.issues.map((i: { field: string }) => i.field).sort()).toEqual([
      'run_id',
      'session_id',
      'workspace',
    ]);
  });

  it('invalid JSON is 400, a non-JSON content type 415, a body over the limit 413; nothing stored', async () => {
    const t = await setup({ limits: { maxBodyBytes: 1024 } });
    const post = (body: string, headers: Record<string, string>) =>
      t.request('POST', '/api/bridge/events', { headers, body });
    expectError(
      await post('{"type": "session.upsert", ', { 'content-type': 'application/json' }),
      400,
      'invalid_input',
    );
    expectError(await post('"just a string"', { 'content-type': 'application/json' }), 400, 'invalid_input');
    expectError(
      await post('{"type":"session.upsert","session_id":"s"}', { 'content-type': 'text/plain' }),
      415,
      'unsupported_media_type',
    );
    expectError(
      await post('type=session.upsert&session_id=s', { 'content-type': 'application/x-www-form-urlencoded' }),
      415,
      'unsupported_media_type',
    );
    expectError(await post('{"type":"session.upsert","session_id":"s"}', {}), 415, 'unsupported_media_type');
    const big = JSON.stringify({ type: 'message', session_id: 's', role: 'user', content: 'x'.repeat(2_000) });
    const res = await post(big, { 'content-type': 'application/json' });
    expectError(res, 413, 'payload_too_large');
    expect(await rows(t)).toBe(0);
    // within the limit and with a charset: accepted
    const ok = await post('{"type":"session.upsert","session_id":"s"}', {
      'content-type': 'application/json; charset=utf-8',
    });
    expect(ok.status).toBe(200);
  });

  it('unknown fields are ignored (forward compatible runtimes)', async () => {
    const t = await setup();
    const res = await t.post({ type: 'session.upsert', session_id: 's', title: 'x', colour: 'blue' });
    expect(res.status).toBe(200);
    expect(res.body.session).not.toHaveProperty('colour');
  });
});

describe('security (docs/contract.md section 6)', () => {
  it('with a token every /api route needs it (401 otherwise); the web UI page does not', async () => {
    const t = await setup({ env: { RUNDIFF_TOKEN: 's3cret' } });
    expectError(await t.get('/api/health'), 401, 'unauthorized');
    expectError(await t.get('/api/health', { authorization: 'Bearer wrong' }), 401, 'unauthorized');
    expectError(await t.post({ type: 'session.upsert', session_id: 's' }), 401, 'unauthorized');
    expect(await rows(t)).toBe(0);
    expect((await t.get('/api/health', { authorization: 'Bearer s3cret' })).status).toBe(200);
    expect((await t.post({ type: 'session.upsert', session_id: 's' }, { authorization: 'Bearer s3cret' })).status).toBe(
      200,
    );
    expect((await t.get('/')).status).toBe(200);
  });

  it('socket handshake needs auth.token when a token is set', async () => {
    const t = await setup({ env: { RUNDIFF_TOKEN: 's3cret' } });
    await expect(connectClient(t.server.url)).rejects.toThrow(/unauthorized/);
    await expect(connectClient(t.server.url, { token: 'nope' })).rejects.toThrow(/unauthorized/);
    const c = await connectClient(t.server.url, { token: 's3cret' });
    cleanups.push(() => c.close());
    expect(await c.ask('sessions.subscribe', {})).toEqual({ ok: true });
  });

  it('a Host other than 127.0.0.1, localhost or [::1] with the port is refused on a loopback bind (DNS rebinding)', async () => {
    const t = await setup();
    const port = t.server.port;
    for (const host of ['evil.example', `evil.example:${port}`, '127.0.0.1:1', `127.0.0.1.nip.io:${port}`, '']) {
      expectError(await t.get('/api/health', { host }), 403, 'forbidden_origin');
    }
    expectError(await t.get('/', { host: `evil.example:${port}` }), 403, 'forbidden_origin');
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`]) {
      expect((await t.get('/api/health', { host })).status).toBe(200);
    }
  });

  it('RUNDIFF_ALLOWED_HOSTS adds names a client may use', async () => {
    const t = await setup({ env: { RUNDIFF_ALLOWED_HOSTS: 'rundiff.internal,box:8080' } });
    expect((await t.get('/api/health', { host: 'rundiff.internal' })).status).toBe(200);
    expect((await t.get('/api/health', { host: 'box:8080' })).status).toBe(200);
    expectError(await t.get('/api/health', { host: 'box:9090' }), 403, 'forbidden_origin');
  });

  it("an Origin other than the server's own is refused; its own origin and no Origin pass", async () => {
    const t = await setup();
    const own = `http://127.0.0.1:${t.server.port}`;
    for (const origin of [
      'http://evil.example',
      'null',
      `http://localhost:${t.server.port}`,
      `http://127.0.0.1:${t.server.port + 1}`,
    ]) {
      expectError(await t.post({ type: 'session.upsert', session_id: 's' }, { origin }), 403, 'forbidden_origin');
    }
    expect(await rows(t)).toBe(0);
    expect((await t.post({ type: 'session.upsert', session_id: 's' }, { origin: own })).status).toBe(200);
    expect((await t.get('/api/health')).status).toBe(200);
  });

  it('the socket handshake is refused for a foreign Origin or Host', async () => {
    const t = await setup();
    await expect(connectClient(t.server.url, { headers: { origin: 'http://evil.example' } })).rejects.toThrow();
    const port = t.server.port;
    await expect(
      connectClient(`http://localhost:${port}`, { headers: { host: `evil.example:${port}` } }),
    ).rejects.toThrow();
    const ok = await connectClient(t.server.url, { headers: { origin: `http://127.0.0.1:${port}` } });
    onTestFinished(() => ok.close());
  });

  it('refuses to bind a non-loopback address without a token', async () => {
    await expect(startTestServer({ host: '0.0.0.0' })).rejects.toThrow(/without a token/);
  });

  it('on a non-loopback bind the Host must be --host or an allowed name', async () => {
    const t = await setup({ host: '0.0.0.0', env: { RUNDIFF_TOKEN: 'tok', RUNDIFF_ALLOWED_HOSTS: 'devbox' } });
    const auth = { authorization: 'Bearer tok' };
    expect((await t.get('/api/health', { ...auth, host: `0.0.0.0:${t.server.port}` })).status).toBe(200);
    expect((await t.get('/api/health', { ...auth, host: 'devbox' })).status).toBe(200);
    expectError(await t.get('/api/health', { ...auth, host: `127.0.0.1:${t.server.port}` }), 403, 'forbidden_origin');
  });

  it('responses carry nosniff and no X-Powered-By', async () => {
    const t = await setup();
    const res = await t.get('/api/health');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-powered-by']).toBeUndefined();
  });
});

describe('socket.io subscriptions', () => {
  it('acks subscribe/unsubscribe once in effect; unknown ids may be subscribed; bad payloads get ok:false', async () => {
    const t = await setup();
    const c = await connectClient(t.server.url);
    cleanups.push(() => c.close());
    expect(await c.ask('session.subscribe', { session_id: 'not-yet' })).toEqual({ ok: true });
    expect(await c.ask('session.subscribe', { session_id: 5 })).toMatchObject({
      ok: false,
      error: { code: 'invalid_input' },
    });
    await t.post({ type: 'message', session_id: 'not-yet', role: 'user', content: 'hi' });
    await c.waitFor('message.created');
    expect(await c.ask('session.unsubscribe', { session_id: 'not-yet' })).toEqual({ ok: true });
    await t.post({ type: 'message', session_id: 'not-yet', role: 'user', content: 'again' });
    await t.post({ type: 'message', session_id: 'other', role: 'user', content: 'x' });
    expect(await c.ask('sessions.subscribe', {})).toEqual({ ok: true });
    await t.post({ type: 'session.upsert', session_id: 'other', title: 'Other' });
    const [ev] = await c.waitFor('session.updated');
    // Events reach one socket in order: anything sent for the posts above would have arrived before this one.
    expect(c.names().slice(0, -1)).toEqual(['message.created']); // no session.updated: not subscribed to the list
    expect(ev!.payload).toEqual({ session: expect.objectContaining({ id: 'other', title: 'Other' }) });
  });
});

describe('web UI', () => {
  it('without a build, / and client routes answer a short page saying to run npm run build', async () => {
    const empty = createTempDir();
    cleanups.push(() => fs.rmSync(empty, { recursive: true, force: true }));
    const t = await setup({ webDir: empty });
    for (const p of ['/', '/sessions/abc']) {
      const res = await t.get(p);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(res.text).toContain('npm run build');
    }
  });

  it('serves the built app with an SPA fallback outside /api and /assets', async () => {
    const web = createTempDir();
    cleanups.push(() => fs.rmSync(web, { recursive: true, force: true }));
    fs.writeFileSync(path.join(web, 'index.html'), '<!doctype html><div id="app"></div>');
    fs.mkdirSync(path.join(web, 'assets'));
    fs.writeFileSync(path.join(web, 'assets', 'app.js'), 'console.log(1)');
    const t = await setup({ webDir: web });
    expect((await t.get('/')).text).toContain('id="app"');
    expect((await t.get('/sessions/x%3Ay')).text).toContain('id="app"');
    const js = await t.get('/assets/app.js');
    expect(js.headers['content-type']).toMatch(/javascript/);
    expect((await t.get('/assets/missing.js')).status).toBe(404);
    expectError(await t.get('/api/unknown'), 404, 'not_found');
  });
});

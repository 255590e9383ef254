import net from 'node:net';
import { io as connect } from 'socket.io-client';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { sqliteDb } from '../test-support/store-engines.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
async function setup(opts: Parameters<typeof startTestServer>[0] = {}) {
  const t = await startTestServer(opts);
  cleanups.push(() => t.close());
  return t;
}

const contents = (t: TestServer) =>
  (sqliteDb(t.server.store).prepare('SELECT content FROM messages ORDER BY seq').all() as { content: string }[]).map(
    (r) => r.content,
  );

/** A message event whose content string holds `inner` as raw bytes. */
function messageBytes(inner: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from('{"type":"message","session_id":"s","role":"user","content":"'),
    inner,
    Buffer.from('"}'),
  ]);
}

const postRaw = (t: TestServer, body: Buffer | string, headers: Record<string, string> = {}) =>
  t.request('POST', '/api/bridge/events', { headers: { 'content-type': 'application/json', ...headers }, body });

describe('request bodies must be valid UTF-8', () => {
  it('a JSON string with an invalid byte (0xff) is 400 invalid_input and nothing is stored', async () => {
    const t = await setup();
    const bad = await postRaw(t, messageBytes(Buffer.from([0x61, 0xff, 0x62])));
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'invalid_input', message: expect.stringMatching(/UTF-8/) } });
    // A truncated multibyte sequence and an overlong encoding are refused the same way.
    expect((await postRaw(t, messageBytes(Buffer.from([0xe6, 0xbc])))).status).toBe(400);
    expect((await postRaw(t, messageBytes(Buffer.from([0xc0, 0xaf])))).status).toBe(400);
    expect(contents(t)).toEqual([]);
    // Positive control: valid multibyte UTF-8 (2, 3 and 4 bytes) is accepted and stored exactly.
    const ok = await postRaw(t, messageBytes(Buffer.from('é漢😀', 'utf8')));
    expect(ok.status).toBe(200);
    expect(contents(t)).toEqual(['é漢😀']);
  });

  it('a lone surrogate escape is 400; a proper surrogate pair escape is stored as its character', async () => {
    const t = await setup();
    const bad = await postRaw(t, messageBytes(Buffer.from('a\\ud800b')));
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'invalid_input' } });
    expect((await postRaw(t, messageBytes(Buffer.from('\\udc00')))).status).toBe(400);
    expect(contents(t)).toEqual([]);
    expect((await postRaw(t, messageBytes(Buffer.from('\\ud83d\\ude00')))).status).toBe(200);
    expect(contents(t)).toEqual(['😀']);
  });

  it('a charset other than UTF-8 is 415', async () => {
    const t = await setup();
    const res = await postRaw(t, Buffer.from('{"type":"session.upsert","session_id":"s"}', 'utf16le'), {
      'content-type': 'application/json; charset=utf-16le',
    });
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ error: { code: 'unsupported_media_type' } });
  });
});

/** A raw connection: what the server sends, and a promise of the connection's close. */
async function rawConnection(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  cleanups.push(() => socket.destroy());
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = '';
  socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
  socket.on('error', () => {}); // a reset after the server closes is expected
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, closed, received: () => received };
}

describe('slow or oversized requests do not hold a connection', () => {
  const timeouts = { RUNDIFF_REQUEST_TIMEOUT_MS: '400', RUNDIFF_HEADERS_TIMEOUT_MS: '300' };

  it('a request that announces a body and stalls is closed after the request timeout (408)', async () => {
    const t = await setup({ env: timeouts });
    const c = await rawConnection(t.server.port);
    c.socket.write(
      `POST /api/bridge/events HTTP/1.1\r\nHost: 127.0.0.1:${t.server.port}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"type":',
    );
    await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(contents(t)).toEqual([]);
    // Positive control: on the same server a request sent in full is answered normally.
    expect((await t.get('/api/health')).status).toBe(200);
  });

  it('a long-polling socket.io connection outlives the request timeout (its requests are complete)', async () => {
    const t = await setup({ env: timeouts });
    const client = connect(t.server.url, { transports: ['polling'], upgrade: false, reconnection: false });
    cleanups.push(() => void client.close());
    const disconnects: string[] = [];
    client.on('disconnect', (reason) => disconnects.push(reason));
    expect(await client.timeout(5_000).emitWithAck('session.subscribe', { session_id: 's' })).toEqual({ ok: true });
    const engineId = client.io.engine.id;
    // A stalled request on the side: once it is closed, the timeout check has run while the
    // client's long-poll was waiting.
    const c = await rawConnection(t.server.port);
    c.socket.write(
      `POST /api/bridge/events HTTP/1.1\r\nHost: 127.0.0.1:${t.server.port}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n',
    );
    await c.closed;
    const got = new Promise((resolve) => client.on('message.created', resolve));
    expect((await postRaw(t, '{"type":"message","session_id":"s","role":"user","content":"hi"}')).status).toBe(200);
    expect(await got).toMatchObject({ message: { content: 'hi' } });
    expect(disconnects).toEqual([]);
    expect(client.io.engine.id).toBe(engineId);
  });

  it('a request whose headers stall is closed after the headers timeout', async () => {
    const t = await setup({ env: timeouts });
    const c = await rawConnection(t.server.port);
    c.socket.write(`GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:${t.server.port}\r\nX-Slow: `);
    await c.closed;
    expect(c.received()).not.toMatch(/^HTTP\/1\.1 200/);
  });

  it('an announced body over the limit is 413 before any of it is sent, and the connection is closed', async () => {
    const t = await setup({ limits: { maxBodyBytes: 1024 } });
    const c = await rawConnection(t.server.port);
    c.socket.write(
      `POST /api/bridge/events HTTP/1.1\r\nHost: 127.0.0.1:${t.server.port}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`,
    );
    await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 413 /);
    expect(c.received()).toMatch(/"code":"payload_too_large"/);
    expect(c.received()).toMatch(/\r\nConnection: close\r\n/i);
    // Positive control: a body within the limit is accepted.
    expect((await postRaw(t, '{"type":"session.upsert","session_id":"s"}')).status).toBe(200);
  });

  it('a request refused before its body is read (no token) is answered at once and closed', async () => {
    const t = await setup({ env: { RUNDIFF_TOKEN: 'tok' } });
    const c = await rawConnection(t.server.port);
    c.socket.write(
      `POST /api/bridge/events HTTP/1.1\r\nHost: 127.0.0.1:${t.server.port}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n',
    );
    await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 401 /);
    // The server says it will not keep the connection to drain the unread body.
    expect(c.received()).toMatch(/\r\nConnection: close\r\n/i);
    const ok = await postRaw(t, '{"type":"session.upsert","session_id":"s"}', { authorization: 'Bearer tok' });
    expect(ok.status).toBe(200);
  });
});

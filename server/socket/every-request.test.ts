import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const EVIL = 'http://evil.example';

/** Raw engine.io long-polling request (what a browser page would send with a learnt session id). */
function poll(t: TestServer, method: 'GET' | 'POST', query: string, headers: Record<string, string>, body?: string) {
  return t.request(method, `/socket.io/?EIO=4&transport=polling${query}`, {
    headers: body === undefined ? headers : { 'content-type': 'text/plain;charset=UTF-8', ...headers },
    ...(body === undefined ? {} : { body }),
  });
}

/** A raw websocket upgrade request; resolves with the status the server answered (101 when upgraded). */
function upgrade(port: number, query: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      path: `/socket.io/?EIO=4&transport=websocket${query}`,
      setHost: false,
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        ...headers,
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

async function handshake(t: TestServer, good: Record<string, string>): Promise<string> {
  const res = await poll(t, 'GET', '', good);
  expect(res.status).toBe(200);
  return (JSON.parse(res.text.slice(1)) as { sid: string }).sid;
}

describe('socket.io checks Host and Origin on every request, not only the handshake', () => {
  it('a long-polling GET or POST with a valid session id but a foreign Origin or Host is refused (403)', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const good = { host: `127.0.0.1:${t.server.port}`, origin: `http://127.0.0.1:${t.server.port}` };
    const sid = await handshake(t, good);
    const q = `&sid=${encodeURIComponent(sid)}`;

    // Refused before engine.io looks at the packet: nothing reaches the namespace.
    const postEvilOrigin = await poll(t, 'POST', q, { ...good, origin: EVIL }, '40');
    expect(postEvilOrigin.status).toBe(403);
    expect(postEvilOrigin.body).toMatchObject({ error: { code: 'forbidden_origin' } });
    const postEvilHost = await poll(t, 'POST', q, { ...good, host: `evil.example:${t.server.port}` }, '40');
    expect(postEvilHost.status).toBe(403);
    expect(t.server.io.of('/').sockets.size).toBe(0);

    // Positive control: the same POST with the good headers connects to the namespace, which
    // leaves the namespace's CONNECT answer waiting for the next GET.
    const post = await poll(t, 'POST', q, good, '40');
    expect(post.status).toBe(200);
    expect(post.text).toBe('ok');

    // A foreign GET would otherwise be handed that waiting packet.
    const getEvilOrigin = await poll(t, 'GET', q, { ...good, origin: EVIL });
    expect(getEvilOrigin.status).toBe(403);
    expect(getEvilOrigin.body).toMatchObject({ error: { code: 'forbidden_origin' } });
    const getEvilHost = await poll(t, 'GET', q, { ...good, host: `evil.example:${t.server.port}` });
    expect(getEvilHost.status).toBe(403);

    // Positive control: the good GET receives it.
    const get = await poll(t, 'GET', q, good);
    expect(get.status).toBe(200);
    expect(get.text).toMatch(/^40\{"sid":/);
  });

  it('a websocket upgrade of an existing session with a foreign Origin or Host is refused (403)', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const port = t.server.port;
    const good = { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` };
    const sid = await handshake(t, good);
    const q = `&sid=${encodeURIComponent(sid)}`;
    expect(await upgrade(port, q, { ...good, origin: EVIL })).toBe(403);
    expect(await upgrade(port, q, { ...good, host: `evil.example:${port}` })).toBe(403);
    // Positive control: the same upgrade with the good headers is switched to a websocket.
    expect(await upgrade(port, q, good)).toBe(101);
  });

  it('a fresh websocket handshake with a foreign Origin is refused too; a good one upgrades', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const port = t.server.port;
    const good = { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` };
    expect(await upgrade(port, '', { ...good, origin: EVIL })).toBe(403);
    expect(await upgrade(port, '', good)).toBe(101);
  });

  it('with a token, an engine.io session alone reaches nothing: joining the namespace needs the token', async () => {
    const t = await startTestServer({ env: { RUNDIFF_TOKEN: 'tok' } });
    cleanups.push(() => t.close());
    const good = { host: `127.0.0.1:${t.server.port}` };
    // The transport session carries only its id, so its requests cannot present the token ...
    const sid = await handshake(t, good);
    const q = `&sid=${encodeURIComponent(sid)}`;
    // ... and a namespace CONNECT without the token is refused.
    expect((await poll(t, 'POST', q, good, '40')).status).toBe(200);
    const refused = await poll(t, 'GET', q, good);
    expect(refused.text).toMatch(/^44\{"message":"unauthorized"/);
    expect(t.server.io.of('/').sockets.size).toBe(0);
    // Positive control: the same session presenting the token joins.
    expect((await poll(t, 'POST', q, good, '40{"token":"tok"}')).status).toBe(200);
    expect((await poll(t, 'GET', q, good)).text).toMatch(/^40\{"sid":/);
    expect(t.server.io.of('/').sockets.size).toBe(1);
  });
});

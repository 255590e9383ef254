/// <reference types="node" />
// This test runs in Node (vitest) against a real HTTP server; the app itself never imports Node modules.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, apiFetch, setTokenRequester } from './client.ts';
import { setToken } from './token.ts';

// A real HTTP server that wants `Bearer right` and records the Authorization headers it saw.
const seen: (string | undefined)[] = [];
const held: (() => void)[] = [];
let base = '';
const server = http.createServer((req, res) => {
  seen.push(req.headers.authorization);
  if (req.url === '/down') {
    req.socket.destroy();
    return;
  }
  if (req.url === '/held' && req.headers.authorization !== 'Bearer right') {
    // Answered later, when the test releases it: a refusal that arrives after a new token was stored.
    held.push(() => {
      res.writeHead(401, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'unauthorized', message: 'a valid token is required' } }));
    });
    return;
  }
  if (req.headers.authorization !== 'Bearer right') {
    res.writeHead(401, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'unauthorized', message: 'a valid token is required' } }));
    return;
  }
  res.writeHead(req.url === '/missing' ? 404 : 200, { 'Content-Type': 'application/json' });
  res.end(
    req.url === '/missing' ? JSON.stringify({ error: { code: 'not_found', message: 'no session' } }) : '{"ok":true}',
  );
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  setTokenRequester(null);
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('apiFetch', () => {
  it('asks for a token on 401, says when one was refused, retries, then keeps sending it', async () => {
    setToken(null);
    const asked: boolean[] = [];
    const answers = ['wrong', 'right'];
    setTokenRequester(async (rejected) => {
      asked.push(rejected);
      return answers.shift()!;
    });
    seen.length = 0;
    const res = await apiFetch(`${base}/api/x`);
    expect(await res.json()).toEqual({ ok: true });
    expect(asked).toEqual([false, true]);
    expect(seen).toEqual([undefined, 'Bearer wrong', 'Bearer right']);

    // Kept: the next request sends it at once, with no prompt.
    await apiFetch(`${base}/api/y`);
    expect(asked).toHaveLength(2);
    expect(seen[seen.length - 1]).toBe('Bearer right');
  });

  it('a refusal that arrives after the token was replaced retries with the new token, without asking', async () => {
    setToken('wrong');
    const asked: boolean[] = [];
    setTokenRequester(async (rejected) => {
      asked.push(rejected);
      return 'right';
    });
    seen.length = 0;
    const pending = apiFetch(`${base}/held`);
    await expect.poll(() => held.length).toBe(1);
    setToken('right');
    held.shift()!();
    const res = await pending;
    expect(await res.json()).toEqual({ ok: true });
    expect(asked).toEqual([]);
    expect(seen).toEqual(['Bearer wrong', 'Bearer right']);
  });

  it("turns error bodies into ApiError with the server's code, and no answer into `unreachable`", async () => {
    setToken('right');
    await expect(apiFetch(`${base}/missing`)).rejects.toMatchObject({
      status: 404,
      code: 'not_found',
      message: 'no session',
    });
    const err = await apiFetch(`${base}/down`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('unreachable');
  });
});

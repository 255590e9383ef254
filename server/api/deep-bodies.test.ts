import { afterEach, describe, expect, it } from 'vitest';
import { jsonDepth, MAX_JSON_DEPTH } from '../../shared/index.ts';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';

const EDGE_TOKEN = 'laptop-token-0123456789abcdef';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
async function setup(): Promise<TestServer> {
  const t = await startTestServer({ env: { RUNDIFF_EDGE_TOKENS: `laptop=${EDGE_TOKEN}` } });
  cleanups.push(() => t.close());
  return t;
}

/** A JSON object whose `content` holds `depth - 1` nested arrays: `depth` levels in all. */
const nested = (fields: string, depth: number) =>
  `{${fields}"content":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

const post = (t: TestServer, route: string, body: string, headers: Record<string, string> = {}) =>
  t.request('POST', route, { headers: { 'content-type': 'application/json', ...headers }, body });

/** Every JSON route family: the bridge, a hook, a revert, review delivery, a review, an edge batch. */
const ROUTES: { route: string; headers?: Record<string, string> }[] = [
  { route: '/api/bridge/events' },
  { route: '/api/hermes/sessions/s/workspace-run-changes/run:r/revert' },
  { route: '/api/reviews/deliver' },
  { route: '/api/hermes/sessions/s/reviews' },
  { route: '/api/hermes/sessions/s/comments' },
  { route: '/api/edge/batches', headers: { authorization: `Bearer ${EDGE_TOKEN}` } },
];

describe('a JSON body nested deeper than the limit is refused, and the server lives on', () => {
  it('5,000 levels (10 KB) on every JSON route: 400 naming the limit, then /api/health answers', async () => {
    const t = await setup();
    const deep = nested('', 5000);
    expect(deep.length).toBeLessThan(11_000);
    for (const { route, headers } of ROUTES) {
      const res = await post(t, route, deep, headers);
      expect(res.status, route).toBe(400);
      expect(res.body, route).toMatchObject({
        error: {
          code: 'invalid_input',
          message: expect.stringMatching(/deeper than 256/),
          details: { max_depth: 256 },
        },
      });
      expect((await t.request('GET', '/api/health')).status).toBe(200);
    }
  });

  it('a hook gets its neutral answer for a deep body, and the server lives on', async () => {
    const t = await setup();
    const res = await post(t, '/api/hooks/claude-code', nested('"hook_event_name":"PreToolUse",', 100_000));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect((await t.request('GET', '/api/health')).status).toBe(200);
  });

  it('a socket.io event nested 20,000 deep is answered as a bad id, and the server keeps working', async () => {
    const t = await setup();
    // Raw engine.io long-polling: no client library could even encode such a packet.
    const open = await t.request('GET', '/socket.io/?EIO=4&transport=polling');
    const sid = (JSON.parse(open.text.slice(1)) as { sid: string }).sid;
    const url = `/socket.io/?EIO=4&transport=polling&sid=${sid}`;
    const send = (body: string) => t.request('POST', url, { headers: { 'content-type': 'text/plain' }, body });
    const hello = await send('40');
    expect(hello.text, String(hello.status) + open.text).toBe('ok');
    await t.request('GET', url); // the namespace's connect answer
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const deepAnswer = await send(`421["session.subscribe",{"session_id":${deep}}]`);
    expect(deepAnswer.text, `${deepAnswer.status} ${JSON.stringify(deepAnswer.headers)}`).toBe('ok');
    expect((await t.request('GET', url)).text).toMatch(/^431\[\{"ok":false,"error":\{"code":"invalid_input"/);
    // Positive control: the same socket subscribes with a good id.
    expect((await send('422["session.subscribe",{"session_id":"s"}]')).text).toBe('ok');
    expect((await t.request('GET', url)).text).toBe('432[{"ok":true}]');
    expect((await t.request('GET', '/api/health')).status).toBe(200);
  });

  it('a body at the limit is taken (positive control: the bound is the documented one)', async () => {
    const t = await setup();
    const fields = '"type":"message","session_id":"s","role":"user",';
    // The content is a string the schema refuses as an array, so send the deep part in an
    // extra field the event may carry: metadata is free-form.
    const atLimit = `{${fields}"content":"hi","metadata":{"x":${'['.repeat(MAX_JSON_DEPTH - 2)}${']'.repeat(MAX_JSON_DEPTH - 2)}}}`;
    expect(jsonDepth(atLimit)).toBe(MAX_JSON_DEPTH);
    const ok = await post(t, '/api/bridge/events', atLimit);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const over = atLimit.replace('"x":[', '"x":[[').replace(']}}', ']]}}');
    expect(jsonDepth(over)).toBe(MAX_JSON_DEPTH + 1);
    expect((await post(t, '/api/bridge/events', over)).status).toBe(400);
  });
});

describe('jsonDepth', () => {
  it('counts arrays and objects, not brackets inside strings or after escaped quotes', () => {
    expect(jsonDepth('{}')).toBe(1);
    expect(jsonDepth('{"a":[1,{"b":[]}]}')).toBe(4);
    expect(jsonDepth('"[[[[{{{{"')).toBe(0);
    expect(jsonDepth('{"a":"\\"[[[[","b":[]}')).toBe(2);
    expect(jsonDepth('{"a":"\\\\","b":[[]]}')).toBe(3);
    expect(jsonDepth(Buffer.from('{"é漢😀":[[["[[["]]]}'))).toBe(4);
    expect(jsonDepth('[]]]]][[')).toBe(2);
  });
  it('stops as soon as the text passes the bound', () => {
    expect(jsonDepth('['.repeat(1_000_000), 10)).toBe(11);
  });
});

import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';

const JSON_HEADERS = { 'content-type': 'application/json' };
let open: TestServer[] = [];
const workspaces: string[] = [];

afterEach(async () => {
  await Promise.all(open.map((t) => t.close()));
  open = [];
  for (const dir of workspaces.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

async function setup(env: Record<string, string> = {}): Promise<TestServer> {
  const t = await startTestServer({ env });
  open.push(t);
  return t;
}

interface Detail {
  session: { workspace: string | null };
  runs: { run_id: string; status: string }[];
}

/** Polls the session detail until every demo run has ended (the demo's last run is r4). */
async function waitForDemoEnd(t: TestServer, sessionId: string, headers: Record<string, string> = {}): Promise<Detail> {
  const until = Date.now() + 30_000;
  for (;;) {
    const res = await t.get(`/api/hermes/sessions/${sessionId}`, headers);
    const detail = res.body as Detail;
    if (res.status === 200) {
      if (detail.session.workspace) workspaces.push(detail.session.workspace);
      const r4 = detail.runs.find((r) => r.run_id === 'r4');
      if (r4 && r4.status !== 'running') return detail;
    }
    if (Date.now() > until) throw new Error(`the demo did not finish: ${res.status} ${res.text.slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('POST /api/demo', () => {
  it('answers the session id at once and plays the scripted runs through the public bridge', async () => {
    const t = await setup();
    const res = await t.request('POST', '/api/demo', { headers: JSON_HEADERS, body: '{"pause_ms":0}' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ session_id: expect.stringMatching(/^demo-/), already_running: false });
    const detail = await waitForDemoEnd(t, res.body.session_id as string);
    const status = Object.fromEntries(detail.runs.map((r) => [r.run_id, r.status]));
    expect(status).toEqual({ r1: 'completed', r2: 'completed', r3: 'failed', r4: 'completed' });
    const changes = await t.get(`/api/hermes/sessions/${res.body.session_id}/workspace-run-changes`);
    const types = new Set(
      (changes.body.changes as { files: { change_type: string }[] }[]).flatMap((c) =>
        c.files.map((f) => f.change_type),
      ),
    );
    expect([...types].sort()).toEqual(['added', 'deleted', 'modified', 'renamed']);
  }, 40_000);

  it('a request while a demo plays joins it instead of starting a second one', async () => {
    const t = await setup();
    const [a, b] = await Promise.all([
      t.request('POST', '/api/demo', { headers: JSON_HEADERS, body: '{"pause_ms":50}' }),
      t.request('POST', '/api/demo', { headers: JSON_HEADERS, body: '{"pause_ms":50}' }),
    ]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.body.session_id).toBe(b.body.session_id);
    expect([a.body.already_running, b.body.already_running].sort()).toEqual([false, true]);
    await waitForDemoEnd(t, a.body.session_id as string);
    const list = await t.get('/api/hermes/sessions');
    expect((list.body.sessions as unknown[]).length).toBe(1);
    // Once it has ended, the next request starts a new demo.
    const c = await t.request('POST', '/api/demo', { headers: JSON_HEADERS, body: '{"pause_ms":0}' });
    expect(c.body.already_running).toBe(false);
    expect(c.body.session_id).not.toBe(a.body.session_id);
    await waitForDemoEnd(t, c.body.session_id as string);
  }, 60_000);

  it('with a token the route needs it, and the demo sends it to the bridge itself', async () => {
    const t = await setup({ RUNDIFF_TOKEN: 'demo-secret' });
    const refused = await t.request('POST', '/api/demo', { headers: JSON_HEADERS, body: '{}' });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('unauthorized');
    const auth = { authorization: 'Bearer demo-secret' };
    const res = await t.request('POST', '/api/demo', {
      headers: { ...JSON_HEADERS, ...auth },
      body: '{"pause_ms":0}',
    });
    expect(res.status).toBe(200);
    const detail = await waitForDemoEnd(t, res.body.session_id as string, auth);
    expect(detail.runs).toHaveLength(4);
  }, 40_000);

  it('refuses a cross-site request and a bad body, and starts nothing', async () => {
    const t = await setup();
    const foreign = await t.request('POST', '/api/demo', {
      headers: { ...JSON_HEADERS, origin: 'https://evil.example' },
      body: '{}',
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe('forbidden_origin');
    const bad = await t.request('POST', '/api/demo', { headers: JSON_HEADERS, body: '{"pause_ms":-1}' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_input');
    const extra = await t.request('POST', '/api/demo', { headers: JSON_HEADERS, body: '{"script":"rm -rf /"}' });
    expect(extra.status).toBe(400);
    const list = await t.get('/api/hermes/sessions');
    expect(list.body.sessions).toEqual([]);
  });
});

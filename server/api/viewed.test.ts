import { afterEach, describe, expect, it } from 'vitest';
import type { ViewedResponse, ViewedUpdatedPayload } from '../../shared/index.ts';
import { createTempRepo, type TempRepo } from '../test-support/temp-repo.ts';
import { connectClient, startTestServer, type TestClient, type TestServer } from '../test-support/server-harness.ts';
import { sqliteDb } from '../test-support/store-engines.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<{ t: TestServer; repo: TempRepo }> {
  const t = await startTestServer();
  cleanups.push(() => t.close());
  const repo = createTempRepo({ files: { 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' } });
  cleanups.push(() => repo.cleanup());
  await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
  return { t, repo };
}

async function subscriber(t: TestServer, sessionId: string): Promise<TestClient> {
  const c = await connectClient(t.server.url);
  cleanups.push(() => c.close());
  expect(await c.ask('session.subscribe', { session_id: sessionId })).toEqual({ ok: true });
  return c;
}

/** A real run through the bridge that writes `files`; answers the stored rows' ids by path. */
async function run(t: TestServer, repo: TempRepo, runId: string, files: Record<string, string>) {
  expect((await t.post({ type: 'run.started', session_id: 's1', run_id: runId })).body.tracking).toBe(true);
  for (const [p, text] of Object.entries(files)) repo.write(p, text);
  const done = await t.post({ type: 'run.completed', session_id: 's1', run_id: runId });
  expect(done.status).toBe(200);
  return new Map<string, string>((done.body.files as { path: string; id: string }[]).map((f) => [f.path, f.id]));
}

const json = (body: unknown) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const put = (t: TestServer, sessionId: string, body: unknown) =>
  t.request('PUT', `/api/hermes/sessions/${sessionId}/viewed`, json(body));
const del = (t: TestServer, sessionId: string, changeId: string, fileId: string) =>
  t.request(
    'DELETE',
    `/api/hermes/sessions/${sessionId}/viewed?change_id=${encodeURIComponent(changeId)}&file_id=${encodeURIComponent(fileId)}`,
  );
const paths = (v: ViewedResponse) => v.viewed.map((m) => m.path).sort();

describe('viewed marks over REST and socket.io', () => {
  it('mark, read back, unmark: every answer is the marks after the call, and both subscribed pages are told', async () => {
    const { t, repo } = await setup();
    const ids = await run(t, repo, 'r1', { 'a.txt': 'A\n', 'b.txt': 'B\n' });
    const tab1 = await subscriber(t, 's1');
    const tab2 = await subscriber(t, 's1');

    expect((await t.get('/api/hermes/sessions/s1/viewed')).body).toEqual({ viewed: [], rows: [] });
    const marked = await put(t, 's1', { change_id: 'run:r1', file_id: ids.get('a.txt') });
    expect(marked.status).toBe(200);
    expect(marked.body.viewed).toEqual([
      { path: 'a.txt', change_id: 'run:r1', file_id: ids.get('a.txt'), viewed_at: expect.any(Number) },
    ]);
    expect(marked.body.rows).toEqual([{ change_id: 'run:r1', file_id: ids.get('a.txt'), ord: 0 }]);
    expect((await t.get('/api/hermes/sessions/s1/viewed')).body).toEqual(marked.body);

    for (const tab of [tab1, tab2]) {
      const [e] = await tab.waitFor('viewed.updated');
      expect(e!.payload).toEqual({ session_id: 's1', cause: 'marked', ...marked.body });
    }

    const unmarked = await del(t, 's1', 'run:r1', ids.get('a.txt')!);
    expect(unmarked.status).toBe(200);
    expect(unmarked.body).toEqual({ viewed: [], rows: [] });
    const [, second] = await tab2.waitFor('viewed.updated', 2);
    expect((second!.payload as ViewedUpdatedPayload).cause).toBe('unmarked');
  });

  it('a call that changes nothing answers the marks and tells no one', async () => {
    const { t, repo } = await setup();
    const ids = await run(t, repo, 'r1', { 'a.txt': 'A\n' });
    const tab = await subscriber(t, 's1');
    expect((await del(t, 's1', 'run:r1', ids.get('a.txt')!)).body).toEqual({ viewed: [], rows: [] });
    await put(t, 's1', { change_id: 'run:r1', file_id: ids.get('a.txt') });
    await put(t, 's1', { change_id: 'run:r1', file_id: ids.get('a.txt') });
    // The first PUT is the only change: one event, after which nothing else arrived.
    await tab.waitFor('viewed.updated');
    await del(t, 's1', 'run:r1', ids.get('a.txt')!);
    const events = await tab.waitFor('viewed.updated', 2);
    expect(events.map((e) => (e.payload as ViewedUpdatedPayload).cause)).toEqual(['marked', 'unmarked']);
  });

  it('a later run changing a viewed file resets its mark through the real bridge; another file`s mark survives', async () => {
    const { t, repo } = await setup();
    const r1 = await run(t, repo, 'r1', { 'a.txt': 'A\n', 'b.txt': 'B\n' });
    await put(t, 's1', { change_id: 'run:r1', file_id: r1.get('a.txt') });
    await put(t, 's1', { change_id: 'run:r1', file_id: r1.get('b.txt') });
    const tab = await subscriber(t, 's1');

    await run(t, repo, 'r2', { 'a.txt': 'AA\n', 'c.txt': 'C\n' });
    const after = (await t.get('/api/hermes/sessions/s1/viewed')).body as ViewedResponse;
    expect(paths(after)).toEqual(['b.txt']);
    const [e] = await tab.waitFor('viewed.updated');
    expect(e!.payload).toEqual({ session_id: 's1', cause: 'reset', ...after });
    // The reset is told after the change it comes from.
    const names = tab.names();
    expect(names.indexOf('workspace.diff.completed')).toBeLessThan(names.indexOf('viewed.updated'));
  });

  it('a tool call changing a viewed file resets its mark too', async () => {
    const { t, repo } = await setup();
    const r1 = await run(t, repo, 'r1', { 'a.txt': 'A\n' });
    await put(t, 's1', { change_id: 'run:r1', file_id: r1.get('a.txt') });
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r2' });
    await t.post({ type: 'tool.started', session_id: 's1', run_id: 'r2', tool_call_id: 't1', name: 'edit' });
    repo.write('a.txt', 'tool\n');
    expect(
      (await t.post({ type: 'tool.completed', session_id: 's1', run_id: 'r2', tool_call_id: 't1' })).body.changed_count,
    ).toBe(1);
    expect((await t.get('/api/hermes/sessions/s1/viewed')).body).toEqual({ viewed: [], rows: [] });
  });

  it('a completion the database refuses keeps the marks; its retry stores the change and resets them together', async () => {
    const { t, repo } = await setup();
    const r1 = await run(t, repo, 'r1', { 'a.txt': 'A\n' });
    await put(t, 's1', { change_id: 'run:r1', file_id: r1.get('a.txt') });
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r2' });
    repo.write('a.txt', Array.from({ length: 2_000 }, (_, i) => `line ${i} of a long file\n`).join(''));
    const db = sqliteDb(t.server.store);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);

    const failed = await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r2' });
    expect(failed.status).toBe(500);
    expect(paths((await t.get('/api/hermes/sessions/s1/viewed')).body)).toEqual(['a.txt']);

    db.pragma('max_page_count = 1073741823');
    expect((await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r2' })).status).toBe(200);
    expect(paths((await t.get('/api/hermes/sessions/s1/viewed')).body)).toEqual([]);
  });

  it('unknown session, change or file is 404; a file of another session is 404; bad input is a clear 400', async () => {
    const { t, repo } = await setup();
    const ids = await run(t, repo, 'r1', { 'a.txt': 'A\n' });
    await t.post({ type: 'session.upsert', session_id: 's2' });
    const id = ids.get('a.txt')!;
    const notFound = async (res: Promise<{ status: number; body: { error: { code: string; message: string } } }>) => {
      const r = await res;
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('not_found');
      return r.body.error.message;
    };
    expect(await notFound(t.get('/api/hermes/sessions/nope/viewed'))).toContain('no session');
    expect(await notFound(put(t, 'nope', { change_id: 'run:r1', file_id: id }))).toContain('no session');
    expect(await notFound(put(t, 's1', { change_id: 'run:r9', file_id: id }))).toContain('no file');
    expect(await notFound(put(t, 's1', { change_id: 'run:r1', file_id: 'nope' }))).toContain('no file');
    expect(await notFound(put(t, 's2', { change_id: 'run:r1', file_id: id }))).toContain('no file');
    expect(await notFound(del(t, 's2', 'run:r1', id))).toContain('no file');

    const bad = async (res: ReturnType<typeof put>, field: string | null, text: RegExp) => {
      const r = await res;
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('invalid_input');
      expect(r.body.error.message).toMatch(text);
      if (field) expect(r.body.error.details).toEqual({ field });
    };
    await bad(put(t, 's1', { file_id: id }), 'change_id', /change_id is missing/);
    await bad(put(t, 's1', { change_id: 'run:r1' }), 'file_id', /file_id is missing/);
    await bad(put(t, 's1', { change_id: 'r1', file_id: id }), 'change_id', /run:<run_id> or tool:<tool_call_id>/);
    await bad(put(t, 's1', { change_id: 'run:r1', file_id: 7 }), 'file_id', /file_id must be/);
    await bad(put(t, 's1', [1]), null, /must name change_id and file_id/);
    await bad(
      t.request('DELETE', '/api/hermes/sessions/s1/viewed?change_id=run%3Ar1'),
      'file_id',
      /file_id is missing/,
    );
    expect(sqliteDb(t.server.store).prepare('SELECT COUNT(*) AS n FROM viewed_marks').get()).toEqual({ n: 0 });
    // control: the same call with the right ids is answered
    expect((await put(t, 's1', { change_id: 'run:r1', file_id: id })).status).toBe(200);
  });

  it('deleting the session removes its marks', async () => {
    const { t, repo } = await setup();
    const ids = await run(t, repo, 'r1', { 'a.txt': 'A\n' });
    await put(t, 's1', { change_id: 'run:r1', file_id: ids.get('a.txt') });
    const count = () => sqliteDb(t.server.store).prepare('SELECT COUNT(*) AS n FROM viewed_marks').get();
    expect(count()).toEqual({ n: 1 });
    expect((await t.request('DELETE', '/api/hermes/sessions/s1')).status).toBe(204);
    expect(count()).toEqual({ n: 0 });
    expect((await t.get('/api/hermes/sessions/s1/viewed')).status).toBe(404);
  });
});

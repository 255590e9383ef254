import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createReviewReaders, MAX_MCP_WORKSPACES } from '../review/index.ts';
import { openStore, openStoreFrom } from '../store/index.ts';
import { createTempDir, createTempRepo } from '../test-support/index.ts';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';

/**
 * `GET .../review/reader`: who reads a review sent from a session, decided from what the server
 * knows (the agent whose hooks report the session and whether its hook answers can carry a review,
 * MCP clients that fetched reviews of the workspace), so "Send to agent" can say so before sending.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<{ t: TestServer; ws: string }> {
  const t = await startTestServer();
  cleanups.push(() => t.close());
  const repo = createTempRepo({ files: { 'a.txt': 'one\n' } });
  cleanups.push(() => repo.cleanup());
  return { t, ws: repo.dir };
}

const reader = async (t: TestServer, id: string) =>
  (await t.get(`/api/hermes/sessions/${encodeURIComponent(id)}/review/reader`)).body;
const hook = (t: TestServer, agent: string, body: unknown) =>
  t.request('POST', `/api/hooks/${agent}`, {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('who reads a review', () => {
  it('a rundiff run session: nobody, and the text says to copy it', async () => {
    const { t, ws } = await setup();
    await t.post({ type: 'session.upsert', session_id: 'cli', workspace: ws });
    await t.post({ type: 'run.started', session_id: 'cli', run_id: 'r1', source: 'run' });
    const r = await reader(t, 'cli');
    expect(r.reader).toMatchObject({ channel: 'none', agent: null });
    expect(r.reader.text).toContain('rundiff run session');
    expect(r.reader.text).toContain('Copy the review text');
  });

  it('a Claude Code session reported by its hooks: the hook, at its next prompt', async () => {
    const { t, ws } = await setup();
    const res = await hook(t, 'claude-code', {
      session_id: 'cc1',
      cwd: ws,
      hook_event_name: 'UserPromptSubmit',
      prompt_id: 'p1',
      prompt: 'fix it',
    });
    expect(res.status).toBe(200);
    const r = await reader(t, 'claude-code:cc1');
    expect(r.reader).toMatchObject({ channel: 'hook', agent: 'claude-code' });
    expect(r.reader.text).toContain('next prompt');
  });

  it('an agent whose hooks cannot carry a review (Cursor): nobody until an MCP client of its workspace fetches reviews', async () => {
    const { t, ws } = await setup();
    const file = new URL('../hooks/fixtures/cursor/sequence.json', import.meta.url);
    const payloads = JSON.parse(fs.readFileSync(file, 'utf8').replaceAll('/home/dev/project', ws)) as unknown[];
    for (const p of payloads) expect((await hook(t, 'cursor', p)).status).toBe(200);
    const sessions = (await t.get('/api/hermes/sessions')).body.sessions as { id: string }[];
    const id = sessions.find((s) => s.id.startsWith('cursor:'))!.id;
    const before = await reader(t, id);
    expect(before.reader).toMatchObject({ channel: 'none', agent: 'cursor' });
    expect(before.reader.text).toContain("cursor's hooks cannot carry a review");
    // What rundiff mcp --server calls for review_comments.
    const pull = await t.request('POST', '/api/reviews/deliver', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workspaces: [ws], agent: 'cursor-mcp 1.0' }),
    });
    expect(pull.status).toBe(200);
    const after = await reader(t, id);
    expect(after.reader).toMatchObject({ channel: 'mcp', agent: 'cursor-mcp 1.0' });
    expect(after.reader.text).toContain('review_comments');
  });

  it('a review delivered by MCP earlier counts after a restart (the server no longer remembers the fetch)', async () => {
    const { t, ws } = await setup();
    await t.post({ type: 'session.upsert', session_id: 'wf', workspace: ws });
    await t.post({ type: 'run.started', session_id: 'wf', run_id: 'r1', source: 'workflow' });
    // The same database as the server's, on either engine.
    const store = await openStoreFrom({ dbPath: t.dbPath, databaseUrl: t.databaseUrl });
    cleanups.push(() => store.close());
    const readers = createReviewReaders({ hooks: { knows: () => false, delivers: () => false }, store });
    expect((await readers.readerOf('wf'))!.channel).toBe('none');
    await t.request('POST', '/api/hermes/sessions/wf/reviews', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ note: 'Please add tests.' }),
    });
    await t.request('POST', '/api/reviews/deliver', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workspaces: [ws], agent: 'claude-desktop' }),
    });
    // A fresh reader (as after a restart) has seen no fetch, but the stored delivery says MCP reads it.
    expect(await readers.readerOf('wf')).toMatchObject({ channel: 'mcp', agent: 'claude-desktop' });
    expect(await readers.readerOf('missing')).toBeNull();
    expect((await t.get('/api/hermes/sessions/missing/review/reader')).status).toBe(404);
  });

  it(`remembers MCP readers of at most ${MAX_MCP_WORKSPACES} workspaces, the least recently seen forgotten first`, async () => {
    const dir = createTempDir();
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const store = openStore(`${dir}/r.db`);
    cleanups.push(() => store.close());
    await store.sessions.upsert('s', { workspace: '/w/0' }, 1);
    const readers = createReviewReaders({ hooks: { knows: () => false, delivers: () => false }, store });
    readers.mcpSeen(['/w/0'], 'first');
    for (let i = 1; i < MAX_MCP_WORKSPACES; i++) readers.mcpSeen([`/w/${i}`], null);
    expect((await readers.readerOf('s'))!.channel).toBe('mcp');
    readers.mcpSeen([`/w/${MAX_MCP_WORKSPACES}`], null);
    expect((await readers.readerOf('s'))!.channel).toBe('none');
  });
});

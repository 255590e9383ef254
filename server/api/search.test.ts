import { afterEach, describe, expect, it } from 'vitest';
import type { SearchResponse } from '../../shared/index.ts';
import { createTempRepo } from '../test-support/temp-repo.ts';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * A recorded agent session: a prompt, a tool call that runs prettier and edits a file (line 3 of 4
 * changes), the reply; and a second session whose run failed.
 */
async function recorded(): Promise<TestServer> {
  const t = await startTestServer();
  cleanups.push(() => t.close());
  const r = createTempRepo({ files: { 'src/app.ts': 'one\ntwo\nthree\nfour\n' } });
  cleanups.push(() => r.cleanup());
  const s = 'claude-code:s1';
  await t.post({ type: 'session.upsert', session_id: s, title: 'Format the app', workspace: r.dir });
  await t.post({ type: 'run.started', session_id: s, run_id: 'r1', workspace: r.dir });
  await t.post({ type: 'message', session_id: s, run_id: 'r1', role: 'user', content: 'Run prettier please' });
  await t.post({ type: 'tool.started', session_id: s, run_id: 'r1', tool_call_id: 't1', name: 'npx prettier --write' });
  r.write('src/app.ts', 'one\ntwo\nTHREE formatted by prettier\nfour\n');
  await t.post({ type: 'tool.completed', session_id: s, run_id: 'r1', tool_call_id: 't1' });
  await t.post({ type: 'message', session_id: s, run_id: 'r1', role: 'assistant', content: 'Formatted.' });
  await t.post({ type: 'run.completed', session_id: s, run_id: 'r1' });
  await t.post({ type: 'session.upsert', session_id: 'other', title: 'Prettier config' });
  await t.post({ type: 'run.started', session_id: 'other', run_id: 'r9' });
  await t.post({ type: 'run.failed', session_id: 'other', run_id: 'r9', error: 'exit 1' });
  return t;
}

const search = async (t: TestServer, q: string, extra = '') =>
  (await t.get(`/api/hermes/search?q=${encodeURIComponent(q)}${extra}`)).body as SearchResponse;

describe('GET /api/hermes/search', () => {
  it('a patch hit names its session, run, change, file and the line in the new file, the match marked', async () => {
    const t = await recorded();
    const found = await search(t, '"formatted by"');
    const patches = found.hits.filter((h) => h.kind === 'patch');
    // The run's change and the tool call's change both hold the file.
    expect(patches.length).toBe(2);
    for (const h of patches) {
      expect(h).toMatchObject({
        session_id: 'claude-code:s1',
        run_id: 'r1',
        path: 'src/app.ts',
        line: 3,
        side: 'after',
        snippet: '+THREE formatted by prettier',
        matches: [{ start: 7, end: 19 }],
      });
      const file = await t.get(
        `/api/hermes/sessions/claude-code%3As1/workspace-run-changes/${encodeURIComponent(h.change_id!)}/files/${h.file_id!}`,
      );
      expect(file.status).toBe(200);
    }
    expect(new Set(patches.map((h) => h.change_id))).toEqual(new Set(['run:r1', 'tool:t1']));
    expect(patches.find((h) => h.change_id === 'tool:t1')?.tool_call_id).toBe('t1');
  });

  it('a removed line points at the old file; words need not be side by side, a phrase must', async () => {
    const t = await recorded();
    const [hit] = (await search(t, 'three kind:patch', '&limit=1')).hits;
    expect(hit).toMatchObject({ line: 3, side: 'before', snippet: '-three', matches: [{ start: 1, end: 6 }] });
    expect((await search(t, 'prettier three kind:patch')).hits[0]).toMatchObject({ line: 3, side: 'after' });
    expect((await search(t, '"prettier three"')).hits).toEqual([]);
  });

  it('finds prompts, commands, replies and titles across sessions, filtered by agent, status and session', async () => {
    const t = await recorded();
    const kinds = async (q: string, extra = '') =>
      (await search(t, q, extra)).hits.map((h) => `${h.session_id} ${h.kind}`);
    expect(await kinds('prettier kind:prompt,command,title')).toEqual([
      'other title',
      'claude-code:s1 command',
      'claude-code:s1 prompt',
    ]);
    expect(await kinds('prettier agent:claude-code kind:prompt')).toEqual(['claude-code:s1 prompt']);
    expect(await kinds('prettier status:failed')).toEqual([]);
    expect(await kinds('config', '&session=other')).toEqual(['other title']);
    expect(await kinds('Formatted. kind:reply')).toEqual(['claude-code:s1 reply']);
    expect(await kinds('path:app.ts')).toEqual(['claude-code:s1 path', 'claude-code:s1 path']);
  });

  it("finds a run by its own title (rundiff run --title), apart from its session's", async () => {
    const t = await recorded();
    await t.post({ type: 'run.started', session_id: 'other', run_id: 'r10', title: 'Upgrade the lockfile' });
    const [hit, ...rest] = (await search(t, 'lockfile')).hits;
    expect(rest).toEqual([]);
    expect(hit).toMatchObject({
      kind: 'title',
      session_id: 'other',
      session_title: 'Prettier config',
      run_id: 'r10',
      run_status: 'running',
      snippet: 'Upgrade the lockfile',
    });
    expect((await search(t, 'lockfile status:running')).hits.map((h) => h.run_id)).toEqual(['r10']);
    expect((await search(t, 'lockfile status:failed')).hits).toEqual([]);
    // The session's title is its own hit, with no run.
    expect((await search(t, '"Prettier config"')).hits).toMatchObject([{ kind: 'title', run_id: null }]);
  });

  it('bad syntax is a 400 that says what is wrong', async () => {
    const t = await recorded();
    const refused = async (q: string | null, extra = '') => {
      const res = await t.get(`/api/hermes/search?${q === null ? '' : `q=${encodeURIComponent(q)}`}${extra}`);
      expect(res.status).toBe(400);
      return (res.body as { error: { code: string; message: string } }).error;
    };
    expect((await refused('"unclosed')).message).toMatch(/no closing quote/);
    expect((await refused('status:done x')).message).toMatch(/status: must be one of running, completed, failed/);
    expect((await refused('kind:nope abc')).message).toMatch(/kind: takes title, prompt/);
    expect((await refused('path:a path:b abc')).message).toMatch(/path: may be given once/);
    expect((await refused('ab')).message).toMatch(/at least 3 characters/);
    expect((await refused('x'.repeat(501))).message).toMatch(/at most 500 characters/);
    expect((await refused(Array.from({ length: 17 }, (_, i) => `w${i}x`).join(' '))).message).toMatch(
      /at most 16 words and phrases/,
    );
    // Positive control: 16 are accepted.
    const sixteen = Array.from({ length: 16 }, (_, i) => `w${i}x`).join(' ');
    expect((await t.get(`/api/hermes/search?q=${encodeURIComponent(sixteen)}`)).status).toBe(200);
    expect((await refused(null)).message).toMatch(/q \(the search text\) is required/);
    expect((await refused('abc', '&sort=new')).message).toMatch(/unknown query parameter "sort"/);
    expect((await refused('abc session:x', '&session=y')).message).toMatch(/another session/);
  });
});

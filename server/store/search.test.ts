import { expect, it } from 'vitest';
import type { RunStatus } from '../../shared/index.ts';
import { describeEachEngine } from '../test-support/store-engines.ts';
import { modifiedChange, modifiedFile } from '../test-support/store-fixtures.ts';
import type { SearchCriteria, Store } from './index.ts';

const criteria = (terms: string[], extra: Partial<SearchCriteria> = {}): SearchCriteria => ({
  terms,
  path: null,
  agent: null,
  status: null,
  sessionId: null,
  kinds: null,
  limit: 50,
  maxCandidates: 1000,
  timeoutMs: 2000,
  bodyChars: 65536,
  ...extra,
});

const PATCH = [
  'diff --git a/src/Login.vue b/src/Login.vue',
  '--- a/src/Login.vue',
  '+++ b/src/Login.vue',
  '@@ -10,3 +10,3 @@',
  ' const form = useForm();',
  '-const label = "Sign in";',
  '+const label = "Log in with Prettier";',
].join('\n');

async function run(
  s: Store,
  session: string,
  runId: string,
  status: RunStatus,
  at: number,
  title: string | null = null,
): Promise<void> {
  await s.runs.insertRun({
    run_id: runId,
    session_id: session,
    status,
    title,
    source: 'coding-agent',
    workspace: '/w',
    started_at: at,
    finished_at: at + 1,
    error: null,
    change_id: `run:${runId}`,
    tracking: true,
    reason: null,
  });
}

/** Two sessions: a Claude Code one with a prompt, a reply, a tool call and a changed file; a plain one. */
async function seed(s: Store): Promise<void> {
  await s.sessions.upsert('claude-code:abc', { title: 'Tidy the login form', workspace: '/w' }, 1);
  await run(s, 'claude-code:abc', 'r1', 'failed', 10);
  await s.messages.insert({
    id: 'm1',
    session_id: 'claude-code:abc',
    role: 'user',
    content: 'Please run prettier on the login form',
    run_id: 'r1',
    tool_call_id: null,
    created_at: 11,
  });
  await s.messages.insert({
    id: 'm2',
    session_id: 'claude-code:abc',
    role: 'assistant',
    content: 'Done.\nI formatted src/Login.vue with Prettier.',
    run_id: 'r1',
    tool_call_id: null,
    created_at: 14,
  });
  await s.runs.insertToolCall({
    tool_call_id: 't1',
    run_id: 'r1',
    session_id: 'claude-code:abc',
    name: 'npx prettier --write src',
    status: 'completed',
    started_at: 12,
    finished_at: 13,
    error: null,
    change_id: 'tool:t1',
    tracking: true,
    reason: null,
    workspace: '/w',
  });
  const c = modifiedChange('claude-code:abc', 'r1', 15, [modifiedFile('src/Login.vue', PATCH, 1)]);
  await s.changes.insert(c.change, c.files, 200);
  await s.sessions.upsert('plain', { title: 'Nightly build', workspace: '/w' }, 2);
  await run(s, 'plain', 'r2', 'completed', 20);
  await s.messages.insert({
    id: 'm1',
    session_id: 'plain',
    role: 'user',
    content: 'npm run build && prettier --check',
    run_id: 'r2',
    tool_call_id: null,
    created_at: 21,
  });
}

describeEachEngine('search', (engine) => {
  it('finds a word in prompts, replies, commands and patches, newest stored first, case-insensitive', async () => {
    const s = await engine.open();
    await seed(s);
    const found = await s.search.search(criteria(['PRETTIER']));
    expect(found.rows.map((r) => [r.session_id, r.kind, r.ref])).toEqual([
      ['plain', 'prompt', 'm1'],
      ['claude-code:abc', 'patch', expect.any(String)],
      ['claude-code:abc', 'command', 't1'],
      ['claude-code:abc', 'reply', 'm2'],
      ['claude-code:abc', 'prompt', 'm1'],
    ]);
    const patch = found.rows[1]!;
    expect(patch).toMatchObject({ run_id: 'r1', run_status: 'failed', change_id: 'run:r1', path: 'src/Login.vue' });
    expect(patch.body).toBe(PATCH);
    expect(found.rows[2]).toMatchObject({ run_id: 'r1', tool_call_id: 't1', at: 12 });
    expect(found).toMatchObject({ more: false, capped: false, timed_out: false });
  });

  it('every word must match; a phrase matches only as written', async () => {
    const s = await engine.open();
    await seed(s);
    const refs = async (terms: string[]) => (await s.search.search(criteria(terms))).rows.map((r) => r.kind);
    expect(await refs(['prettier', 'login'])).toEqual(['patch', 'reply', 'prompt']);
    expect(await refs(['run prettier'])).toEqual(['prompt']);
    expect(await refs(['prettier run'])).toEqual([]);
    // A term shorter than the index's trigrams is checked on the rows the long ones found.
    expect(await refs(['prettier', '&&'])).toEqual(['prompt']);
  });

  it('filters by path, agent, run status, session and kind', async () => {
    const s = await engine.open();
    await seed(s);
    const kinds = async (extra: Partial<SearchCriteria>, terms = ['prettier']) =>
      (await s.search.search(criteria(terms, extra))).rows.map((r) => `${r.session_id} ${r.kind}`);
    expect(await kinds({ path: 'login.VUE' })).toEqual(['claude-code:abc patch']);
    expect(await kinds({ agent: 'claude-code', kinds: ['prompt', 'reply'] })).toEqual([
      'claude-code:abc reply',
      'claude-code:abc prompt',
    ]);
    expect(await kinds({ status: 'completed' })).toEqual(['plain prompt']);
    expect(await kinds({ sessionId: 'plain' })).toEqual(['plain prompt']);
    expect(await kinds({ kinds: ['title'] }, ['login'])).toEqual(['claude-code:abc title']);
    // One session is read through its own rows, so a short word alone is enough there.
    expect(await kinds({ sessionId: 'plain' }, ['&&'])).toEqual(['plain prompt']);
  });

  it('indexes a path and a rename, a renamed title and an edited message, and forgets removed rows', async () => {
    const s = await engine.open();
    await seed(s);
    const kinds = async (term: string) => (await s.search.search(criteria([term]))).rows.map((r) => r.kind);
    expect(await kinds('Login.vue')).toEqual(['patch', 'path', 'reply']);
    await s.sessions.upsert('plain', { title: 'Weekly release' }, 3);
    expect(await kinds('Nightly')).toEqual([]);
    expect(await kinds('Weekly')).toEqual(['title']);
    await s.messages.update({
      id: 'm1',
      session_id: 'plain',
      role: 'user',
      content: 'npm test',
      run_id: 'r2',
      tool_call_id: null,
      created_at: 21,
    });
    expect(await kinds('--check')).toEqual([]);
    expect(await s.changes.deleteOlderThan(100)).toBe(1);
    expect(await kinds('Login.vue')).toEqual(['reply']);
    expect(await s.sessions.delete('claude-code:abc')).toBe(true);
    expect(await kinds('prettier')).toEqual([]);
    expect(await engine.count(s, 'search_docs')).toBe(2); // plain's title and prompt
  });

  it("finds a run by its own title, apart from its session's, and filters it by the run's status", async () => {
    const s = await engine.open();
    await seed(s);
    await run(s, 'plain', 'r3', 'running', 30, 'Bump the lockfile');
    const titles = async (term: string) =>
      (await s.search.search(criteria([term], { kinds: ['title'] }))).rows.map((r) => [r.session_id, r.ref, r.run_id]);
    expect(await titles('lockfile')).toEqual([['plain', 'r3', 'r3']]);
    const hit = (await s.search.search(criteria(['lockfile']))).rows[0]!;
    expect(hit).toMatchObject({
      kind: 'title',
      run_id: 'r3',
      run_status: 'running',
      session_title: 'Nightly build',
      at: 30,
    });
    // The session's own title is still its document (ref ''), with no run.
    expect(await titles('Nightly')).toEqual([['plain', '', null]]);
    // Filters hold for a run's title as for its other documents.
    expect(await titles('lockfile')).toEqual(await titles('LOCKFILE'));
    expect((await s.search.search(criteria(['lockfile'], { status: 'failed' }))).rows).toEqual([]);
    await s.runs.finish('run', 'plain', 'r3', {
      status: 'failed',
      finished_at: 31,
      error: 'boom',
      tracking: true,
      reason: null,
      response: null,
    } as never);
    expect((await s.search.search(criteria(['lockfile'], { status: 'failed' }))).rows.map((r) => r.ref)).toEqual([
      'r3',
    ]);
    await s.sessions.delete('plain');
    expect(await titles('lockfile')).toEqual([]);
  });

  it("keeps each document's run status current: a run finished later, a document stored before its run", async () => {
    const s = await engine.open();
    await s.sessions.upsert('x', { title: 't' }, 1);
    // The prompt is stored before its run exists (the order a hook may deliver them in).
    await s.messages.insert({
      id: 'm1',
      session_id: 'x',
      role: 'user',
      content: 'reformat everything',
      run_id: 'r1',
      tool_call_id: null,
      created_at: 2,
    });
    const statuses = async (status: RunStatus) =>
      (await s.search.search(criteria(['reformat'], { status }))).rows.map((r) => r.ref);
    expect(await statuses('running')).toEqual([]);
    await run(s, 'x', 'r1', 'running', 3);
    expect(await statuses('running')).toEqual(['m1']);
    await s.runs.finish('run', 'x', 'r1', {
      status: 'completed',
      finished_at: 4,
      error: null,
      tracking: true,
      reason: null,
      response: null,
    } as never);
    expect(await statuses('running')).toEqual([]);
    expect(await statuses('completed')).toEqual(['m1']);
    // A message moved to another run takes that run's status.
    await run(s, 'x', 'r2', 'failed', 5);
    await s.messages.update({
      id: 'm1',
      session_id: 'x',
      role: 'user',
      content: 'reformat everything',
      run_id: 'r2',
      tool_call_id: null,
      created_at: 2,
    });
    expect(await statuses('completed')).toEqual([]);
    expect((await s.search.search(criteria(['reformat'], { status: 'failed' }))).rows).toMatchObject([
      { ref: 'm1', run_id: 'r2', run_status: 'failed' },
    ]);
  });

  it("paths alone are read from their own index: a path, a rename's old path, never a patch naming it", async () => {
    const s = await engine.open();
    await seed(s);
    const renamed = modifiedFile('src/SignIn.vue', '@@ -1 +1 @@\n-a\n+b', 1, {
      change_type: 'renamed',
      old_path: 'src/OldLogin.vue',
    });
    const c = modifiedChange('claude-code:abc', 'r1', 16, [renamed], { change_id: 'run:r1b' });
    await s.changes.insert(c.change, c.files, 200);
    const paths = async (term: string) =>
      (await s.search.search(criteria([term], { kinds: ['path'] }))).rows.map((r) => [r.kind, r.path, r.run_id]);
    // The seed's patch names src/Login.vue in its header too: only the path document is a path hit.
    expect(await paths('login.vue')).toEqual([
      ['path', 'src/SignIn.vue', 'r1'],
      ['path', 'src/Login.vue', 'r1'],
    ]);
    expect(await paths('OldLogin')).toEqual([['path', 'src/SignIn.vue', 'r1']]);
    expect(await paths('SignIn')).toEqual([['path', 'src/SignIn.vue', 'r1']]);
    expect(await s.changes.deleteOlderThan(100)).toBe(2);
    expect(await paths('login.vue')).toEqual([]);
  });

  it('a document is written in the storing transaction: rolled back with it, committed with it', async () => {
    const s = await engine.open();
    await s.sessions.upsert('x', { title: 't' }, 1);
    const message = (id: string, content: string) => ({
      id,
      session_id: 'x',
      role: 'user' as const,
      content,
      run_id: null,
      tool_call_id: null,
      created_at: 2,
    });
    const failed = s.transaction(async (tx) => {
      await tx.messages.insert(message('m1', 'rolled back words'));
      expect((await tx.search.search(criteria(['rolled back']))).rows).toHaveLength(1);
      throw new Error('undo');
    });
    await expect(failed).rejects.toThrow('undo');
    expect((await s.search.search(criteria(['rolled back']))).rows).toEqual([]);
    await s.transaction(async (tx) => tx.messages.insert(message('m2', 'committed words')));
    expect((await s.search.search(criteria(['committed']))).rows.map((r) => r.ref)).toEqual(['m2']);
  });

  it('indexes at most the set number of patch characters per file', async () => {
    const s = await engine.open();
    await s.search.setPatchChars(60);
    await s.sessions.upsert('x', { title: 't' }, 1);
    const long = `@@ -1 +1 @@\n+${'a'.repeat(100)}needle-at-the-end`;
    const c = modifiedChange('x', 'r1', 5, [modifiedFile('f.txt', long, 1)]);
    await s.changes.insert(c.change, c.files, 200);
    expect((await s.search.search(criteria(['needle-at']))).rows).toEqual([]);
    expect((await s.search.search(criteria(['aaaa'], { kinds: ['patch'] }))).rows[0]?.body).toHaveLength(60);
  });

  it('looks at no more than maxCandidates documents and says so; limit says whether more exist', async () => {
    const s = await engine.open();
    await seed(s);
    const capped = await s.search.search(criteria(['prettier'], { maxCandidates: 2 }));
    expect(capped.rows.map((r) => r.kind)).toEqual(['prompt', 'patch']);
    expect(capped.capped).toBe(true);
    // Filters that leave nothing of the candidates still say that older ones were not looked at.
    const none = await s.search.search(criteria(['prettier'], { maxCandidates: 2, kinds: ['command'] }));
    expect(none).toMatchObject({ rows: [], capped: true });
    const limited = await s.search.search(criteria(['prettier'], { limit: 2 }));
    expect(limited).toMatchObject({ more: true, capped: false });
    expect(limited.rows).toHaveLength(2);
  });

  it('a page filled before the bound is not capped: no older document was needed', async () => {
    const s = await engine.open();
    await seed(s);
    // Five documents hold the word: the page of two and the one more that says `more` are the newest three.
    const full = await s.search.search(criteria(['prettier'], { maxCandidates: 3, limit: 2 }));
    expect(full).toMatchObject({ more: true, capped: false });
    expect(full.rows.map((r) => r.kind)).toEqual(['prompt', 'patch']);
    // The bound one lower: the page is not full before it, so older documents were left out.
    const short = await s.search.search(criteria(['prettier'], { maxCandidates: 2, limit: 2 }));
    expect(short).toMatchObject({ more: false, capped: true });
    // The same within one session: its newest documents are the patch, the path (no match), the command.
    const session = { sessionId: 'claude-code:abc', limit: 1 };
    expect(await s.search.search(criteria(['prettier'], { ...session, maxCandidates: 3 }))).toMatchObject({
      more: true,
      capped: false,
    });
    expect(await s.search.search(criteria(['prettier'], { ...session, maxCandidates: 2 }))).toMatchObject({
      more: false,
      capped: true,
    });
  });
});

describeEachEngine('search time bound', (engine) => {
  it('a statement past the time bound fails as timed out; within it, it runs (PostgreSQL; SQLite has none)', async () => {
    const sql = await engine.openSql();
    const bound = sql.dialect.statementTimeout(50);
    if (engine.name === 'sqlite') {
      // SQLite's statements cannot be stopped from JavaScript: its searches are bounded by rows.
      expect(bound).toBeNull();
      return;
    }
    const sleep = (timeoutMs: number) =>
      sql.read(async (q) => {
        await q.run(sql.dialect.statementTimeout(timeoutMs)!);
        await q.get('SELECT pg_sleep(0.3)');
      });
    // Positive control: the same sleep within a larger bound completes.
    await expect(sleep(5_000)).resolves.toBeUndefined();
    const err: unknown = await sleep(50).catch((e: unknown) => e);
    expect(sql.dialect.timedOut(err)).toBe(true);
    expect(sql.dialect.timedOut(new Error('other'))).toBe(false);
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempDir, createTempRepo, type TempRepo } from '../test-support/temp-repo.ts';
import { startTestServer, type RawResponse, type TestServer } from '../test-support/server-harness.ts';

/**
 * The git tools over REST against the real server (port 0, real SQLite) and real repositories:
 * shapes and statuses of every tool, the commit gate scoped by tool_session, repository choice,
 * the guards, run_changes on open and finished runs, and the call log.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
async function setup(opts: Parameters<typeof startTestServer>[0] = {}) {
  const t = await startTestServer(opts);
  cleanups.push(() => t.close());
  return t;
}
function repo(files: Record<string, string> = { 'a.txt': 'one\n', 'b.txt': 'bee\n' }): TempRepo {
  const r = createTempRepo({ files });
  r.git('config', 'user.name', 'Agent');
  r.git('config', 'user.email', 'agent@example.invalid');
  cleanups.push(() => r.cleanup());
  return r;
}
function tool(t: TestServer, name: string, body: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
  return t.request('POST', `/api/tools/${name}`, {
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}
function expectError(res: RawResponse, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
  expect(res.text).not.toMatch(/\n\s+at /);
}
async function session(t: TestServer, id: string, workspace: string, headers: Record<string, string> = {}) {
  expect((await t.post({ type: 'session.upsert', session_id: id, workspace }, headers)).status).toBe(200);
}
const calls = async (t: TestServer, q = '') =>
  (await t.get(`/api/tools/calls${q}`)).body.calls as Record<string, unknown>[];

describe('git tools over REST', () => {
  it('every git tool answers its output shape; a reviewed commit lands', async () => {
    const t = await setup();
    const r = repo();
    await session(t, 's1', r.dir);
    r.write('a.txt', 'two\n');
    r.write('new.txt', 'fresh\n');

    const status = await tool(t, 'git_status', { session_id: 's1' });
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({
      branch: 'main',
      detached: false,
      unborn: false,
      clean: false,
      staged: [],
      unstaged: ['a.txt'],
      untracked: ['new.txt'],
      conflicted: [],
    });
    const diff = await tool(t, 'git_diff', { session_id: 's1', tool_session: 'ts-1' });
    expect(diff.status).toBe(200);
    expect(diff.body).toMatchObject({ files_changed: 2, truncated: false, omitted: [], next_offset: null });
    expect(diff.body.diff).toContain('+two');
    expect(diff.body.files.map((f: { path: string }) => f.path)).toEqual(['a.txt', 'new.txt']);

    const commit = await tool(t, 'git_commit', {
      session_id: 's1',
      tool_session: 'ts-1',
      message: 'Say two',
      paths: ['a.txt', 'new.txt'],
    });
    expect(commit.status).toBe(200);
    expect(commit.body.hash).toBe(r.git('rev-parse', 'HEAD').trim());
    expect(commit.body.files).toEqual([
      { path: 'a.txt', additions: 1, deletions: 1 },
      { path: 'new.txt', additions: 1, deletions: 0 },
    ]);

    const log = await tool(t, 'git_log', { session_id: 's1', limit: 1 });
    expect(log.body).toMatchObject({ commits: [{ hash: commit.body.hash, subject: 'Say two', author_name: 'Agent' }] });
    const show = await tool(t, 'git_show', { session_id: 's1', ref: 'HEAD' });
    expect(show.body).toMatchObject({ commit: { hash: commit.body.hash, body: '' }, truncated: false });
    expect(show.body.diff).toContain('+fresh');
    const branch = await tool(t, 'git_branch', { session_id: 's1' });
    expect(branch.body).toEqual({ current: 'main', detached: false, branches: [{ name: 'main', upstream: null }] });
  });

  it('a planted core.worktree naming another existing folder: git_status and git_diff answer for the workspace', async () => {
    const t = await setup();
    const elsewhere = createTempDir('rundiff-elsewhere-');
    cleanups.push(() => fs.rmSync(elsewhere, { recursive: true, force: true }));
    fs.writeFileSync(path.join(elsewhere, 'decoy.txt'), 'decoy\n');
    const r = repo();
    r.git('config', 'core.worktree', elsewhere);
    await session(t, 's1', r.dir);
    r.write('a.txt', 'two\n');
    r.write('new.txt', 'fresh\n');
    const status = await tool(t, 'git_status', { session_id: 's1' });
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ staged: [], unstaged: ['a.txt'], untracked: ['new.txt'], clean: false });
    const diff = await tool(t, 'git_diff', { session_id: 's1', tool_session: 'ts-1' });
    expect(diff.status).toBe(200);
    expect(diff.body.files.map((f: { path: string }) => f.path)).toEqual(['a.txt', 'new.txt']);
  });
  it('git_diff and git_commit need tool_session (invalid_input); bad inputs, refs and paths are 400', async () => {
    const t = await setup();
    const r = repo();
    await session(t, 's1', r.dir);
    r.write('a.txt', 'two\n');
    expectError(await tool(t, 'git_diff', {}), 400, 'invalid_input');
    expectError(await tool(t, 'git_commit', { message: 'x', paths: ['a.txt'] }), 400, 'invalid_input');
    expectError(await tool(t, 'git_diff', { tool_session: '' }), 400, 'invalid_input');
    expectError(await tool(t, 'git_status', { stagd: true }), 400, 'invalid_input');
    expectError(await tool(t, 'git_log', { limit: 201 }), 400, 'invalid_input');
    expectError(await tool(t, 'git_status', { session_id: 'bad\u0001id' }), 400, 'invalid_input');
    expectError(await tool(t, 'git_status', [1, 2]), 400, 'invalid_input');
    expectError(await tool(t, 'git_show', { ref: '--output=x.txt' }), 400, 'invalid_ref');
    expect(fs.existsSync(path.join(r.dir, 'x.txt'))).toBe(false);
    expectError(await tool(t, 'git_diff', { tool_session: 'x', path: '../../etc/passwd' }), 400, 'invalid_input');
    expect(r.read('a.txt').toString()).toBe('two\n'); // nothing lost
  });

  it('an unknown tool is 404 not_found and is not logged', async () => {
    const t = await setup();
    const res = await tool(t, 'git_push', {});
    expectError(res, 404, 'not_found');
    expect(res.body.error.details.tools).toContain('run_changes');
    expect(await calls(t)).toEqual([]);
  });

  it('the gate is scoped by tool_session: a diff in session A does not let session B commit', async () => {
    const t = await setup();
    const r = repo();
    await session(t, 's1', r.dir);
    const head = r.git('rev-parse', 'HEAD').trim();
    r.write('a.txt', 'two\n');
    expect((await tool(t, 'git_diff', { tool_session: 'A' })).status).toBe(200);
    const refused = await tool(t, 'git_commit', { tool_session: 'B', message: 'x', paths: ['a.txt'] });
    expectError(refused, 409, 'review_required');
    expect(refused.body.error.details.files).toEqual(['a.txt']);
    expect(r.git('rev-parse', 'HEAD').trim()).toBe(head);
    const ok = await tool(t, 'git_commit', { tool_session: 'A', message: 'x', paths: ['a.txt'] });
    expect(ok.status).toBe(200);
    // one review, one commit
    r.write('a.txt', 'three\n');
    expectError(
      await tool(t, 'git_commit', { tool_session: 'A', message: 'y', paths: ['a.txt'] }),
      409,
      'review_required',
    );
  });

  it('stale_review, nothing_to_commit and index_locked keep their 409 statuses', async () => {
    const t = await setup();
    const r = repo();
    await session(t, 's1', r.dir);
    r.write('a.txt', 'two\n');
    await tool(t, 'git_diff', { tool_session: 'A' });
    r.write('a.txt', 'changed after the review\n');
    expectError(
      await tool(t, 'git_commit', { tool_session: 'A', message: 'x', paths: ['a.txt'] }),
      409,
      'stale_review',
    );
    await tool(t, 'git_diff', { tool_session: 'A', staged: true });
    expectError(await tool(t, 'git_commit', { tool_session: 'A', message: 'x' }), 409, 'nothing_to_commit');
    fs.writeFileSync(path.join(r.dir, '.git', 'index.lock'), '');
    expectError(
      await tool(t, 'git_commit', { tool_session: 'A', message: 'x', paths: ['a.txt'] }),
      409,
      'index_locked',
    );
  });
});

describe('which repository a REST call means', () => {
  it('absent repository: the session_id workspace, else the only one, else repository_ambiguous with candidates', async () => {
    const t = await setup();
    const one = repo({ 'one.txt': '1\n' });
    await session(t, 's1', one.dir);
    expect((await tool(t, 'git_log', {})).body.commits).toHaveLength(1); // the only one
    const two = repo({ 'two.txt': '2\n' });
    await session(t, 's2', two.dir);
    const amb = await tool(t, 'git_status', {});
    expectError(amb, 409, 'repository_ambiguous');
    expect([...amb.body.error.details.candidates].sort()).toEqual(
      [path.basename(one.dir), path.basename(two.dir)].sort(),
    );
    two.write('two.txt', 'changed\n');
    expect((await tool(t, 'git_status', { session_id: 's2' })).body.unstaged).toEqual(['two.txt']);
    expect((await tool(t, 'git_status', { session_id: 's1' })).body.clean).toBe(true);
    expect((await tool(t, 'git_status', { repository: path.basename(two.dir) })).body.unstaged).toEqual(['two.txt']);
    expect((await tool(t, 'git_status', { repository: two.dir })).body.unstaged).toEqual(['two.txt']);
    const missing = await tool(t, 'git_status', { repository: 'nope' });
    expectError(missing, 404, 'repository_not_found');
    expect(missing.body.error.details.candidates).toHaveLength(2);
    expectError(await tool(t, 'git_status', { session_id: 'unknown' }), 404, 'not_found');
  });

  it('a session whose workspace is no repository is refused, never pointed at another repository', async () => {
    const t = await setup();
    const r = repo();
    await session(t, 'git', r.dir);
    const plain = createTempDir();
    cleanups.push(() => fs.rmSync(plain, { recursive: true, force: true }));
    await session(t, 'plain', plain);
    const res = await tool(t, 'git_status', { session_id: 'plain' });
    expectError(res, 404, 'repository_not_found');
    expect(res.body.error.details.candidates).toEqual([path.basename(r.dir)]);
  });

  it('RUNDIFF_WORKSPACE_ROOTS: repositories directly inside a root, labelled relative to it; outside workspaces are not offered', async () => {
    const root = createTempDir();
    cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
    for (const name of ['api', 'web', 'notes']) fs.mkdirSync(path.join(root, name));
    const api = path.join(root, 'api');
    const web = path.join(root, 'web');
    for (const dir of [api, web]) {
      fs.writeFileSync(path.join(dir, 'f.txt'), `${path.basename(dir)}\n`);
      const { execFileSync } = await import('node:child_process');
      const env = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
      for (const args of [
        ['init', '-q', '-b', 'main'],
        ['add', '-A'],
        ['-c', 'user.name=T', '-c', 'user.email=t@example.invalid', 'commit', '-qm', `init ${path.basename(dir)}`],
      ])
        execFileSync('git', args, { cwd: dir, env });
    }
    const outside = repo();
    const t = await setup({ env: { RUNDIFF_WORKSPACE_ROOTS: root } });
    await session(t, 'out', outside.dir);
    const amb = await tool(t, 'git_status', {});
    expectError(amb, 409, 'repository_ambiguous');
    expect(amb.body.error.details.candidates).toEqual(['api', 'web']);
    expect((await tool(t, 'git_log', { repository: 'web' })).body.commits[0].subject).toBe('init web');
    expectError(await tool(t, 'git_status', { repository: outside.dir }), 404, 'repository_not_found');
  });
});

describe('guards on /api/tools', () => {
  it('a foreign Origin is 403, a non-JSON body 415, and with a token every route needs it (401)', async () => {
    const t = await setup({ env: { RUNDIFF_TOKEN: 'sekret' } });
    const r = repo();
    await session(t, 's1', r.dir, { authorization: 'Bearer sekret' });
    expectError(await tool(t, 'git_status', {}), 401, 'unauthorized');
    expectError(await t.get('/api/tools/calls'), 401, 'unauthorized');
    expectError(await t.get('/api/tools/approvals'), 401, 'unauthorized');
    const auth = { authorization: 'Bearer sekret' };
    expect((await tool(t, 'git_status', {}, auth)).status).toBe(200);
    expectError(await tool(t, 'git_status', {}, { ...auth, origin: 'http://evil.example' }), 403, 'forbidden_origin');
    expectError(await tool(t, 'git_status', {}, { ...auth, host: 'evil.example:80' }), 403, 'forbidden_origin');
    const plain = await t.request('POST', '/api/tools/git_status', {
      headers: { ...auth, 'content-type': 'text/plain' },
      body: '{}',
    });
    expectError(plain, 415, 'unsupported_media_type');
    expectError(
      await t.request('POST', '/api/tools/approvals/x', {
        headers: { ...auth, 'content-type': 'application/json', origin: 'http://evil.example' },
        body: '{"decision":"approve"}',
      }),
      403,
      'forbidden_origin',
    );
  });
});

describe('the tool-call log', () => {
  it('records every call (ok or not) newest first with its fields; limit defaults to 50 and is clamped to 200', async () => {
    let clock = 1_000;
    const t = await setup({ now: () => (clock += 1) });
    const r = repo();
    await session(t, 's1', r.dir);
    await tool(t, 'git_status', {});
    await tool(t, 'git_show', { ref: '--evil' });
    await tool(t, 'git_diff', {});
    const got = await calls(t);
    expect(got.map((c) => [c.tool, c.repository, c.ok, c.error_code])).toEqual([
      ['git_diff', null, false, 'invalid_input'],
      ['git_show', path.basename(r.dir), false, 'invalid_ref'],
      ['git_status', path.basename(r.dir), true, null],
    ]);
    for (const c of got) {
      expect(Object.keys(c).sort()).toEqual([
        'arguments',
        'commit',
        'created_at',
        'duration_ms',
        'error_code',
        'id',
        'ok',
        'repository',
        'tool',
      ]);
      expect(typeof c.duration_ms).toBe('number');
    }
    expect((got[0]!.created_at as number) > (got[2]!.created_at as number)).toBe(true);
    expect(await calls(t, '?limit=1')).toHaveLength(1);
    // The page bounds need more than 50 entries: recorded through the log's own route (the calls
    // above already ran git; 60 more git runs would only make the test slow on a loaded machine).
    for (let i = 0; i < 60; i++) {
      const res = await t.request('POST', '/api/tools/calls', {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tool: 'git_branch', repository: 'api', ok: true, error_code: null, duration_ms: 1 }),
      });
      expect(res.status).toBe(201);
    }
    expect(await calls(t)).toHaveLength(50);
    expect(await calls(t, '?limit=1000')).toHaveLength(63);
    expectError(await t.get('/api/tools/calls?limit=abc'), 400, 'invalid_input');
    expectError(await t.get('/api/tools/calls?limit=0'), 400, 'invalid_input');
  });

  it('POST /api/tools/calls records a call run elsewhere; a malformed report is 400 and records nothing', async () => {
    const t = await setup();
    const post = (body: unknown) =>
      t.request('POST', '/api/tools/calls', {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const ok = await post({
      tool: 'git_diff',
      repository: 'api',
      ok: false,
      error_code: 'invalid_ref',
      duration_ms: 3.5,
    });
    expect(ok.status).toBe(201);
    expectError(
      await post({ tool: 'rm_rf', repository: null, ok: true, error_code: null, duration_ms: 1 }),
      400,
      'invalid_input',
    );
    expectError(
      await post({ tool: 'git_diff', repository: null, ok: true, error_code: 'bogus', duration_ms: 1 }),
      400,
      'invalid_input',
    );
    expectError(
      await post({ tool: 'git_diff', repository: null, ok: true, error_code: null, duration_ms: 1, x: 1 }),
      400,
      'invalid_input',
    );
    expect((await calls(t)).map((c) => [c.tool, c.repository, c.error_code, c.duration_ms])).toEqual([
      ['git_diff', 'api', 'invalid_ref', 3.5],
    ]);
  });
});

describe('run_changes over REST', () => {
  it('a half-finished run: open with the edits so far (nothing stored); after completion closed with the same files', async () => {
    const t = await setup();
    const r = repo({ 'a.txt': 'one\n', 'gone.txt': 'bye\n' });
    await session(t, 's1', r.dir);
    const started = await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
    expect(started.body.tracking).toBe(true);
    r.write('a.txt', 'one\ntwo\n');
    r.write('added.txt', 'new\n');
    r.rm('gone.txt');

    const open = await tool(t, 'run_changes', { session_id: 's1', run_id: 'r1' });
    expect(open.status).toBe(200);
    expect(open.body).toMatchObject({ open: true, tracking: true, reason: null });
    expect(open.body.change).toMatchObject({
      change_id: 'run:r1',
      session_id: 's1',
      run_id: 'r1',
      changed_count: 3,
      added_count: 1,
      modified_count: 1,
      deleted_count: 1,
    });
    const rows = (c: { files: { path: string; change_type: string; additions: number; deletions: number }[] }) =>
      c.files.map((f) => `${f.change_type} ${f.path} +${f.additions} -${f.deletions}`);
    expect(rows(open.body.change)).toEqual(['modified a.txt +1 -0', 'added added.txt +1 -0', 'deleted gone.txt +0 -1']);
    expect(open.body.change.files[0]).not.toHaveProperty('patch');
    expect((await t.get('/api/hermes/sessions/s1/workspace-run-changes')).body.changes).toEqual([]);

    // the checkpoint was kept: the completion still sees the whole run
    const done = await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
    expect(done.body.changed_count).toBe(3);
    const closed = await tool(t, 'run_changes', { session_id: 's1' });
    expect(closed.body).toMatchObject({ open: false, tracking: true, reason: null });
    expect(rows(closed.body.change)).toEqual(rows(open.body.change));
    expect(closed.body.change).toEqual(
      (await t.get('/api/hermes/sessions/s1/workspace-run-changes/run%3Ar1')).body.change,
    );
    expect((await calls(t)).map((c) => [c.tool, c.repository, c.ok])).toEqual([
      ['run_changes', path.basename(r.dir), true],
      ['run_changes', path.basename(r.dir), true],
    ]);
  });

  it("absent run_id is the session's newest run; a finished run without changes is changed_count 0 with no files", async () => {
    const t = await setup();
    const r = repo();
    await session(t, 's1', r.dir);
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'first' });
    r.write('a.txt', 'x\n');
    await t.post({ type: 'run.completed', session_id: 's1', run_id: 'first' });
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'quiet' });
    await t.post({ type: 'run.completed', session_id: 's1', run_id: 'quiet' });
    const res = await tool(t, 'run_changes', { session_id: 's1' });
    expect(res.body).toMatchObject({ open: false, tracking: true, reason: null });
    expect(res.body.change).toMatchObject({
      change_id: 'run:quiet',
      run_id: 'quiet',
      changed_count: 0,
      files: [],
      truncated: false,
      truncated_reasons: [],
      omitted_count: 0,
      workspace: r.dir,
      workspace_kind: 'git',
    });
    expect((await tool(t, 'run_changes', { session_id: 's1', run_id: 'first' })).body.change.changed_count).toBe(1);
  });

  it('an untracked run answers tracking: false with its reason (open and finished), never as "no changes" alone', async () => {
    const t = await setup();
    await t.post({ type: 'session.upsert', session_id: 's1', workspace: '/nonexistent/place' });
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
    const open = await tool(t, 'run_changes', { session_id: 's1' });
    expect(open.body).toMatchObject({ open: true, tracking: false, reason: 'workspace_missing' });
    expect(open.body.change).toMatchObject({ changed_count: 0, files: [], truncated: false });
    await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
    expect((await tool(t, 'run_changes', { session_id: 's1' })).body).toMatchObject({
      open: false,
      tracking: false,
      reason: 'workspace_missing',
    });
  });

  it('pages a 120-file change (open, then stored) with cursor and limit: each path once, in path order', async () => {
    const t = await setup();
    const names = Array.from({ length: 120 }, (_, i) => `src/f${String(i).padStart(3, '0')}.txt`);
    const r = repo(Object.fromEntries(names.map((n) => [n, 'old\n'])));
    await session(t, 's1', r.dir);
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
    for (const n of names) r.write(n, 'new\n');

    /** Follows next_cursor from the first page; returns the paths seen and each answer's page size. */
    const walk = async (limit?: number) => {
      const paths: string[] = [];
      const sizes: number[] = [];
      let cursor: string | null = null;
      for (let i = 0; i < 10; i++) {
        const body: Record<string, unknown> = { session_id: 's1', run_id: 'r1' };
        if (limit !== undefined) body.limit = limit;
        if (cursor !== null) body.cursor = cursor;
        const res = await tool(t, 'run_changes', body);
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ files_total: 120, change: { changed_count: 120 } });
        expect(res.body.change).not.toHaveProperty('next_file_cursor');
        paths.push(...res.body.change.files.map((f: { path: string }) => f.path));
        sizes.push(res.body.change.files.length);
        cursor = res.body.next_cursor;
        if (cursor === null) break;
      }
      return { paths, sizes };
    };

    const open = await walk();
    expect(open.sizes).toEqual([50, 50, 20]);
    expect(open.paths).toEqual(names);
    expect((await walk(1000)).sizes).toEqual([120]);

    await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
    const stored = await walk(64);
    expect(stored.sizes).toEqual([64, 56]);
    expect(stored.paths).toEqual(names);
    // A stored page is the REST files page: the same rows, ids included.
    const first = await tool(t, 'run_changes', { session_id: 's1', limit: 3 });
    const rest = await t.get('/api/hermes/sessions/s1/workspace-run-changes/run%3Ar1/files?limit=3');
    expect(first.body.change.files).toEqual(rest.body.files);
    expect(first.body.next_cursor).toBe(rest.body.next_file_cursor);
    // Past the end: no files, no cursor.
    const past = await tool(t, 'run_changes', { session_id: 's1', cursor: '500' });
    expect(past.body).toMatchObject({ files_total: 120, next_cursor: null, change: { files: [] } });

    expectError(await tool(t, 'run_changes', { session_id: 's1', cursor: 'x' }), 400, 'invalid_input');
    expectError(await tool(t, 'run_changes', { session_id: 's1', cursor: '-1' }), 400, 'invalid_input');
    expectError(await tool(t, 'run_changes', { session_id: 's1', limit: 0 }), 400, 'invalid_input');
    expectError(await tool(t, 'run_changes', { session_id: 's1', limit: 1001 }), 400, 'invalid_input');
  });

  it('unknown session or run is 404 not_found; a session without runs too; bad input 400', async () => {
    const t = await setup();
    await t.post({ type: 'session.upsert', session_id: 's1' });
    expectError(await tool(t, 'run_changes', { session_id: 'nope' }), 404, 'not_found');
    expectError(await tool(t, 'run_changes', { session_id: 's1' }), 404, 'not_found');
    expectError(await tool(t, 'run_changes', { session_id: 's1', run_id: 'nope' }), 404, 'not_found');
    expectError(await tool(t, 'run_changes', {}), 400, 'invalid_input');
    expectError(await tool(t, 'run_changes', { session_id: 's1', extra: 1 }), 400, 'invalid_input');
    expect((await calls(t)).every((c) => c.tool === 'run_changes' && c.ok === false)).toBe(true);
  });
});

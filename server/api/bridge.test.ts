import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempDir, createTempRepo, type TempRepo } from '../test-support/temp-repo.ts';
import { connectClient, startTestServer, type TestClient, type TestServer } from '../test-support/server-harness.ts';
import { countRows } from '../test-support/store-engines.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(opts: Parameters<typeof startTestServer>[0] = {}) {
  const t = await startTestServer(opts);
  cleanups.push(() => t.close());
  return t;
}
function repo(files: Record<string, string>, git = true): TempRepo {
  const r = createTempRepo({ files, git });
  cleanups.push(() => r.cleanup());
  return r;
}
async function client(t: TestServer, sessionId: string): Promise<TestClient> {
  const c = await connectClient(t.server.url);
  cleanups.push(() => c.close());
  expect(await c.ask('session.subscribe', { session_id: sessionId })).toEqual({ ok: true });
  expect(await c.ask('sessions.subscribe', {})).toEqual({ ok: true });
  return c;
}
const count = (t: TestServer, table: string) => countRows(t.server.store, table);

const FILE_KEYS = [
  'additions',
  'binary',
  'change_type',
  'deletions',
  'id',
  'old_path',
  'omitted_reason',
  'patch_bytes',
  'path',
  'size_after',
  'size_before',
  'truncated',
];
const CHANGE_KEYS = [
  'added_count',
  'binary_count',
  'change_id',
  'changed_count',
  'created_at',
  'deleted_count',
  'files',
  'finished_at',
  'modified_count',
  'omitted_count',
  'overlapping',
  'renamed_count',
  'run_id',
  'session_id',
  'source',
  'started_at',
  'tool_call_id',
  'total_additions',
  'total_deletions',
  'total_patch_bytes',
  'truncated',
  'truncated_reasons',
  'workspace',
  'workspace_kind',
];
const RUN_KEYS = [
  'change_id',
  'error',
  'finished_at',
  'reason',
  'run_id',
  'session_id',
  'source',
  'started_at',
  'status',
  'title',
  'tracking',
  'usage',
  'workspace',
];
const TOOL_KEYS = [
  'change_id',
  'error',
  'finished_at',
  'name',
  'reason',
  'run_id',
  'session_id',
  'started_at',
  'status',
  'tool_call_id',
  'tracking',
];
const SESSION_KEYS = [
  'changed_count',
  'created_at',
  'failed_run_count',
  'id',
  'last_run_status',
  'run_count',
  'running_run_count',
  'title',
  'updated_at',
  'usage',
  'workspace',
];
const keys = (o: object) => Object.keys(o).sort();

describe('bridge: a tracked run end to end', () => {
  it('B1/B21/B24: start, tool, completion, events in order, history without patches, patches on demand', async () => {
    const t = await setup();
    const r = repo({ 'a.txt': 'one\ntwo\n', 'gone.txt': 'bye\n', 'keep.txt': 'k\n' });
    const c = await client(t, 's1');

    const up = await t.post({ type: 'session.upsert', session_id: 's1', title: 'Fix login', workspace: r.dir });
    expect(up.status).toBe(200);
    expect(keys(up.body.session)).toEqual(SESSION_KEYS);
    expect(up.body.session).toMatchObject({
      id: 's1',
      title: 'Fix login',
      workspace: r.dir,
      run_count: 0,
      changed_count: 0,
    });

    const msg = await t.post({
      type: 'message',
      session_id: 's1',
      role: 'user',
      content: 'please fix',
      message_id: 'm1',
      run_id: 'r1',
    });
    expect(msg.status).toBe(200);
    expect(keys(msg.body.message)).toEqual([
      'content',
      'created_at',
      'id',
      'role',
      'run_id',
      'session_id',
      'tool_call_id',
    ]);
    expect(msg.body.message).toMatchObject({
      id: 'm1',
      session_id: 's1',
      role: 'user',
      content: 'please fix',
      run_id: 'r1',
      tool_call_id: null,
    });

    const started = await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
    expect(started.status).toBe(200);
    expect(keys(started.body)).toEqual([
      'change_id',
      'duration_ms',
      'scanned_files',
      'tracking',
      'truncated',
      'truncated_reasons',
      'workspace_kind',
    ]);
    expect(started.body).toMatchObject({
      change_id: 'run:r1',
      tracking: true,
      workspace_kind: 'git',
      scanned_files: 3,
      truncated: false,
      truncated_reasons: [],
    });
    expect(typeof started.body.duration_ms).toBe('number');

    const toolStart = await t.post({
      type: 'tool.started',
      session_id: 's1',
      run_id: 'r1',
      tool_call_id: 't1',
      name: 'edit',
    });
    expect(toolStart.body).toMatchObject({ change_id: 'tool:t1', tracking: true, workspace_kind: 'git' });
    r.write('a.txt', 'one\nTWO\nthree\n');
    const toolDone = await t.post({ type: 'tool.completed', session_id: 's1', run_id: 'r1', tool_call_id: 't1' });
    expect(toolDone.body).toMatchObject({
      change_id: 'tool:t1',
      tracking: true,
      changed_count: 1,
      truncated: false,
      truncated_reasons: [],
      omitted_count: 0,
    });
    expect(toolDone.body.files.map((f: { path: string }) => f.path)).toEqual(['a.txt']);

    r.rm('gone.txt');
    r.write('new dir/n.txt', 'fresh\n');
    const done = await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
    expect(done.status).toBe(200);
    expect(keys(done.body)).toEqual([
      'change_id',
      'changed_count',
      'files',
      'omitted_count',
      'overlapping',
      'tracking',
      'truncated',
      'truncated_reasons',
    ]);
    expect(done.body).toMatchObject({
      change_id: 'run:r1',
      tracking: true,
      changed_count: 3,
      truncated: false,
      omitted_count: 0,
    });
    const files = done.body.files as Record<string, unknown>[];
    expect(files.map((f) => [f.path, f.change_type, f.additions, f.deletions])).toEqual([
      ['a.txt', 'modified', 2, 1],
      ['gone.txt', 'deleted', 0, 1],
      ['new dir/n.txt', 'added', 1, 0],
    ]);
    for (const f of files) expect(keys(f)).toEqual(FILE_KEYS);

    await c.waitFor('run.completed');
    await c.waitFor('session.updated', 6);
    // Live-feed progress events are provisional and timed by the watcher; the order asserted here is
    // the contract's: every record event, and diff.completed before each terminal event.
    const order = c.names().filter((n) => n !== 'session.updated' && n !== 'workspace.diff.progress');
    expect(order).toEqual([
      'message.created',
      'run.started',
      'tool.started',
      'workspace.diff.completed',
      'tool.completed',
      'workspace.diff.completed',
      'run.completed',
    ]);
    const diffs = c.events
      .filter((e) => e.event === 'workspace.diff.completed')
      .map((e) => e.payload as Record<string, unknown>);
    expect(keys(diffs[1]!)).toEqual([
      'change_id',
      'changed_count',
      'event',
      'files',
      'omitted_count',
      'overlapping',
      'run_id',
      'session_id',
      'source',
      'tool_call_id',
      'total_additions',
      'total_deletions',
      'truncated',
    ]);
    expect(diffs[0]).toMatchObject({
      event: 'workspace.diff.completed',
      session_id: 's1',
      run_id: 'r1',
      change_id: 'tool:t1',
      source: 'tool',
      tool_call_id: 't1',
      overlapping: false,
    });
    expect(diffs[1]).toMatchObject({
      session_id: 's1',
      run_id: 'r1',
      change_id: 'run:r1',
      changed_count: 3,
      truncated: false,
      source: 'run',
      tool_call_id: null,
      overlapping: false,
      omitted_count: 0,
    });
    const payloadFiles = diffs[1]!.files as Record<string, unknown>[];
    expect(keys(payloadFiles[0]!)).toEqual([
      'additions',
      'binary',
      'change_type',
      'deletions',
      'id',
      'old_path',
      'omitted_reason',
      'path',
      'truncated',
    ]);
    expect(payloadFiles.map((f) => f.id)).toEqual(files.map((f) => f.id));
    const runEvent = c.events.find((e) => e.event === 'run.completed')!.payload as {
      session_id: string;
      run: Record<string, unknown>;
    };
    expect(runEvent.session_id).toBe('s1');
    expect(keys(runEvent.run)).toEqual(RUN_KEYS);
    expect(runEvent.run).toMatchObject({
      run_id: 'r1',
      status: 'completed',
      source: 'run',
      workspace: r.dir,
      change_id: 'run:r1',
      tracking: true,
      reason: null,
      error: null,
    });
    const toolEvent = c.events.find((e) => e.event === 'tool.completed')!.payload as {
      tool_call: Record<string, unknown>;
    };
    expect(keys(toolEvent.tool_call)).toEqual(TOOL_KEYS);
    expect(toolEvent.tool_call).toMatchObject({
      tool_call_id: 't1',
      run_id: 'r1',
      name: 'edit',
      status: 'completed',
      tracking: true,
      change_id: 'tool:t1',
    });
    const lastSession = c.events.filter((e) => e.event === 'session.updated').at(-1)!.payload as {
      session: Record<string, unknown>;
    };
    expect(lastSession.session).toMatchObject({ id: 's1', run_count: 1, changed_count: 3 });

    const detail = await t.get('/api/hermes/sessions/s1');
    expect(detail.status).toBe(200);
    expect(keys(detail.body)).toEqual(['changes', 'messages', 'runs', 'session', 'tool_calls']);
    expect(detail.body.session).toMatchObject({ id: 's1', run_count: 1, changed_count: 3 });
    expect(detail.body.runs).toHaveLength(1);
    expect(detail.body.tool_calls).toHaveLength(1);
    expect(detail.body.changes.map((x: { change_id: string }) => x.change_id)).toEqual(['tool:t1', 'run:r1']);
    expect(keys(detail.body.changes[1])).toEqual(CHANGE_KEYS);
    expect(detail.text).not.toContain('diff --git');

    const list = await t.get('/api/hermes/sessions/s1/workspace-run-changes');
    expect(list.body.changes).toEqual(detail.body.changes);
    const one = await t.get(`/api/hermes/sessions/s1/workspace-run-changes/${encodeURIComponent('run:r1')}`);
    expect(one.body.change).toEqual(detail.body.changes[1]);
    const fileRes = await t.get(`/api/hermes/sessions/s1/workspace-run-changes/run%3Ar1/files/${String(files[0]!.id)}`);
    expect(fileRes.status).toBe(200);
    expect(fileRes.body.file).toEqual({ ...files[0], patch: expect.stringContaining('diff --git a/a.txt b/a.txt') });
    expect(Buffer.byteLength(fileRes.body.file.patch)).toBe(files[0]!.patch_bytes);

    const sessions = await t.get('/api/hermes/sessions');
    expect(sessions.body).toEqual({ sessions: [detail.body.session], next_before: null });
  });

  it('the whole-run patch applied with git apply to a copy of the start tree gives the end tree', async () => {
    const t = await setup();
    const r = repo({
      'a.txt': 'line 1\nline 2\nline 3\n',
      'b.txt': 'remove me\n',
      'sub/c.txt': 'c\n',
      'dirty.txt': 'x\n',
    });
    r.write('dirty.txt', 'dirty before the run\n');
    const startCopy = createTempDir();
    cleanups.push(() => fs.rmSync(startCopy, { recursive: true, force: true }));
    fs.cpSync(r.dir, startCopy, { recursive: true, filter: (src) => path.basename(src) !== '.git' });

    await t.post({ type: 'run.started', session_id: 's', run_id: 'r', workspace: r.dir });
    r.write('a.txt', 'line 1\nline two\nline 3\nline 4');
    r.rm('b.txt');
    r.write('sub/c.txt', 'c\nc2\n');
    r.write('new "quoted" name.txt', 'hello\n');
    r.write('dirty.txt', 'dirty before the run\nand more\n');
    const done = await t.post({ type: 'run.completed', session_id: 's', run_id: 'r' });
    expect(done.body.changed_count).toBe(5);

    const patch = await t.get('/api/hermes/sessions/s/workspace-run-changes/run%3Ar/patch');
    expect(patch.status).toBe(200);
    expect(patch.headers['content-type']).toMatch(/^text\/x-diff/);
    fs.writeFileSync(path.join(startCopy, '..', `${path.basename(startCopy)}.diff`), patch.text);
    const patchFile = path.join(startCopy, '..', `${path.basename(startCopy)}.diff`);
    cleanups.push(() => fs.rmSync(patchFile, { force: true }));
    execFileSync('git', ['apply', '--allow-empty', patchFile], { cwd: startCopy, env: { PATH: process.env.PATH } });
    const tree = (dir: string) =>
      Object.fromEntries(
        (fs.readdirSync(dir, { recursive: true }) as string[])
          .filter((p) => !p.startsWith('.git') && fs.statSync(path.join(dir, p)).isFile())
          .sort()
          .map((p) => [p, fs.readFileSync(path.join(dir, p), 'utf8')]),
      );
    expect(tree(startCopy)).toEqual(tree(r.dir));
  });

  it('B21: a run that changes nothing stores no rows, emits no diff event and answers changed_count 0', async () => {
    const t = await setup();
    const r = repo({ 'a.txt': 'a\n' });
    const c = await client(t, 's');
    await t.post({ type: 'run.started', session_id: 's', run_id: 'r', workspace: r.dir });
    r.write('a.txt', 'b\n');
    r.write('a.txt', 'a\n');
    const done = await t.post({ type: 'run.completed', session_id: 's', run_id: 'r' });
    expect(done.body).toEqual({
      change_id: 'run:r',
      tracking: true,
      changed_count: 0,
      files: [],
      truncated: false,
      truncated_reasons: [],
      omitted_count: 0,
      overlapping: false,
    });
    await c.waitFor('run.completed');
    expect(c.names()).not.toContain('workspace.diff.completed');
    expect(await count(t, 'workspace_run_changes')).toBe(0);
    expect((await t.get('/api/hermes/sessions/s/workspace-run-changes')).body).toEqual({ changes: [] });
  });

  it('a failed run stores its change, emits run.failed after the diff, and keeps the error', async () => {
    const t = await setup();
    const r = repo({ 'a.txt': 'a\n' }, false);
    const c = await client(t, 's');
    const s = await t.post({
      type: 'run.started',
      session_id: 's',
      run_id: 'r',
      workspace: r.dir,
      source: 'coding-agent',
    });
    expect(s.body.workspace_kind).toBe('filesystem');
    r.write('b.txt', 'b\n');
    const done = await t.post({ type: 'run.failed', session_id: 's', run_id: 'r', error: 'boom' });
    expect(done.body).toMatchObject({ tracking: true, changed_count: 1 });
    await c.waitFor('run.failed');
    // The live feed's provisional progress may come or not, depending on how soon the completion ends.
    const stored = c.names().filter((n) => n !== 'workspace.diff.progress');
    expect(stored.filter((n) => n.startsWith('run.') || n.startsWith('workspace.'))).toEqual([
      'run.started',
      'workspace.diff.completed',
      'run.failed',
    ]);
    const run = (c.events.find((e) => e.event === 'run.failed')!.payload as { run: Record<string, unknown> }).run;
    expect(run).toMatchObject({ status: 'failed', error: 'boom', source: 'coding-agent', tracking: true });
    const change = (await t.get('/api/hermes/sessions/s/workspace-run-changes/run%3Ar')).body.change;
    expect(change).toMatchObject({ source: 'coding-agent', workspace_kind: 'filesystem', changed_count: 1 });
  });
});

describe('bridge: bounds and names pass through to the store, the events and the patch', () => {
  it('B17: over maxChangedFiles the first N rows are stored, omitted_count and rows say the rest', async () => {
    const t = await setup({ limits: { maxChangedFiles: 2 } });
    const r = repo({ 'keep.txt': 'k\n' });
    const c = await client(t, 's');
    await t.post({ type: 'run.started', session_id: 's', run_id: 'r', workspace: r.dir });
    for (const n of ['c', 'a', 'b', 'd']) r.write(`${n}.txt`, `${n}\n`);
    const done = await t.post({ type: 'run.completed', session_id: 's', run_id: 'r' });
    expect(done.body).toMatchObject({ changed_count: 4, omitted_count: 2, truncated: true });
    expect(done.body.truncated_reasons).toContain('rows');
    expect(done.body.files.map((f: { path: string }) => f.path)).toEqual(['a.txt', 'b.txt']);
    const [ev] = await c.waitFor('workspace.diff.completed');
    expect(ev!.payload).toMatchObject({ changed_count: 4, omitted_count: 2, truncated: true });
    const change = (await t.get('/api/hermes/sessions/s/workspace-run-changes/run%3Ar')).body.change;
    expect(change).toMatchObject({ changed_count: 4, omitted_count: 2, truncated: true, added_count: 4 });
    expect(change.files).toHaveLength(2);
    expect((await t.get('/api/hermes/sessions/s')).body.session.changed_count).toBe(4);
  });

  it("run.completed's usage is stored with the run and reaches its event; a malformed one is refused and loses nothing", async () => {
    const t = await setup();
    const c = await client(t, 's');
    await t.post({ type: 'run.started', session_id: 's', run_id: 'r' });
    for (const usage of [
      { input: -1, output: 0, cache_read: 0, cache_write: 0 },
      { input: 1.5, output: 0, cache_read: 0, cache_write: 0 },
      { input: 1, output: 2, cache_read: 3 },
    ]) {
      const bad = await t.post({ type: 'run.completed', session_id: 's', run_id: 'r', usage });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('invalid_input');
    }
    expect((await t.get('/api/hermes/sessions/s')).body.runs[0]).toMatchObject({ status: 'running', usage: null });
    const usage = { input: 1, output: 2, cache_read: 3, cache_write: 4 };
    expect((await t.post({ type: 'run.completed', session_id: 's', run_id: 'r', usage })).status).toBe(200);
    const [ev] = await c.waitFor('run.completed');
    expect((ev!.payload as { run: { usage: unknown } }).run.usage).toEqual(usage);
    const d = (await t.get('/api/hermes/sessions/s')).body;
    expect([d.runs[0].usage, d.session.usage]).toEqual([usage, usage]);
  });

  it("run.completed's price in dollars is kept with its tokens; one that is not an amount is refused", async () => {
    const t = await setup();
    const tokens = { input: 1, output: 2, cache_read: 3, cache_write: 4 };
    await t.post({ type: 'run.started', session_id: 's', run_id: 'r' });
    for (const cost_usd of [-0.01, '0.5', null, 1e9 + 1]) {
      const bad = await t.post({ type: 'run.completed', session_id: 's', run_id: 'r', usage: { ...tokens, cost_usd } });
      expect(bad.status, String(cost_usd)).toBe(400);
      expect(bad.body.error.code).toBe('invalid_input');
    }
    expect((await t.get('/api/hermes/sessions/s')).body.runs[0]).toMatchObject({ status: 'running', usage: null });
    const usage = { ...tokens, cost_usd: 0.4375 };
    expect((await t.post({ type: 'run.completed', session_id: 's', run_id: 'r', usage })).status).toBe(200);
    // A second run without a price: the session's money is the first run's alone.
    await t.post({ type: 'run.started', session_id: 's', run_id: 'r2' });
    expect((await t.post({ type: 'run.completed', session_id: 's', run_id: 'r2', usage: tokens })).status).toBe(200);
    const d = (await t.get('/api/hermes/sessions/s')).body;
    expect(d.runs.map((r: { usage: unknown }) => r.usage)).toEqual([usage, tokens]);
    expect(d.session.usage).toEqual({ input: 2, output: 4, cache_read: 6, cache_write: 8, cost_usd: 0.4375 });
    expect((await t.get('/api/hermes/sessions')).body.sessions[0].usage.cost_usd).toBe(0.4375);
  });

  it('B13: a name that is not valid UTF-8 keeps its bytes in path_base64 through REST and the whole-run patch', async () => {
    const t = await setup();
    const r = repo({ 'a.txt': 'a\n' });
    await t.post({ type: 'run.started', session_id: 's', run_id: 'r', workspace: r.dir });
    const raw = Buffer.from([0x6e, 0xff, 0x2e, 0x74]); // "n\xff.t"
    fs.writeFileSync(Buffer.concat([Buffer.from(r.dir + '/'), raw]), 'x\n');
    const done = await t.post({ type: 'run.completed', session_id: 's', run_id: 'r' });
    const f = done.body.files[0];
    expect(f.path_base64).toBe(raw.toString('base64'));
    const file = (await t.get(`/api/hermes/sessions/s/workspace-run-changes/run%3Ar/files/${f.id}`)).body.file;
    expect(file.path_base64).toBe(raw.toString('base64'));
    const patch = await t.get('/api/hermes/sessions/s/workspace-run-changes/run%3Ar/patch');
    expect(patch.text).toContain('"b/n\\377.t"');
  });

  it("B15: the server's own database files inside the workspace are never reported", async () => {
    const r = repo({ 'a.txt': 'a\n' }, false);
    const t = await setup({ dbPath: path.join(r.dir, 'state', 'rundiff.sqlite3') });
    await t.post({ type: 'run.started', session_id: 's', run_id: 'r', workspace: r.dir });
    await t.post({ type: 'message', session_id: 's', role: 'user', content: 'x'.repeat(10_000), run_id: 'r' });
    r.write('a.txt', 'b\n');
    const done = await t.post({ type: 'run.completed', session_id: 's', run_id: 'r' });
    expect(done.body.files.map((f: { path: string }) => f.path)).toEqual(['a.txt']);
  });

  it('a completion sent while its start is still checkpointing waits for it and sees the checkpoint', async () => {
    const t = await setup();
    const r = repo({ 'a.txt': 'a\n' });
    // Called back to back in one tick: the completion is sent before the checkpoint exists.
    const starting = t.server.recorder.runStarted({ session_id: 's', run_id: 'r', workspace: r.dir });
    const completing = t.server.recorder.runCompleted({ session_id: 's', run_id: 'r' });
    const [start, done] = await Promise.all([starting, completing]);
    expect(start.tracking).toBe(true);
    expect(done).toMatchObject({ tracking: true, changed_count: 0 });
  });
});

describe('bridge: repeats, restarts and untracked runs', () => {
  it('a repeated start (also while the first is in flight) answers as the first; one run, one event', async () => {
    const t = await setup();
    const r = repo({ 'a.txt': 'a\n' });
    const c = await client(t, 's');
    const ev = { type: 'run.started', session_id: 's', run_id: 'r', workspace: r.dir };
    const [a, b] = await Promise.all([t.post(ev), t.post(ev)]);
    const again = await t.post(ev);
    expect(b.body).toEqual(a.body);
    expect(again.body).toEqual(a.body);
    expect(await count(t, 'runs')).toBe(1);
    await c.waitFor('run.started');
    // Events reach one socket in order: a later message's event proves a second start event would be here.
    await t.post({ type: 'message', session_id: 's', role: 'user', content: 'after' });
    await c.waitFor('message.created');
    expect(c.names().filter((n) => n === 'run.started')).toHaveLength(1);
  });

  it('a repeated completion answers as the first did: no second row, no second event', async () => {
    const t = await setup();
    const r = repo({ 'a.txt': 'a\n' });
    const c = await client(t, 's');
    await t.post({ type: 'run.started', session_id: 's', run_id: 'r', workspace: r.dir });
    r.write('a.txt', 'b\n');
    const ev = { type: 'run.completed', session_id: 's', run_id: 'r' };
    const [a, b] = await Promise.all([t.post(ev), t.post(ev)]);
    r.write('a.txt', 'c\n');
    const later = await t.post({ ...ev, type: 'run.failed', error: 'late' });
    expect(b.body).toEqual(a.body);
    expect(later.body).toEqual(a.body);
    expect(await count(t, 'workspace_run_changes')).toBe(1);
    await c.waitFor('run.completed');
    // Events reach one socket in order: a later message's event proves a second completion would be here.
    await t.post({ type: 'message', session_id: 's', role: 'user', content: 'after' });
    await c.waitFor('message.created');
    expect(c.names().filter((n) => n === 'workspace.diff.completed' || n.startsWith('run.'))).toEqual([
      'run.started',
      'workspace.diff.completed',
      'run.completed',
    ]);
  });

  it('B20: a run started before a restart completes with no_checkpoint and no change; it is recorded as finished', async () => {
    const r = repo({ 'a.txt': 'a\n' });
    const first = await startTestServer();
    const dbPath = first.dbPath;
    await first.post({ type: 'run.started', session_id: 's', run_id: 'r', workspace: r.dir });
    await first.server.close();
    r.write('a.txt', 'changed\n');
    const second = await setup({ dbPath });
    cleanups.push(() => fs.rmSync(first.dir, { recursive: true, force: true }));
    const c = await client(second, 's');
    const done = await second.post({ type: 'run.completed', session_id: 's', run_id: 'r' });
    expect(done.body).toEqual({ change_id: 'run:r', tracking: false, reason: 'no_checkpoint' });
    expect(await count(second, 'workspace_run_changes')).toBe(0);
    await c.waitFor('run.completed');
    const run = (await second.get('/api/hermes/sessions/s')).body.runs[0];
    expect(run).toMatchObject({ status: 'completed', tracking: false, reason: 'no_checkpoint' });
    expect(run.finished_at).toEqual(expect.any(Number));
  });

  it('B20: completing a run that never started answers no_checkpoint and records the run', async () => {
    const t = await setup();
    const c = await client(t, 'fresh');
    const done = await t.post({ type: 'run.completed', session_id: 'fresh', run_id: 'r' });
    expect(done.body).toEqual({ change_id: 'run:r', tracking: false, reason: 'no_checkpoint' });
    const tool = await t.post({
      type: 'tool.completed',
      session_id: 'fresh',
      run_id: 'r',
      tool_call_id: 't',
      error: 'x',
    });
    expect(tool.body).toEqual({ change_id: 'tool:t', tracking: false, reason: 'no_checkpoint' });
    await c.waitFor('tool.completed');
    const detail = (await t.get('/api/hermes/sessions/fresh')).body;
    expect(detail.runs[0]).toMatchObject({
      run_id: 'r',
      status: 'completed',
      tracking: false,
      reason: 'no_checkpoint',
    });
    expect(detail.tool_calls[0]).toMatchObject({
      tool_call_id: 't',
      status: 'failed',
      error: 'x',
      reason: 'no_checkpoint',
    });
  });

  it('B28: untracked workspaces answer their reason at start and completion; the run is still recorded with events', async () => {
    const allowed = createTempDir();
    const outside = repo({ 'x.txt': 'x\n' });
    cleanups.push(() => fs.rmSync(allowed, { recursive: true, force: true }));
    const t = await setup({ env: { RUNDIFF_WORKSPACE_ROOTS: allowed } });
    const c = await client(t, 's');
    fs.writeFileSync(path.join(allowed, 'file'), 'f');
    const cases: [string | undefined, string][] = [
      [path.join(allowed, 'missing'), 'workspace_missing'],
      [path.join(allowed, 'file'), 'workspace_not_directory'],
      [outside.dir, 'workspace_not_allowed'],
      [undefined, 'no_workspace'],
    ];
    for (const [i, [ws, reason]] of cases.entries()) {
      const ev: Record<string, unknown> = { type: 'run.started', session_id: `u${i}`, run_id: 'r' };
      if (ws) ev.workspace = ws;
      expect((await t.post(ev)).body).toEqual({ change_id: 'run:r', tracking: false, reason });
      expect((await t.post({ type: 'run.completed', session_id: `u${i}`, run_id: 'r' })).body).toEqual({
        change_id: 'run:r',
        tracking: false,
        reason,
      });
      const run = (await t.get(`/api/hermes/sessions/u${i}`)).body.runs[0];
      expect(run).toMatchObject({ status: 'completed', tracking: false, reason });
    }
    // the home folder itself and / are never tracked
    expect((await t.post({ type: 'run.started', session_id: 's', run_id: 'root', workspace: '/' })).body.reason).toBe(
      'workspace_not_allowed',
    );
    await c.waitFor('run.started');
    const tool = await t.post({ type: 'tool.started', session_id: 's', run_id: 'root', tool_call_id: 't' });
    expect(tool.body).toEqual({ change_id: 'tool:t', tracking: false, reason: 'workspace_not_allowed' });
    await c.waitFor('tool.started');
  });

  it('B20: every event naming a run refreshes its checkpoint TTL; silence past the TTL drops it', async () => {
    let clock = 1_000_000;
    const t = await setup({ now: () => clock, limits: { checkpointTtlMs: 1_000 } });
    const r = repo({ 'a.txt': 'a\n' });
    await t.post({ type: 'run.started', session_id: 's', run_id: 'kept', workspace: r.dir });
    await t.post({ type: 'run.started', session_id: 's', run_id: 'idle', workspace: r.dir });
    for (let i = 0; i < 3; i++) {
      clock += 800;
      await t.post({ type: 'message', session_id: 's', role: 'assistant', content: `step ${i}`, run_id: 'kept' });
      t.server.engine.sweep();
    }
    expect(t.server.engine.has('s', 'run:kept')).toBe(true);
    expect(t.server.engine.has('s', 'run:idle')).toBe(false);
    r.write('a.txt', 'b\n');
    expect((await t.post({ type: 'run.completed', session_id: 's', run_id: 'kept' })).body).toMatchObject({
      tracking: true,
      changed_count: 1,
    });
    expect((await t.post({ type: 'run.completed', session_id: 's', run_id: 'idle' })).body).toEqual({
      change_id: 'run:idle',
      tracking: false,
      reason: 'no_checkpoint',
    });
  });

  it('tool.started uses the run workspace by default, the run the session one', async () => {
    const t = await setup();
    const r = repo({ 'a.txt': 'a\n' });
    await t.post({ type: 'session.upsert', session_id: 's', workspace: r.dir });
    const run = await t.post({ type: 'run.started', session_id: 's', run_id: 'r' });
    expect(run.body.tracking).toBe(true);
    const tool = await t.post({ type: 'tool.started', session_id: 's', run_id: 'r', tool_call_id: 't' });
    expect(tool.body.tracking).toBe(true);
    r.write('b.txt', 'b\n');
    const done = await t.post({ type: 'tool.completed', session_id: 's', run_id: 'r', tool_call_id: 't' });
    expect(done.body.files[0].path).toBe('b.txt');
  });

  it("run.started title is the run's own: stored and served with the run, the session keeps its title", async () => {
    const t = await setup();
    await t.post({ type: 'session.upsert', session_id: 's', title: 'Session title' });
    await t.post({ type: 'run.started', session_id: 's', run_id: 'named', title: 'Fix the login form' });
    await t.post({ type: 'run.started', session_id: 's', run_id: 'plain' });
    const detail = (await t.get('/api/hermes/sessions/s')).body;
    expect(detail.session.title).toBe('Session title');
    expect(detail.runs.map((r: { run_id: string; title: string | null }) => [r.run_id, r.title])).toEqual([
      ['named', 'Fix the login form'],
      ['plain', null],
    ]);
    const long = await t.post({ type: 'run.started', session_id: 's', run_id: 'long', title: 'x'.repeat(501) });
    expect(long.status).toBe(400);
    expect(long.body.error.message).toContain('title must be at most 500 characters');
    const edge = await t.post({ type: 'run.started', session_id: 's', run_id: 'edge', title: 'x'.repeat(500) });
    expect(edge.status).toBe(200);
  });

  it('a repeated message_id updates the message (message.updated); without one each message is new', async () => {
    const t = await setup();
    const c = await client(t, 's');
    const a = await t.post({
      type: 'message',
      session_id: 's',
      role: 'assistant',
      content: 'Hel',
      message_id: 'm',
      created_at: 1000,
    });
    const b = await t.post({ type: 'message', session_id: 's', role: 'assistant', content: 'Hello', message_id: 'm' });
    expect(b.body.message).toEqual({ ...a.body.message, content: 'Hello' });
    const other = await t.post({ type: 'message', session_id: 's', role: 'tool', content: 'out', tool_call_id: 'tc' });
    expect(other.body.message.id).not.toBe('m');
    expect(other.body.message.tool_call_id).toBe('tc');
    await c.waitFor('message.created', 2);
    expect(c.names().filter((n) => n.startsWith('message.'))).toEqual([
      'message.created',
      'message.updated',
      'message.created',
    ]);
    const updated = c.events.find((e) => e.event === 'message.updated')!.payload;
    expect(updated).toEqual({ session_id: 's', message: b.body.message });
  });
});

describe('retention and deletion', () => {
  it('B22: keeps the newest N run-level changes per session; an evicted run takes its tool changes', async () => {
    const t = await setup({ limits: { maxChangesPerSession: 2 } });
    const r = repo({ 'a.txt': '0\n' });
    for (let i = 1; i <= 3; i++) {
      await t.post({ type: 'run.started', session_id: 's', run_id: `r${i}`, workspace: r.dir });
      await t.post({ type: 'tool.started', session_id: 's', run_id: `r${i}`, tool_call_id: `t${i}` });
      r.write('a.txt', `${i}\n`);
      await t.post({ type: 'tool.completed', session_id: 's', run_id: `r${i}`, tool_call_id: `t${i}` });
      await t.post({ type: 'run.completed', session_id: 's', run_id: `r${i}` });
    }
    const ids = (await t.get('/api/hermes/sessions/s/workspace-run-changes')).body.changes.map(
      (c: { change_id: string }) => c.change_id,
    );
    expect(ids).toEqual(['tool:t2', 'run:r2', 'tool:t3', 'run:r3']);
    // Both kept runs changed a.txt: the session total names it once.
    expect((await t.get('/api/hermes/sessions/s')).body.session.changed_count).toBe(1);
  });

  it('B22: the age sweep at start removes changes older than the retention days (fake clock)', async () => {
    const r = repo({ 'a.txt': 'a\n' });
    let clock = Date.UTC(2026, 0, 1);
    const now = () => clock;
    const first = await startTestServer({ now, limits: { retentionDays: 30 } });
    cleanups.push(() => fs.rmSync(first.dir, { recursive: true, force: true }));
    for (const id of ['old', 'new']) {
      await first.post({ type: 'run.started', session_id: 's', run_id: id, workspace: r.dir });
      r.write('a.txt', `${id}\n`);
      await first.post({ type: 'run.completed', session_id: 's', run_id: id });
      clock += 20 * 24 * 3600 * 1000;
    }
    await first.server.close();
    // 40 days after the first change and 20 after the second.
    const second = await setup({ dbPath: first.dbPath, now, limits: { retentionDays: 30 } });
    // The start's sweep is a background job: on PostgreSQL its statements may still be in flight.
    await expect
      .poll(async () =>
        (await second.get('/api/hermes/sessions/s/workspace-run-changes')).body.changes.map(
          (c: { run_id: string }) => c.run_id,
        ),
      )
      .toEqual(['new']);
    clock += 11 * 24 * 3600 * 1000;
    expect(await second.server.recorder.sweepOld()).toBe(1);
    expect(await count(second, 'workspace_run_change_files')).toBe(0);
  });

  it('B22: DELETE removes the session and everything of it at once and tells the sessions list', async () => {
    const t = await setup();
    const r = repo({ 'a.txt': 'a\n' });
    const c = await client(t, 'gone');
    await t.post({ type: 'message', session_id: 'gone', role: 'user', content: 'x' });
    await t.post({ type: 'run.started', session_id: 'gone', run_id: 'r', workspace: r.dir });
    await t.post({ type: 'tool.started', session_id: 'gone', run_id: 'r', tool_call_id: 't' });
    r.write('a.txt', 'b\n');
    await t.post({ type: 'tool.completed', session_id: 'gone', run_id: 'r', tool_call_id: 't' });
    await t.post({ type: 'run.completed', session_id: 'gone', run_id: 'r' });
    await t.post({ type: 'session.upsert', session_id: 'kept' });
    const del = await t.request('DELETE', '/api/hermes/sessions/gone');
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    const ev = await c.waitFor('session.deleted');
    expect(ev[0]!.payload).toEqual({ session_id: 'gone' });
    for (const table of ['messages', 'runs', 'tool_calls', 'workspace_run_changes', 'workspace_run_change_files'])
      expect(await count(t, table)).toBe(0);
    expect(await count(t, 'sessions')).toBe(1);
    expect((await t.get('/api/hermes/sessions/gone')).status).toBe(404);
    expect((await t.request('DELETE', '/api/hermes/sessions/gone')).body.error.code).toBe('not_found');
  });

  it('deleting a session with an open run drops its checkpoint: a later completion is no_checkpoint', async () => {
    const t = await setup();
    const r = repo({ 'a.txt': 'a\n' });
    await t.post({ type: 'run.started', session_id: 's', run_id: 'r', workspace: r.dir });
    expect(t.server.engine.has('s', 'run:r')).toBe(true);
    await t.request('DELETE', '/api/hermes/sessions/s');
    expect(t.server.engine.has('s', 'run:r')).toBe(false);
    r.write('a.txt', 'b\n');
    expect((await t.post({ type: 'run.completed', session_id: 's', run_id: 'r' })).body.reason).toBe('no_checkpoint');
  });
});

describe('bridge and hook events for a session an edge owns', () => {
  const EDGE_TOKEN = 'laptop-token-0123456789abcdef';
  /** The centre receives `sessionId` from the edge `laptop` (one batch, as an edge sends it). */
  async function fromEdge(t: TestServer, sessionId: string) {
    const res = await t.request('POST', '/api/edge/batches', {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${EDGE_TOKEN}` },
      body: JSON.stringify({
        database_id: 'abcdef0123456789',
        session_id: sessionId,
        entries: [
          {
            id: 1,
            kind: 'session',
            item: sessionId,
            row: { title: 'from the edge', workspace: null, created_at: 1000, updated_at: 1000 },
          },
        ],
        blobs: [],
      }),
    });
    expect(res.status).toBe(200);
  }

  it('are refused on the centre with 409 session_conflict naming the edge, and nothing is written', async () => {
    const log: string[] = [];
    const t = await setup({ env: { RUNDIFF_EDGE_TOKENS: `laptop=${EDGE_TOKEN}` }, log: (m) => log.push(m) });
    const owned = 'edge-session-1';
    await fromEdge(t, owned);
    const events = [
      { type: 'message', session_id: owned, role: 'user', content: 'written on the centre' },
      { type: 'session.upsert', session_id: owned, title: 'renamed on the centre' },
      { type: 'run.started', session_id: owned, run_id: 'r1' },
      { type: 'run.completed', session_id: owned, run_id: 'r1' },
    ];
    for (const e of events) {
      const res = await t.post(e);
      expect(res.status, e.type).toBe(409);
      expect(res.body.error, e.type).toMatchObject({
        code: 'session_conflict',
        details: { reason: 'session_owned_by_edge', owner: 'laptop' },
      });
      expect(res.body.error.message).toMatch(/laptop/);
    }
    expect(await count(t, 'messages')).toBe(0);
    expect(await count(t, 'runs')).toBe(0);
    const session = await t.get(`/api/hermes/sessions/${owned}`);
    expect(JSON.stringify(session.body)).toContain('from the edge');

    // A hook payload for it: the agent still gets its 200 {} (hooks never fail the agent), nothing is
    // written, and the log names the owner.
    await fromEdge(t, 'claude-code:agent-1');
    const hook = await t.request('POST', '/api/hooks/claude-code', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: 'agent-1', hook_event_name: 'UserPromptSubmit', prompt: 'p' }),
    });
    expect([hook.status, hook.body]).toEqual([200, {}]);
    expect(await count(t, 'runs')).toBe(0);
    expect(await count(t, 'messages')).toBe(0);
    expect(log.join('\n')).toMatch(/belongs to edge "laptop"/);

    // Positive control: the centre's own sessions take events as before.
    expect((await t.post({ type: 'message', session_id: 'own', role: 'user', content: 'x' })).status).toBe(200);
    expect(await count(t, 'messages')).toBe(1);
  });
});

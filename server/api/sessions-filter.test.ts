import { afterEach, describe, expect, it } from 'vitest';
import type { Session } from '../../shared/index.ts';
import { createTempRepo, type TempRepo } from '../test-support/temp-repo.ts';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(clock: { now: number }): Promise<TestServer> {
  const t = await startTestServer({ now: () => clock.now });
  cleanups.push(() => t.close());
  return t;
}

function repo(files: Record<string, string>): TempRepo {
  const r = createTempRepo({ files });
  cleanups.push(() => r.cleanup());
  return r;
}

const ids = (res: { body: { sessions: Session[] } }) => res.body.sessions.map((s) => s.id).sort();

/**
 * Four sessions that differ in exactly one way each from the rest, so every filter has sessions it
 * must keep and sessions it must drop.
 */
async function fourSessions(t: TestServer, clock: { now: number }) {
  clock.now = 1_000;
  await t.post({ type: 'session.upsert', session_id: 'alpha', title: 'Fix the Parser', workspace: '/w/one' });
  await t.post({ type: 'run.started', session_id: 'alpha', run_id: 'r1' });
  await t.post({ type: 'run.completed', session_id: 'alpha', run_id: 'r1' });
  clock.now = 2_000;
  await t.post({ type: 'session.upsert', session_id: 'beta', title: 'Refactor 100%_done', workspace: '/w/two' });
  await t.post({ type: 'run.started', session_id: 'beta', run_id: 'r1' });
  await t.post({ type: 'run.failed', session_id: 'beta', run_id: 'r1', error: 'exit 1' });
  clock.now = 3_000;
  await t.post({ type: 'session.upsert', session_id: 'gamma', title: 'Docs', workspace: '/w/parser-lib' });
  await t.post({ type: 'run.started', session_id: 'gamma', run_id: 'r1' });
  clock.now = 4_000;
  await t.post({ type: 'session.upsert', session_id: 'delta', title: 'Empty', workspace: '/w/one' });
}

describe('GET /api/hermes/sessions filters', () => {
  it('without filters every session is listed (the baseline each filter below must narrow)', async () => {
    const clock = { now: 0 };
    const t = await setup(clock);
    await fourSessions(t, clock);
    expect(ids(await t.get('/api/hermes/sessions'))).toEqual(['alpha', 'beta', 'delta', 'gamma']);
  });

  it('q matches title or workspace, case-insensitively', async () => {
    const clock = { now: 0 };
    const t = await setup(clock);
    await fourSessions(t, clock);
    expect(ids(await t.get('/api/hermes/sessions?q=PARSER'))).toEqual(['alpha', 'gamma']);
    expect(ids(await t.get('/api/hermes/sessions?q=w%2Ftwo'))).toEqual(['beta']);
    expect(ids(await t.get('/api/hermes/sessions?q=nothing-like-this'))).toEqual([]);
  });

  it('q treats % and _ as literal characters, not wildcards', async () => {
    const clock = { now: 0 };
    const t = await setup(clock);
    await fourSessions(t, clock);
    expect(ids(await t.get('/api/hermes/sessions?q=100%25_'))).toEqual(['beta']);
    // Unescaped, "%" would match every session and "_" any character.
    expect(ids(await t.get('/api/hermes/sessions?q=%25'))).toEqual(['beta']);
    expect(ids(await t.get('/api/hermes/sessions?q=D_cs'))).toEqual([]);
  });

  it('status keeps sessions by their runs: failed, running, completed (all runs completed), none', async () => {
    const clock = { now: 0 };
    const t = await setup(clock);
    await fourSessions(t, clock);
    expect(ids(await t.get('/api/hermes/sessions?status=failed'))).toEqual(['beta']);
    expect(ids(await t.get('/api/hermes/sessions?status=running'))).toEqual(['gamma']);
    expect(ids(await t.get('/api/hermes/sessions?status=completed'))).toEqual(['alpha']);
    expect(ids(await t.get('/api/hermes/sessions?status=none'))).toEqual(['delta']);
  });

  it('workspace is an exact path; from/to keep sessions active in the range', async () => {
    const clock = { now: 0 };
    const t = await setup(clock);
    await fourSessions(t, clock);
    expect(ids(await t.get('/api/hermes/sessions?workspace=%2Fw%2Fone'))).toEqual(['alpha', 'delta']);
    expect(ids(await t.get('/api/hermes/sessions?workspace=%2Fw'))).toEqual([]);
    expect(ids(await t.get('/api/hermes/sessions?from=2000'))).toEqual(['beta', 'delta', 'gamma']);
    expect(ids(await t.get('/api/hermes/sessions?to=2000'))).toEqual(['alpha', 'beta']);
    expect(ids(await t.get('/api/hermes/sessions?from=2000&to=3000'))).toEqual(['beta', 'gamma']);
    expect(ids(await t.get('/api/hermes/sessions?q=w&status=completed&workspace=%2Fw%2Fone'))).toEqual(['alpha']);
  });

  it('filtered pages follow the cursor without skipping or repeating a match', async () => {
    const clock = { now: 0 };
    const t = await setup(clock);
    for (let i = 0; i < 7; i++) {
      clock.now = 100 + i;
      await t.post({ type: 'session.upsert', session_id: `s${i}`, title: i % 2 ? 'odd one' : 'even one' });
    }
    const seen: string[] = [];
    let before: number | null = null;
    do {
      const res = await t.get(`/api/hermes/sessions?q=odd&limit=1${before === null ? '' : `&before=${before}`}`);
      seen.push(...res.body.sessions.map((s: Session) => s.id));
      before = res.body.next_before;
    } while (before !== null);
    expect(seen).toEqual(['s5', 's3', 's1']);
  });

  it('summaries carry failed and running run counts and the latest run status', async () => {
    const clock = { now: 0 };
    const t = await setup(clock);
    await fourSessions(t, clock);
    const byId = new Map((await t.get('/api/hermes/sessions')).body.sessions.map((s: Session) => [s.id, s]));
    expect(byId.get('beta')).toMatchObject({ run_count: 1, failed_run_count: 1, running_run_count: 0 });
    expect(byId.get('beta')).toMatchObject({ last_run_status: 'failed' });
    expect(byId.get('gamma')).toMatchObject({ failed_run_count: 0, running_run_count: 1, last_run_status: 'running' });
    expect(byId.get('delta')).toMatchObject({ run_count: 0, failed_run_count: 0, last_run_status: null });
  });

  it('unknown, repeated and malformed parameters answer 400 invalid_input and name the field', async () => {
    const clock = { now: 0 };
    const t = await setup(clock);
    const bad: [string, string][] = [
      ['query=x', 'query'],
      ['q=a&q=b', 'q'],
      ['status=broken', 'status'],
      ['from=yesterday', 'from'],
      ['to=-5', 'to'],
      ['from=10&to=5', 'from'],
      [`q=${'x'.repeat(201)}`, 'q'],
      ['workspace=%2Fw%0A', 'workspace'],
    ];
    for (const [query, field] of bad) {
      const res = await t.get(`/api/hermes/sessions?${query}`);
      expect({ query, status: res.status, code: res.body.error?.code, field: res.body.error?.details?.field }).toEqual({
        query,
        status: 400,
        code: 'invalid_input',
        field,
      });
    }
    expect((await t.get('/api/hermes/sessions?q=&status=&from=')).status).toBe(200);
  });
});

describe('session totals', () => {
  it('a file changed by two overlapping runs counts once in the session total', async () => {
    const clock = { now: 1_000 };
    const t = await setup(clock);
    const r = repo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    await t.post({ type: 'run.started', session_id: 's', run_id: 'one', workspace: r.dir });
    await t.post({ type: 'run.started', session_id: 's', run_id: 'two', workspace: r.dir });
    r.write('a.txt', 'a2\n');
    r.write('b.txt', 'b2\n');
    const one = await t.post({ type: 'run.completed', session_id: 's', run_id: 'one' });
    const two = await t.post({ type: 'run.completed', session_id: 's', run_id: 'two' });
    // Positive control: each run really saw both files and was flagged as overlapping.
    expect([one.body.changed_count, two.body.changed_count]).toEqual([2, 2]);
    const changes = (await t.get('/api/hermes/sessions/s/workspace-run-changes')).body.changes;
    expect(changes.map((c: { overlapping: boolean }) => c.overlapping)).toEqual([true, true]);
    const session = (await t.get('/api/hermes/sessions')).body.sessions[0] as Session;
    expect(session.changed_count).toBe(2);
    expect((await t.get('/api/hermes/sessions/s')).body.session.changed_count).toBe(2);
  });

  it('a later run that changes another file adds it to the total; a tool-level change adds nothing', async () => {
    const clock = { now: 1_000 };
    const t = await setup(clock);
    const r = repo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    await t.post({ type: 'run.started', session_id: 's', run_id: 'one', workspace: r.dir });
    await t.post({ type: 'tool.started', session_id: 's', run_id: 'one', tool_call_id: 't1', workspace: r.dir });
    r.write('a.txt', 'a2\n');
    await t.post({ type: 'tool.completed', session_id: 's', run_id: 'one', tool_call_id: 't1' });
    await t.post({ type: 'run.completed', session_id: 's', run_id: 'one' });
    await t.post({ type: 'run.started', session_id: 's', run_id: 'two', workspace: r.dir });
    r.write('a.txt', 'a3\n');
    r.write('b.txt', 'b3\n');
    await t.post({ type: 'run.completed', session_id: 's', run_id: 'two' });
    expect((await t.get('/api/hermes/sessions')).body.sessions[0].changed_count).toBe(2);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovalRequestedPayload, ApprovalResolvedPayload } from '../../shared/index.ts';
import { createTempRepo, type TempRepo } from '../test-support/temp-repo.ts';
import {
  connectClient,
  startTestServer,
  type RawResponse,
  type TestClient,
  type TestServer,
} from '../test-support/server-harness.ts';

/**
 * Commit approval over REST (`RUNDIFF_REQUIRE_COMMIT_APPROVAL=1`): the plan is announced to
 * `sessions.subscribe`rs, the commit waits for a decision posted to `/api/tools/approvals/:id`, and
 * every outcome is announced. Real server, real repository, real socket.io client.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Rig {
  t: TestServer;
  r: TempRepo;
  client: TestClient;
  head: string;
}

async function rig(env: Record<string, string>): Promise<Rig> {
  const t = await startTestServer({ env: { RUNDIFF_REQUIRE_COMMIT_APPROVAL: '1', ...env } });
  cleanups.push(() => t.close());
  const r = createTempRepo({ files: { 'a.txt': 'one\ntwo\n' } });
  r.git('config', 'user.name', 'Agent');
  r.git('config', 'user.email', 'agent@example.invalid');
  cleanups.push(() => r.cleanup());
  await t.post({ type: 'session.upsert', session_id: 's1', workspace: r.dir });
  const client = await connectClient(t.server.url);
  cleanups.push(() => client.close());
  expect(await client.ask('sessions.subscribe', {})).toEqual({ ok: true });
  const head = r.git('rev-parse', 'HEAD').trim();
  // a reviewed change: one edit, one new file
  r.write('a.txt', 'one\nTWO\nthree\n');
  r.write('new.txt', 'n1\nn2\n');
  expect((await tool(t, 'git_diff', { tool_session: 'A' })).status).toBe(200);
  return { t, r, client, head };
}

function tool(t: TestServer, name: string, body: unknown): Promise<RawResponse> {
  return t.request('POST', `/api/tools/${name}`, {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}
const decide = (t: TestServer, id: string, body: unknown) =>
  t.request('POST', `/api/tools/approvals/${encodeURIComponent(id)}`, {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const commit = (t: TestServer) =>
  tool(t, 'git_commit', { tool_session: 'A', message: 'Edit <b>a</b>', paths: ['a.txt', 'new.txt'] });

async function requested(client: TestClient): Promise<ApprovalRequestedPayload> {
  const [e] = await client.waitFor('tool.approval.requested');
  return e!.payload as ApprovalRequestedPayload;
}
const resolvedEvents = (client: TestClient) =>
  client.events.filter((e) => e.event === 'tool.approval.resolved').map((e) => e.payload as ApprovalResolvedPayload);

describe('commit approval over REST', () => {
  it('the commit waits, the plan is announced and listed, approving lands it; the outcome is announced once', async () => {
    const { t, r, client, head } = await rig({ RUNDIFF_APPROVAL_TIMEOUT_MS: '20000' });
    const pendingCommit = commit(t);
    const plan = await requested(client);
    expect(plan).toEqual({
      approval_id: expect.any(String),
      repository: r.dir.split('/').pop(),
      message: 'Edit <b>a</b>',
      commit: 'paths',
      files: [
        { path: 'a.txt', additions: 2, deletions: 1, new: false, binary: false },
        { path: 'new.txt', additions: 2, deletions: 0, new: true, binary: false },
      ],
      session_id: null,
      session_title: null,
      agent: null,
      created_at: expect.any(Number),
      expires_at: expect.any(Number),
    });
    // nothing is committed while it waits; a page opened now sees it
    expect(r.git('rev-parse', 'HEAD').trim()).toBe(head);
    const listed = (await t.get('/api/tools/approvals')).body.approvals;
    expect(listed).toEqual([plan]);
    expect(listed[0].expires_at - listed[0].created_at).toBe(20_000);

    const yes = await decide(t, plan.approval_id, { decision: 'approve' });
    expect(yes.status).toBe(200);
    expect(yes.body).toEqual({ approval_id: plan.approval_id, decision: 'approve', reason: null });
    const res = await pendingCommit;
    expect(res.status).toBe(200);
    expect(res.body.hash).toBe(r.git('rev-parse', 'HEAD').trim());
    await client.waitFor('tool.approval.resolved');
    expect(resolvedEvents(client)).toEqual([{ approval_id: plan.approval_id, decision: 'approve', reason: null }]);
    expect((await t.get('/api/tools/approvals')).body.approvals).toEqual([]);

    // decided once: a late second click is told so (404 with the outcome); an unknown id is 404
    const late = await decide(t, plan.approval_id, { decision: 'deny' });
    expect(late.status).toBe(404);
    expect(late.body.error).toMatchObject({ code: 'not_found', details: { outcome: 'approve' } });
    expect((await decide(t, 'no-such-approval', { decision: 'approve' })).status).toBe(404);
    expect(resolvedEvents(client)).toHaveLength(1);
  });

  it('deny answers 409 approval_denied and commits nothing; a bad decision is 400 and changes nothing', async () => {
    const { t, r, client, head } = await rig({ RUNDIFF_APPROVAL_TIMEOUT_MS: '20000' });
    const pendingCommit = commit(t);
    const plan = await requested(client);
    const bad = await decide(t, plan.approval_id, { decision: 'maybe' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_input');
    expect((await t.get('/api/tools/approvals')).body.approvals).toHaveLength(1);
    expect((await decide(t, plan.approval_id, { decision: 'deny' })).status).toBe(200);
    const res = await pendingCommit;
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('approval_denied');
    expect(r.git('rev-parse', 'HEAD').trim()).toBe(head);
    expect(r.read('a.txt').toString()).toBe('one\nTWO\nthree\n'); // nothing lost
    await client.waitFor('tool.approval.resolved');
    expect(resolvedEvents(client)).toEqual([{ approval_id: plan.approval_id, decision: 'deny', reason: null }]);
    const log = (await t.get('/api/tools/calls')).body.calls;
    expect(log[0]).toMatchObject({ tool: 'git_commit', ok: false, error_code: 'approval_denied' });
  });

  it("a denial's reason reaches the agent in git_commit's answer and the announced outcome", async () => {
    const { t, r, client, head } = await rig({ RUNDIFF_APPROVAL_TIMEOUT_MS: '20000' });
    await t.post({ type: 'session.upsert', session_id: 's1', title: 'Parser fixes' });
    const pendingCommit = tool(t, 'git_commit', {
      tool_session: 'A',
      session_id: 's1',
      agent: 'claude-code',
      message: 'Edit a',
      paths: ['a.txt', 'new.txt'],
    });
    const plan = await requested(client);
    // The person deciding sees who asks.
    expect(plan).toMatchObject({ session_id: 's1', session_title: 'Parser fixes', agent: 'claude-code' });
    const tooLong = await decide(t, plan.approval_id, { decision: 'deny', reason: 'x'.repeat(2001) });
    expect(tooLong.status).toBe(400);
    const no = await decide(t, plan.approval_id, { decision: 'deny', reason: '  Keep new.txt out of this commit. ' });
    expect(no.body).toEqual({
      approval_id: plan.approval_id,
      decision: 'deny',
      reason: 'Keep new.txt out of this commit.',
    });
    const res = await pendingCommit;
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({
      code: 'approval_denied',
      message: 'a person denied the commit: Keep new.txt out of this commit.',
      details: { approval_id: plan.approval_id, reason: 'Keep new.txt out of this commit.' },
    });
    expect(r.git('rev-parse', 'HEAD').trim()).toBe(head);
    await client.waitFor('tool.approval.resolved');
    expect(resolvedEvents(client)).toEqual([
      { approval_id: plan.approval_id, decision: 'deny', reason: 'Keep new.txt out of this commit.' },
    ]);
  });

  it("an approved commit of a session appears in that session's timeline; a denied one does not", async () => {
    const { t, r, client } = await rig({ RUNDIFF_APPROVAL_TIMEOUT_MS: '20000' });
    const body = { tool_session: 'A', session_id: 's1', message: 'Edit a', paths: ['a.txt', 'new.txt'] };
    const first = tool(t, 'git_commit', body);
    const denied = await requested(client);
    await decide(t, denied.approval_id, { decision: 'deny' });
    expect((await first).status).toBe(409);
    // Positive control below: the same commit, approved, is told to the session.
    expect((await t.get('/api/hermes/sessions/s1')).body.messages).toEqual([]);
    expect((await tool(t, 'git_diff', { tool_session: 'A' })).status).toBe(200);
    const second = tool(t, 'git_commit', body);
    const [, again] = await client.waitFor('tool.approval.requested', 2);
    await decide(t, (again!.payload as ApprovalRequestedPayload).approval_id, { decision: 'approve' });
    const res = await second;
    expect(res.status).toBe(200);
    // The log shows what was asked and what was committed.
    const logged = (await t.get('/api/tools/calls')).body.calls;
    expect(logged[0]).toMatchObject({
      tool: 'git_commit',
      ok: true,
      arguments: JSON.stringify(body),
      commit: { hash: res.body.hash, summary: res.body.summary },
    });
    expect(logged[1]).toMatchObject({ tool: 'git_diff', commit: null });
    expect(logged[2]).toMatchObject({ tool: 'git_commit', ok: false, commit: null });
    const messages = (await t.get('/api/hermes/sessions/s1')).body.messages;
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ role: 'tool', session_id: 's1' });
    expect(messages[0].content).toBe(
      `Commit approved and made in ${r.dir.split('/').pop()}: [main ${res.body.hash.slice(0, 7)}] Edit a (2 files changed, +4 -1)`,
    );
  });

  it('a commit without session_id names the one session with a run in progress in its repository, and joins its timeline', async () => {
    const { t, r, client } = await rig({ RUNDIFF_APPROVAL_TIMEOUT_MS: '20000' });
    await t.post({ type: 'session.upsert', session_id: 's1', title: 'Busy agent' });
    expect((await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1', workspace: r.dir })).status).toBe(200);
    const pendingCommit = commit(t);
    const plan = await requested(client);
    expect(plan).toMatchObject({ session_id: 's1', session_title: 'Busy agent' });
    await decide(t, plan.approval_id, { decision: 'approve' });
    const res = await pendingCommit;
    expect(res.status).toBe(200);
    const messages = (await t.get('/api/hermes/sessions/s1')).body.messages;
    expect(messages).toHaveLength(1);
    expect(messages[0].content).toBe(
      `Commit approved and made in ${r.dir.split('/').pop()}: [main ${res.body.hash.slice(0, 7)}] Edit <b>a</b> (2 files changed, +4 -1)`,
    );
  });

  it('with two sessions at work in the repository, a commit without session_id names none (no guess)', async () => {
    const { t, r, client } = await rig({ RUNDIFF_APPROVAL_TIMEOUT_MS: '20000' });
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1', workspace: r.dir });
    await t.post({ type: 'session.upsert', session_id: 's2', workspace: r.dir });
    await t.post({ type: 'run.started', session_id: 's2', run_id: 'r2', workspace: r.dir });
    const pendingCommit = commit(t);
    const plan = await requested(client);
    expect(plan.session_id).toBeNull();
    await decide(t, plan.approval_id, { decision: 'approve' });
    expect((await pendingCommit).status).toBe(200);
    expect((await t.get('/api/hermes/sessions/s1')).body.messages).toEqual([]);
    expect((await t.get('/api/hermes/sessions/s2')).body.messages).toEqual([]);
  });

  it('a finished run no longer claims the repository: the commit names no session', async () => {
    const { t, r, client } = await rig({ RUNDIFF_APPROVAL_TIMEOUT_MS: '20000' });
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1', workspace: r.dir });
    await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
    const pendingCommit = commit(t);
    const plan = await requested(client);
    expect(plan.session_id).toBeNull();
    await decide(t, plan.approval_id, { decision: 'deny' });
    expect((await pendingCommit).status).toBe(409);
  });

  it('nobody decides: 409 approval_timeout after RUNDIFF_APPROVAL_TIMEOUT_MS, announced as timeout', async () => {
    const { t, r, client, head } = await rig({ RUNDIFF_APPROVAL_TIMEOUT_MS: '300' });
    const started = Date.now();
    const res = await commit(t);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('approval_timeout');
    expect(r.git('rev-parse', 'HEAD').trim()).toBe(head);
    const plan = await requested(client);
    await client.waitFor('tool.approval.resolved');
    expect(resolvedEvents(client)).toEqual([{ approval_id: plan.approval_id, decision: 'timeout', reason: null }]);
  });

  it('an unreviewed commit is refused before anyone is asked; a change made while waiting is refused after approval', async () => {
    const { t, r, client, head } = await rig({ RUNDIFF_APPROVAL_TIMEOUT_MS: '20000' });
    const unreviewed = await tool(t, 'git_commit', { tool_session: 'B', message: 'x', paths: ['a.txt'] });
    expect(unreviewed.body.error.code).toBe('review_required');
    expect(client.names()).not.toContain('tool.approval.requested');

    const pendingCommit = commit(t);
    const plan = await requested(client);
    r.write('a.txt', 'edited while the person was looking\n');
    await decide(t, plan.approval_id, { decision: 'approve' });
    const res = await pendingCommit;
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('stale_review');
    expect(r.git('rev-parse', 'HEAD').trim()).toBe(head);
  });

  it('a caller that goes away withdraws its plan (announced as cancelled)', async () => {
    const { t, client } = await rig({ RUNDIFF_APPROVAL_TIMEOUT_MS: '20000' });
    const http = await import('node:http');
    const req = http.request({
      host: '127.0.0.1',
      port: t.server.port,
      method: 'POST',
      path: '/api/tools/git_commit',
      headers: { 'content-type': 'application/json', host: `127.0.0.1:${t.server.port}` },
    });
    req.on('error', () => undefined);
    req.end(JSON.stringify({ tool_session: 'A', message: 'x', paths: ['a.txt'] }));
    const plan = await requested(client);
    req.destroy();
    await client.waitFor('tool.approval.resolved');
    expect(resolvedEvents(client)).toEqual([{ approval_id: plan.approval_id, decision: 'cancelled', reason: null }]);
    expect((await t.get('/api/tools/approvals')).body.approvals).toEqual([]);
  });

  it('without approval required, a commit goes straight through and POST /api/tools/approvals answers required: false', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const r = createTempRepo({ files: { 'a.txt': 'one\n' } });
    cleanups.push(() => r.cleanup());
    r.git('config', 'user.name', 'Agent');
    r.git('config', 'user.email', 'agent@example.invalid');
    await t.post({ type: 'session.upsert', session_id: 's1', workspace: r.dir });
    r.write('a.txt', 'two\n');
    await tool(t, 'git_diff', { tool_session: 'A' });
    expect((await tool(t, 'git_commit', { tool_session: 'A', message: 'x', paths: ['a.txt'] })).status).toBe(200);
    const ask = await tool(t, 'approvals', { repository: 'r', message: 'm', files: [] });
    expect(ask.body).toEqual({ required: false });
  });
});

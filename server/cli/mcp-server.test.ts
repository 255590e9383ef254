import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startMcpClient } from '../test-support/mcp-client.ts';
import type { ApprovalRequestedPayload } from '../../shared/index.ts';
import { connectClient, startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { openStore } from '../store/index.ts';
import { createTempDir, createTempRepo, type TempRepo } from '../test-support/index.ts';
import { createCallLog } from '../tools-log/index.ts';

/**
 * `rundiff mcp --server URL` end to end: the real server in this process, the MCP server as a
 * child (`node bin/rundiff.js mcp`), driven by the SDK's Client (which checks structured content
 * against the listed output schemas). And `--db FILE` without a server.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function repo(): TempRepo {
  const r = createTempRepo({ files: { 'a.txt': 'one\n' } });
  r.git('config', 'user.name', 'Agent');
  r.git('config', 'user.email', 'agent@example.invalid');
  cleanups.push(() => r.cleanup());
  return r;
}

async function mcp(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ client: Client; stderr: () => string }> {
  const started = await startMcpClient(args, env);
  cleanups.push(started.close);
  return started;
}

async function server(env: Record<string, string> = {}): Promise<TestServer> {
  const t = await startTestServer({ env });
  cleanups.push(() => t.close());
  return t;
}

type Result = Awaited<ReturnType<Client['callTool']>>;
function errorOf(result: Result): { code: string; message: string; details?: Record<string, unknown> } {
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  return (
    JSON.parse((result.content as { text: string }[])[0]!.text) as {
      error: { code: string; message: string; details?: Record<string, unknown> };
    }
  ).error;
}

describe('rundiff mcp --server', () => {
  it('revert_changes undoes one hunk, refuses a conflict naming the file, and previews with dry_run', async () => {
    const t = await server();
    const lines = (edit: Record<number, string> = {}) =>
      Array.from({ length: 20 }, (_, i) => `${edit[i + 1] ?? `l${i + 1}`}\n`).join('');
    const r = createTempRepo({ files: { 'f.txt': lines(), 'g.txt': 'gee\n' } });
    cleanups.push(() => r.cleanup());
    await t.post({ type: 'session.upsert', session_id: 's1', workspace: r.dir });
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
    r.write('f.txt', lines({ 2: 'TWO', 18: 'EIGHTEEN' }));
    r.write('g.txt', 'GEE\n');
    await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
    const { client } = await mcp(['--workspace', r.dir, '--server', t.server.url]);
    const listing = (await client.listTools()).tools.find((x) => x.name === 'revert_changes')!;
    expect(listing.annotations?.destructiveHint).toBe(true);

    const dry = await client.callTool({
      name: 'revert_changes',
      arguments: { session_id: 's1', change: 'r1', paths: ['f.txt'], hunks: [2], dry_run: true },
    });
    expect(dry.isError).toBeFalsy();
    expect(dry.structuredContent).toMatchObject({ dry_run: true, applied_count: 1 });
    expect(r.read('f.txt').toString()).toBe(lines({ 2: 'TWO', 18: 'EIGHTEEN' }));

    const done = await client.callTool({
      name: 'revert_changes',
      arguments: { session_id: 's1', change: 'run:r1', paths: ['f.txt'], hunks: [2] },
    });
    expect(done.isError).toBeFalsy();
    expect(r.read('f.txt').toString()).toBe(lines({ 2: 'TWO' }));

    r.write('g.txt', 'the user wrote this\n');
    const refused = errorOf(
      await client.callTool({ name: 'revert_changes', arguments: { session_id: 's1', change: 'r1' } }),
    );
    expect(refused.code).toBe('revert_conflict');
    expect(refused.message).toContain('g.txt: conflict');
    expect(r.read('f.txt').toString()).toBe(lines({ 2: 'TWO' }));
    const bad = errorOf(
      await client.callTool({ name: 'revert_changes', arguments: { session_id: 's1', change: 'r1', hunks: [1] } }),
    );
    expect(bad.code).toBe('invalid_input');
  });

  it('revert_changes undoes some lines of one hunk; lines without exactly one hunk are refused', async () => {
    const t = await server();
    const r = createTempRepo({ files: { 'f.txt': 'a\nb\nc\nd\n' } });
    cleanups.push(() => r.cleanup());
    await t.post({ type: 'session.upsert', session_id: 's1', workspace: r.dir });
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
    r.write('f.txt', 'a\nB\nC\nX\nd\n');
    await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
    const { client } = await mcp(['--workspace', r.dir, '--server', t.server.url]);
    const call = (more: object) =>
      client.callTool({
        name: 'revert_changes',
        arguments: { session_id: 's1', change: 'r1', paths: ['f.txt'], ...more },
      });
    expect(errorOf(await call({ lines: [6] })).code).toBe('invalid_input');
    expect(errorOf(await call({ hunks: [1], lines: [1] })).message).toContain('is a context line');
    expect(r.read('f.txt').toString()).toBe('a\nB\nC\nX\nd\n');
    const done = await call({ hunks: [1], lines: [6] });
    expect(done.isError).toBeFalsy();
    expect(r.read('f.txt').toString()).toBe('a\nB\nC\nd\n');
  });

  it('revert_changes takes the short id the timeline shows and refuses an ambiguous one with the candidates', async () => {
    const t = await server();
    const r = createTempRepo({ files: { 'a.txt': 'one\n' } });
    cleanups.push(() => r.cleanup());
    await t.post({ type: 'session.upsert', session_id: 's1', workspace: r.dir });
    const ids = ['cc3e822d-1111-4111-8111-111111111111', 'cc3e9f00-2222-4222-8222-222222222222'];
    for (const [i, id] of ids.entries()) {
      await t.post({ type: 'run.started', session_id: 's1', run_id: id });
      r.write(`run${i}.txt`, `${i}\n`);
      await t.post({ type: 'run.completed', session_id: 's1', run_id: id });
    }
    const { client } = await mcp(['--workspace', r.dir, '--server', t.server.url]);
    const dry = await client.callTool({
      name: 'revert_changes',
      arguments: { session_id: 's1', change: 'cc3e822d', paths: ['run0.txt'], dry_run: true },
    });
    expect(dry.isError).toBeFalsy();
    expect(dry.structuredContent).toMatchObject({ change_id: `run:${ids[0]}`, dry_run: true, applied_count: 1 });
    const refused = errorOf(
      await client.callTool({ name: 'revert_changes', arguments: { session_id: 's1', change: 'run:cc3e' } }),
    );
    expect(refused.code).toBe('change_ambiguous');
    expect(refused.details).toMatchObject({ candidates: ids.map((id) => `run:${id}`) });
    expect(fs.existsSync(path.join(r.dir, 'run0.txt')) && fs.existsSync(path.join(r.dir, 'run1.txt'))).toBe(true);
  });

  it('offers run_changes, which answers a half-finished run open and then closed with the same files', async () => {
    const t = await server();
    const r = repo();
    const { client } = await mcp(['--workspace', r.dir, '--server', t.server.url]);
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name)).toEqual([
      'git_status',
      'git_diff',
      'git_log',
      'git_show',
      'git_branch',
      'git_commit',
      'run_changes',
      'revert_changes',
      'review_comments',
      'review_comments_addressed',
      'search_history',
      'blame_file',
    ]);
    const rc = tools.find((x) => x.name === 'run_changes')!;
    expect(rc.annotations?.readOnlyHint).toBe(true);
    expect(rc.inputSchema.required).toEqual(['session_id']);

    await t.post({ type: 'session.upsert', session_id: 's1', workspace: r.dir });
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
    r.write('a.txt', 'one\ntwo\n');
    r.write('b.txt', 'bee\n');
    const open = await client.callTool({ name: 'run_changes', arguments: { session_id: 's1' } });
    expect(open.isError).toBeFalsy();
    const files = (c: unknown) =>
      (c as { change: { files: { path: string; change_type: string }[] } }).change.files.map(
        (f) => `${f.change_type} ${f.path}`,
      );
    expect(open.structuredContent).toMatchObject({ open: true, tracking: true, change: { changed_count: 2 } });
    expect(files(open.structuredContent)).toEqual(['modified a.txt', 'added b.txt']);
    await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
    const closed = await client.callTool({ name: 'run_changes', arguments: { session_id: 's1', run_id: 'r1' } });
    expect(closed.structuredContent).toMatchObject({ open: false, tracking: true });
    expect(files(closed.structuredContent)).toEqual(files(open.structuredContent));
    expect(errorOf(await client.callTool({ name: 'run_changes', arguments: { session_id: 'nope' } })).code).toBe(
      'not_found',
    );
    expect(errorOf(await client.callTool({ name: 'run_changes', arguments: {} })).code).toBe('invalid_input');
  });

  it('pages run_changes: cursor and limit in the schema, next_cursor in the answer, "showing N of M files" in its text', async () => {
    const t = await server();
    const names = Array.from({ length: 120 }, (_, i) => `src/f${String(i).padStart(3, '0')}.txt`);
    const r = createTempRepo({ files: Object.fromEntries(names.map((n) => [n, 'old\n'])) });
    cleanups.push(() => r.cleanup());
    const { client } = await mcp(['--workspace', r.dir, '--server', t.server.url]);
    const listed = (await client.listTools()).tools.find((x) => x.name === 'run_changes')!;
    expect(Object.keys(listed.inputSchema.properties ?? {})).toEqual(['session_id', 'run_id', 'cursor', 'limit']);
    expect(listed.description).toContain('next_cursor');

    await t.post({ type: 'session.upsert', session_id: 's1', workspace: r.dir });
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
    for (const n of names) r.write(n, 'new\n');
    type Answer = { change: { files: { path: string }[] }; files_total: number; next_cursor: string | null };
    const call = async (args: Record<string, unknown>) => {
      const res = await client.callTool({ name: 'run_changes', arguments: { session_id: 's1', ...args } });
      expect(res.isError).toBeFalsy();
      const texts = (res.content as { text: string }[]).map((c) => c.text);
      expect(JSON.parse(texts[0]!)).toEqual(res.structuredContent);
      return { answer: res.structuredContent as Answer, note: texts[1] };
    };

    const open = await call({});
    expect(open.answer.change.files.map((f) => f.path)).toEqual(names.slice(0, 50));
    expect(open.answer).toMatchObject({ files_total: 120, next_cursor: '49' });
    expect(open.note).toBe(
      'showing 50 of 120 files (1-50 in path order); the run is still open: these are its changes so far; call again with cursor "49" for the next page',
    );

    await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
    const seen: string[] = [];
    let cursor: string | null = null;
    let note: string | undefined;
    for (let i = 0; i < 5; i++) {
      const page = await call({ run_id: 'r1', limit: 40, ...(cursor === null ? {} : { cursor }) });
      seen.push(...page.answer.change.files.map((f) => f.path));
      ({ note } = page);
      cursor = page.answer.next_cursor;
      if (cursor === null) break;
    }
    expect(seen).toEqual(names);
    expect(note).toBe('showing 40 of 120 files (81-120 in path order)');
    expect(
      errorOf(await client.callTool({ name: 'run_changes', arguments: { session_id: 's1', limit: 0 } })).code,
    ).toBe('invalid_input');
  });

  it('records every call through the server (git tools run here, run_changes there): GET /api/tools/calls lists them', async () => {
    const t = await server();
    const r = repo();
    const { client, stderr } = await mcp(['--workspace', r.dir, '--server', t.server.url]);
    await client.callTool({ name: 'git_status', arguments: {} });
    await client.callTool({ name: 'git_show', arguments: { ref: '--nope' } });
    await client.callTool({ name: 'run_changes', arguments: { session_id: 'missing' } });
    const calls = (await t.get('/api/tools/calls')).body.calls as Record<string, unknown>[];
    expect(calls.map((c) => [c.tool, c.repository, c.ok, c.error_code])).toEqual([
      ['run_changes', null, false, 'not_found'],
      ['git_show', path.basename(r.dir), false, 'invalid_ref'],
      ['git_status', path.basename(r.dir), true, null],
    ]);
    expect(stderr()).toMatch(/calls recorded by http/);
  });

  it('commit approval through the server: the plan waits for a person; approve commits, deny refuses', async () => {
    const t = await server({ RUNDIFF_REQUIRE_COMMIT_APPROVAL: '1', RUNDIFF_APPROVAL_TIMEOUT_MS: '20000' });
    const r = repo();
    const socket = await connectClient(t.server.url);
    cleanups.push(() => socket.close());
    await socket.ask('sessions.subscribe', {});
    const { client } = await mcp(['--workspace', r.dir, '--server', t.server.url]);
    const head = r.git('rev-parse', 'HEAD').trim();

    r.write('a.txt', 'two\n');
    await client.callTool({ name: 'git_diff', arguments: {} });
    const denied = client.callTool({ name: 'git_commit', arguments: { message: 'No', paths: ['a.txt'] } });
    const [first] = await socket.waitFor('tool.approval.requested');
    const plan = first!.payload as ApprovalRequestedPayload;
    expect(plan).toMatchObject({
      repository: path.basename(r.dir),
      message: 'No',
      commit: 'paths',
      files: [{ path: 'a.txt', additions: 1, deletions: 1, new: false, binary: false }],
      // The person deciding sees which client asks (its MCP name and version).
      agent: 'test 1.0.0',
    });
    const no = await t.request('POST', `/api/tools/approvals/${plan.approval_id}`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'deny', reason: 'Split the refactor from the fix.' }),
    });
    expect(no.status).toBe(200);
    // The reason reaches the agent in the tool's answer.
    expect(errorOf(await denied)).toMatchObject({
      code: 'approval_denied',
      message: 'a person denied the commit: Split the refactor from the fix.',
      details: { reason: 'Split the refactor from the fix.' },
    });
    expect(r.git('rev-parse', 'HEAD').trim()).toBe(head);

    const approved = client.callTool({ name: 'git_commit', arguments: { message: 'Yes', paths: ['a.txt'] } });
    const [, second] = await socket.waitFor('tool.approval.requested', 2);
    const id = (second!.payload as ApprovalRequestedPayload).approval_id;
    await t.request('POST', `/api/tools/approvals/${id}`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    const done = await approved;
    expect(done.isError).toBeFalsy();
    expect((done.structuredContent as { hash: string }).hash).toBe(r.git('rev-parse', 'HEAD').trim());
    const calls = (await t.get('/api/tools/calls')).body.calls as { tool: string; error_code: string | null }[];
    expect(calls.slice(0, 3).map((c) => [c.tool, c.error_code])).toEqual([
      ['git_commit', null],
      ['git_commit', 'approval_denied'],
      ['git_diff', null],
    ]);
  });

  it('git_commit names its session_id: the prompt shows the session and the approved commit joins its timeline', async () => {
    const t = await server({ RUNDIFF_REQUIRE_COMMIT_APPROVAL: '1', RUNDIFF_APPROVAL_TIMEOUT_MS: '20000' });
    const r = repo();
    await t.post({ type: 'session.upsert', session_id: 'agent-s', title: 'Parser fixes' });
    const socket = await connectClient(t.server.url);
    cleanups.push(() => socket.close());
    await socket.ask('sessions.subscribe', {});
    const { client } = await mcp(['--workspace', r.dir, '--server', t.server.url]);
    const commitTool = (await client.listTools()).tools.find((x) => x.name === 'git_commit')!;
    expect(Object.keys(commitTool.inputSchema.properties ?? {})).toContain('session_id');

    r.write('a.txt', 'two\n');
    await client.callTool({ name: 'git_diff', arguments: {} });
    const approved = client.callTool({
      name: 'git_commit',
      arguments: { message: 'Named', paths: ['a.txt'], session_id: 'agent-s' },
    });
    const [event] = await socket.waitFor('tool.approval.requested');
    const plan = event!.payload as ApprovalRequestedPayload;
    expect(plan).toMatchObject({ session_id: 'agent-s', session_title: 'Parser fixes', agent: 'test 1.0.0' });
    await t.request('POST', `/api/tools/approvals/${plan.approval_id}`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    const done = await approved;
    expect(done.isError).toBeFalsy();
    const hash = (done.structuredContent as { hash: string }).hash;
    await expect
      .poll(async () => ((await t.get('/api/hermes/sessions/agent-s')).body.messages as { content: string }[]).length)
      .toBe(1);
    const [message] = (await t.get('/api/hermes/sessions/agent-s')).body.messages as {
      role: string;
      content: string;
    }[];
    expect(message).toMatchObject({ role: 'tool' });
    expect(message!.content).toMatch(
      new RegExp(`^Commit approved and made in ${path.basename(r.dir)}: \\[\\S+ ${hash.slice(0, 7)}\\] Named`),
    );
  });

  it('git_commit without session_id over MCP names the one session with a run in progress in that repository', async () => {
    const t = await server({ RUNDIFF_REQUIRE_COMMIT_APPROVAL: '1', RUNDIFF_APPROVAL_TIMEOUT_MS: '20000' });
    const r = repo();
    await t.post({ type: 'session.upsert', session_id: 'busy', title: 'Busy agent', workspace: r.dir });
    expect((await t.post({ type: 'run.started', session_id: 'busy', run_id: 'run-1', workspace: r.dir })).status).toBe(
      200,
    );
    const socket = await connectClient(t.server.url);
    cleanups.push(() => socket.close());
    await socket.ask('sessions.subscribe', {});
    const { client } = await mcp(['--workspace', r.dir, '--server', t.server.url]);
    r.write('a.txt', 'two\n');
    await client.callTool({ name: 'git_diff', arguments: {} });
    const approved = client.callTool({ name: 'git_commit', arguments: { message: 'Guessed', paths: ['a.txt'] } });
    const [event] = await socket.waitFor('tool.approval.requested');
    const plan = event!.payload as ApprovalRequestedPayload;
    expect(plan).toMatchObject({ session_id: 'busy', session_title: 'Busy agent' });
    await t.request('POST', `/api/tools/approvals/${plan.approval_id}`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect((await approved).isError).toBeFalsy();
    await expect
      .poll(async () =>
        ((await t.get('/api/hermes/sessions/busy')).body.messages as { content: string }[]).map((m) => m.content),
      )
      .toContainEqual(expect.stringMatching(/^Commit approved and made in .*\] Guessed/));
  });

  it('git_commit naming a session that does not exist is refused before anyone is asked; nothing is committed', async () => {
    const t = await server({ RUNDIFF_REQUIRE_COMMIT_APPROVAL: '1', RUNDIFF_APPROVAL_TIMEOUT_MS: '20000' });
    const r = repo();
    const { client } = await mcp(['--workspace', r.dir, '--server', t.server.url]);
    const head = r.git('rev-parse', 'HEAD').trim();
    r.write('a.txt', 'two\n');
    await client.callTool({ name: 'git_diff', arguments: {} });
    const err = errorOf(
      await client.callTool({ name: 'git_commit', arguments: { message: 'x', paths: ['a.txt'], session_id: 'nope' } }),
    );
    expect(err).toMatchObject({ code: 'not_found', details: { session_id: 'nope' } });
    expect(r.git('rev-parse', 'HEAD').trim()).toBe(head);
    const bad = errorOf(
      await client.callTool({ name: 'git_commit', arguments: { message: 'x', paths: ['a.txt'], session_id: 'a\nb' } }),
    );
    expect(bad.code).toBe('invalid_input');
  });

  it('an unreachable server refuses the commit (fail closed) and nothing is committed', async () => {
    const r = repo();
    const { client } = await mcp(['--workspace', r.dir, '--server', 'http://127.0.0.1:9']);
    const head = r.git('rev-parse', 'HEAD').trim();
    r.write('a.txt', 'two\n');
    await client.callTool({ name: 'git_diff', arguments: {} });
    const err = errorOf(await client.callTool({ name: 'git_commit', arguments: { message: 'x', paths: ['a.txt'] } }));
    expect(err.code).toBe('internal');
    expect(err.message).toMatch(/could not be reached/);
    expect(r.git('rev-parse', 'HEAD').trim()).toBe(head);
  });
});

describe('rundiff mcp --db', () => {
  it('without a server, records its calls into the database; run_changes is not offered', async () => {
    const dir = createTempDir();
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const db = path.join(dir, 'calls.db');
    const r = repo();
    const { client } = await mcp(['--workspace', r.dir, '--db', db]);
    expect((await client.listTools()).tools.map((x) => x.name)).not.toContain('run_changes');
    await client.callTool({ name: 'git_branch', arguments: {} });
    await client.callTool({ name: 'git_log', arguments: { limit: 0 } });
    const handle = openStore(db);
    cleanups.push(() => handle.close());
    // invalid input fails before a repository is chosen
    expect((await createCallLog(handle).list(10)).map((c) => [c.tool, c.repository, c.ok, c.error_code])).toEqual([
      ['git_log', null, false, 'invalid_input'],
      ['git_branch', path.basename(r.dir), true, null],
    ]);
  });
});

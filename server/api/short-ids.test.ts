import { afterEach, describe, expect, it } from 'vitest';
import { MAX_CANDIDATES, MIN_PREFIX_CHARS } from '../runs/index.ts';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempRepo, type TempRepo } from '../test-support/index.ts';

/**
 * The short id the timeline shows (`run:cc3e822d`) names its change wherever REST takes a change
 * id; a prefix that starts more than one id is refused with the candidates. The CLI and MCP go
 * through these routes (their own tests: revert.test.ts, mcp-server.test.ts).
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const A = 'cc3e822d-1111-4111-8111-111111111111';
const B = 'cc3e9f00-2222-4222-8222-222222222222';
const TOOL = '7d41a0b2-3333-4333-8333-333333333333';

async function setup(): Promise<{ t: TestServer; repo: TempRepo }> {
  const t = await startTestServer();
  cleanups.push(() => t.close());
  const repo = createTempRepo({ files: { 'a.txt': 'one\n' } });
  cleanups.push(() => repo.cleanup());
  await t.post({ type: 'session.upsert', session_id: 's', workspace: repo.dir });
  await t.post({ type: 'run.started', session_id: 's', run_id: A });
  await t.post({ type: 'tool.started', session_id: 's', run_id: A, tool_call_id: TOOL, name: 'Edit' });
  repo.write('a.txt', 'two\n');
  await t.post({ type: 'tool.completed', session_id: 's', run_id: A, tool_call_id: TOOL });
  await t.post({ type: 'run.completed', session_id: 's', run_id: A });
  await t.post({ type: 'run.started', session_id: 's', run_id: B });
  repo.write('b.txt', 'bee\n');
  await t.post({ type: 'run.completed', session_id: 's', run_id: B });
  return { t, repo };
}

const changeUrl = (id: string) => `/api/hermes/sessions/s/workspace-run-changes/${encodeURIComponent(id)}`;

describe('short change ids over REST', () => {
  it('run:<first 8 characters> names the run in every change route, and tool:<short id> the tool call', async () => {
    const { t } = await setup();
    const change = await t.get(changeUrl('run:cc3e822d'));
    expect(change.status).toBe(200);
    expect(change.body.change.change_id).toBe(`run:${A}`);
    const files = await t.get(`${changeUrl('run:cc3e822d')}/files`);
    expect(files.body.files.map((f: { path: string }) => f.path)).toEqual(['a.txt']);
    const fileId = files.body.files[0].id as string;
    expect((await t.get(`${changeUrl('run:cc3e822d')}/files/${fileId}`)).body.file.patch).toContain('+two');
    expect((await t.get(`${changeUrl('run:cc3e822d')}/files/${fileId}?whitespace=ignore`)).status).toBe(200);
    expect((await t.get(`${changeUrl('run:cc3e822d')}/files/${fileId}/content?side=after`)).body.content.text).toBe(
      'two\n',
    );
    expect((await t.get(`${changeUrl('run:cc3e822d')}/patch`)).text).toContain('+two');
    const tool = await t.get(changeUrl('tool:7d41a0b2'));
    expect(tool.body.change.change_id).toBe(`tool:${TOOL}`);
    const net = await t.get(`/api/hermes/sessions/s/net-change?from=run:cc3e9f00&to=run:cc3e9f00`);
    expect(net.status).toBe(200);
    expect(net.body.change.files.map((f: { path: string }) => f.path)).toEqual(['b.txt']);
    const dry = await t.request('POST', `${changeUrl('run:cc3e822d')}/revert`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ dry_run: true }),
    });
    expect(dry.status).toBe(200);
    expect(dry.body.change_id).toBe(`run:${A}`);
  });

  it('a comment made on a short change id is stored on the full one', async () => {
    const { t } = await setup();
    const files = await t.get(`${changeUrl(`run:${A}`)}/files`);
    const res = await t.request('POST', '/api/hermes/sessions/s/comments', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        change_id: 'run:cc3e822d',
        file_id: files.body.files[0].id,
        side: 'after',
        start_line: 1,
        end_line: 1,
        body: 'Why two?',
      }),
    });
    expect(res.status).toBe(201);
    expect(res.body.comment.anchor.change_id).toBe(`run:${A}`);
  });

  it('an ambiguous prefix is 409 change_ambiguous listing the candidates, in every route', async () => {
    const { t } = await setup();
    const res = await t.get(changeUrl('run:cc3e'));
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({
      code: 'change_ambiguous',
      details: { candidates: [`run:${A}`, `run:${B}`], more: false },
      hint: 'give more characters of the id',
    });
    expect(res.body.error.message).toContain(`run:${A}, run:${B}`);
    expect((await t.get(`${changeUrl('run:cc3e')}/files`)).status).toBe(409);
    expect((await t.get(`/api/hermes/sessions/s/net-change?from=run:cc3e`)).status).toBe(409);
    const revert = await t.request('POST', `${changeUrl('run:cc3e')}/revert`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ dry_run: true }),
    });
    expect(revert.body.error.code).toBe('change_ambiguous');
    // Positive control: one more character names one run.
    expect((await t.get(changeUrl('run:cc3e8'))).body.change.change_id).toBe(`run:${A}`);
  });

  it(`a prefix shorter than ${MIN_PREFIX_CHARS} characters names nothing; an exact short id still does`, async () => {
    const { t, repo } = await setup();
    expect((await t.get(changeUrl('run:cc3'))).body.error.code).toBe('not_found');
    expect((await t.get(changeUrl('run:7d41'))).body.error.code).toBe('not_found'); // a tool call's id is not a run's
    // A run whose whole id is short is named by it, also when a longer id starts with it.
    for (const id of ['r1', 'r1-later']) {
      await t.post({ type: 'run.started', session_id: 's', run_id: id });
      repo.write(`${id}.txt`, 'x\n');
      await t.post({ type: 'run.completed', session_id: 's', run_id: id });
    }
    expect((await t.get(changeUrl('run:r1'))).body.change.change_id).toBe('run:r1');
    expect((await t.get(changeUrl('run:r1-l'))).body.change.change_id).toBe('run:r1-later');
  });

  it(`an ambiguous prefix lists at most ${MAX_CANDIDATES} candidates and says there are more`, async () => {
    const { t } = await setup();
    for (let i = 0; i <= MAX_CANDIDATES; i++) {
      const id = `feed${String(i).padStart(4, '0')}-0000-4000-8000-000000000000`;
      await t.post({ type: 'run.started', session_id: 's', run_id: id });
      await t.post({ type: 'run.completed', session_id: 's', run_id: id });
    }
    const res = await t.get(changeUrl('run:feed'));
    expect(res.status).toBe(409);
    expect(res.body.error.details.candidates).toHaveLength(MAX_CANDIDATES);
    expect(res.body.error.details.more).toBe(true);
    expect(res.body.error.message).toContain(`more than ${MAX_CANDIDATES} changes`);
    // Positive control: exactly MAX_CANDIDATES match, all are listed.
    const ten = await t.get(changeUrl('run:feed000'));
    expect(ten.body.error.details).toMatchObject({ more: false });
    expect(ten.body.error.details.candidates).toHaveLength(MAX_CANDIDATES);
  });
});

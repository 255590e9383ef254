import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isWriteStep, loadFixture } from '../hooks/fixtures/replay.ts';
import { createTempRepo } from '../test-support/temp-repo.ts';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { countRows } from '../test-support/store-engines.ts';
import { SESSION_NO_LONGER_FOLLOWED, TOOL_ENDED_WITH_RUN } from '../../shared/index.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(opts: Parameters<typeof startTestServer>[0] = {}) {
  const logs: string[] = [];
  const t = await startTestServer({ log: (m) => logs.push(m), ...opts });
  cleanups.push(() => t.close());
  const repo = createTempRepo({ files: { 'README.md': '# demo\n' }, git: true });
  cleanups.push(() => repo.cleanup());
  return { t, ws: repo.dir, logs };
}
const postHook = (t: TestServer, agent: string, body: string, headers: Record<string, string> = {}) =>
  t.request('POST', `/api/hooks/${agent}`, { headers: { 'content-type': 'application/json', ...headers }, body });
const count = (t: TestServer, table: string) => countRows(t.server.store, table);

describe('POST /api/hooks/:agent', () => {
  it('a Claude Code session of two prompts becomes two runs with the prompts, the replies and one block per editing tool', async () => {
    const { t, ws } = await setup();
    for (const item of loadFixture('claude-code', 'two-prompts', ws)) {
      if (isWriteStep(item)) {
        fs.writeFileSync(path.join(ws, item.path), item.content);
        continue;
      }
      const res = await postHook(t, 'claude-code', JSON.stringify(item));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({});
    }
    const detail = await t.get('/api/hermes/sessions/claude-code%3A5f0c2a8e-3d41-4b7a-9c52-1e8f0a6b7d10');
    expect(detail.status).toBe(200);
    const d = detail.body;
    expect(d.session.workspace).toBe(ws);
    expect(d.runs.map((r: { status: string; source: string }) => [r.status, r.source])).toEqual([
      ['completed', 'coding-agent'],
      ['completed', 'coding-agent'],
    ]);
    expect(d.messages.map((m: { role: string; content: string }) => `${m.role}: ${m.content}`)).toEqual([
      'user: Create notes.txt with a greeting, then look at README.md',
      'assistant: I created notes.txt and read README.md.',
      'user: Say goodbye in notes.txt and add a log with a shell command',
      'assistant: notes.txt now says goodbye and build.log exists.',
    ]);
    expect(d.tool_calls.map((c: { name: string; status: string }) => `${c.name} ${c.status}`)).toEqual([
      'Write: notes.txt completed',
      'Edit: notes.txt completed',
      'Bash: echo done > build.log completed',
    ]);
    const files = (changeId: string) =>
      d.changes
        .find((c: { change_id: string }) => c.change_id === changeId)
        .files.map((f: { path: string; change_type: string }) => `${f.change_type} ${f.path}`);
    expect(files('tool:toolu_01Write')).toEqual(['added notes.txt']);
    expect(files('tool:toolu_03Edit')).toEqual(['modified notes.txt']);
    expect(files('tool:toolu_04Bash')).toEqual(['added build.log']);
    expect(files(`run:${d.runs[1].run_id}`)).toEqual(['added build.log', 'modified notes.txt']);
    // Read is a read-only tool: no checkpoint, no block.
    expect(d.changes.some((c: { change_id: string }) => c.change_id === 'tool:toolu_02Read')).toBe(false);
  });

  it('a tool.started answer waits for its checkpoint: an edit made as soon as the answer arrives is in that tool call', async () => {
    const { t, ws } = await setup();
    const base = { session_id: 'wait', cwd: ws };
    await postHook(
      t,
      'claude-code',
      JSON.stringify({ ...base, hook_event_name: 'UserPromptSubmit', prompt_id: 'p', prompt: 'x' }),
    );
    for (let i = 0; i < 5; i++) {
      const pre = {
        ...base,
        hook_event_name: 'PreToolUse',
        tool_name: 'Write',
        tool_input: { file_path: `${ws}/f${i}` },
        tool_use_id: `w${i}`,
      };
      expect((await postHook(t, 'claude-code', JSON.stringify(pre))).status).toBe(200);
      fs.writeFileSync(path.join(ws, `f${i}`), `${i}\n`);
      await postHook(t, 'claude-code', JSON.stringify({ ...pre, hook_event_name: 'PostToolUse' }));
    }
    const d = (await t.get('/api/hermes/sessions/claude-code%3Await')).body;
    for (let i = 0; i < 5; i++) {
      const c = d.changes.find((x: { change_id: string }) => x.change_id === `tool:w${i}`);
      expect(c.files.map((f: { path: string }) => f.path)).toEqual([`f${i}`]);
    }
  });

  it('a malformed payload answers 200 {} and stores nothing; the cause is logged', async () => {
    const { t, logs } = await setup();
    const bodies = [
      '{not json',
      '[]',
      '"text"',
      '{}',
      JSON.stringify({ session_id: 'x'.repeat(300), hook_event_name: 'UserPromptSubmit', prompt: 'p' }),
    ];
    for (const body of bodies) {
      const res = await postHook(t, 'claude-code', body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({});
    }
    const wrongType = await t.request('POST', '/api/hooks/claude-code', {
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    expect([wrongType.status, wrongType.body]).toEqual([200, {}]);
    expect(await count(t, 'sessions')).toBe(0);
    expect(await count(t, 'runs')).toBe(0);
    expect(await count(t, 'messages')).toBe(0);
    expect(logs.filter((l) => l.startsWith('hook claude-code')).length).toBeGreaterThanOrEqual(bodies.length);
    // Positive control: the same route does store a well-formed payload.
    await postHook(
      t,
      'claude-code',
      JSON.stringify({ session_id: 's', hook_event_name: 'UserPromptSubmit', prompt: 'p' }),
    );
    expect(await count(t, 'runs')).toBe(1);
  });

  it('an unknown agent is a 404 with the error shape', async () => {
    const { t } = await setup();
    const res = await postHook(t, 'nobody', '{}');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  it('sits behind the token like every /api route', async () => {
    const { t } = await setup({ env: { RUNDIFF_TOKEN: 'secret-token' } });
    const body = JSON.stringify({ session_id: 's', hook_event_name: 'UserPromptSubmit', prompt: 'p' });
    expect((await postHook(t, 'claude-code', body)).status).toBe(401);
    expect(await count(t, 'runs')).toBe(0);
    const ok = await postHook(t, 'claude-code', body, { authorization: 'Bearer secret-token' });
    expect([ok.status, ok.body]).toEqual([200, {}]);
    expect(await count(t, 'runs')).toBe(1);
  });

  it('refuses a foreign Origin like every /api route', async () => {
    const { t } = await setup();
    const res = await postHook(t, 'claude-code', JSON.stringify({ session_id: 's', hook_event_name: 'SessionStart' }), {
      origin: 'https://evil.example',
    });
    expect(res.status).toBe(403);
    expect(await count(t, 'sessions')).toBe(0);
  });
});

describe('an agent session dropped from the hook sessions bound', () => {
  const claude = (t: TestServer, session: string, ws: string, extra: Record<string, unknown>) =>
    postHook(t, 'claude-code', JSON.stringify({ session_id: session, cwd: ws, ...extra }));

  it('has its open run and tool call closed with the reason and their change stored; the workspace is no longer busy', async () => {
    const { t, ws } = await setup({ hookMaxSessions: 2 });
    await claude(t, 'old', ws, { hook_event_name: 'UserPromptSubmit', prompt_id: 'p', prompt: 'edit' });
    await claude(t, 'old', ws, {
      hook_event_name: 'PreToolUse',
      tool_name: 'Write',
      tool_use_id: 'w1',
      tool_input: { file_path: path.join(ws, 'left.txt') },
    });
    fs.writeFileSync(path.join(ws, 'left.txt'), 'never reported\n');
    const detailOf = async () => (await t.get('/api/hermes/sessions/claude-code%3Aold')).body;
    // The control: within the bound the session is kept and its run stays open.
    await claude(t, 'second', ws, { hook_event_name: 'Stop' });
    expect((await detailOf()).runs.map((r: { status: string }) => r.status)).toEqual(['running']);

    // A third session drops the least recently used one ("old"): its run and tool call close.
    await claude(t, 'third', ws, { hook_event_name: 'Stop' });
    await expect.poll(async () => (await detailOf()).runs.map((r: { status: string }) => r.status)).toEqual(['failed']);
    const d = await detailOf();
    expect(d.runs[0].error).toBe(SESSION_NO_LONGER_FOLLOWED);
    expect(d.tool_calls.map((c: { status: string; error: string }) => [c.status, c.error])).toEqual([
      ['failed', TOOL_ENDED_WITH_RUN],
    ]);
    const files = (changeId: string) =>
      d.changes
        .find((c: { change_id: string }) => c.change_id === changeId)
        ?.files.map((f: { path: string }) => f.path);
    expect(files('tool:w1')).toEqual(['left.txt']);
    expect(files('run:p')).toEqual(['left.txt']);
    const res = await t.request(
      'POST',
      '/api/hermes/sessions/claude-code%3Aold/workspace-run-changes/tool%3Aw1/revert',
      { headers: { 'content-type': 'application/json' }, body: '{}' },
    );
    expect(res.status).toBe(200);
    expect(fs.existsSync(path.join(ws, 'left.txt'))).toBe(false);
  });
});

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hookBodyOverLimit, TOOL_ENDED_WITH_RUN } from '../../shared/index.ts';
import { createTempRepo } from '../test-support/temp-repo.ts';
import { startTestServer, type RawResponse, type TestServer } from '../test-support/server-harness.ts';

/**
 * A hook payload over the body limit still closes the tool call it refers to (else its checkpoint
 * keeps the workspace busy until the checkpoint expires): a Write of a 1.25 MiB file makes a
 * PostToolUse of about 2.5 MiB, over the default 2 MiB limit.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup() {
  const logs: string[] = [];
  const t = await startTestServer({ log: (m) => logs.push(m) });
  cleanups.push(() => t.close());
  const repo = createTempRepo({ files: { 'README.md': '# demo\n' }, git: true });
  cleanups.push(() => repo.cleanup());
  return { t, ws: repo.dir, logs };
}

const SESSION = 'a33f8774-2456-47b3-933a-f3f32a12051e';
const BIG = 'line of a large file\n'.repeat(Math.ceil((1.25 * 1024 * 1024) / 21));

/** A Claude Code payload in the field order the CLI sends (see the fixtures of claude-code). */
function payload(ws: string, hookEvent: string, rest: Record<string, unknown>) {
  return {
    session_id: SESSION,
    transcript_path: `/home/dev/.claude/projects/p/${SESSION}.jsonl`,
    cwd: ws,
    prompt_id: 'prompt-1',
    permission_mode: 'acceptEdits',
    hook_event_name: hookEvent,
    ...rest,
  };
}
const writeInput = (ws: string, content: string) => ({ file_path: path.join(ws, 'big.txt'), content });
const preWrite = (ws: string, content: string) =>
  payload(ws, 'PreToolUse', { tool_name: 'Write', tool_input: writeInput(ws, content), tool_use_id: 'toolu_big' });
const postWrite = (ws: string, content: string) =>
  payload(ws, 'PostToolUse', {
    tool_name: 'Write',
    tool_input: writeInput(ws, content),
    tool_response: {
      type: 'create',
      filePath: path.join(ws, 'big.txt'),
      content,
      structuredPatch: [],
      originalFile: null,
      userModified: false,
    },
    tool_use_id: 'toolu_big',
    duration_ms: 12,
  });

const postHook = (t: TestServer, body: string) =>
  t.request('POST', '/api/hooks/claude-code', { headers: { 'content-type': 'application/json' }, body });

/** The same POST sent chunked (no Content-Length), so the body parser reads it until the limit. */
function postChunked(t: TestServer, body: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: t.server.port,
        method: 'POST',
        path: '/api/hooks/claude-code',
        headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const text = raw.toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, raw, body: JSON.parse(text) });
        });
      },
    );
    req.on('error', reject);
    const bytes = Buffer.from(body);
    for (let i = 0; i < bytes.length; i += 64 * 1024) req.write(bytes.subarray(i, i + 64 * 1024));
    req.end();
  });
}

const detailOf = async (t: TestServer) =>
  (await t.get(`/api/hermes/sessions/${encodeURIComponent(`claude-code:${SESSION}`)}`)).body;
const toolCalls = (d: { tool_calls: { tool_call_id: string; status: string; error: string | null }[] }) =>
  d.tool_calls.map((c) => [c.tool_call_id, c.status, c.error]);
const filesOf = (d: { changes: { change_id: string; files: { path: string }[] }[] }, id: string) =>
  d.changes.find((c) => c.change_id === id)?.files.map((f) => f.path);
const revert = (t: TestServer, changeId: string, session = `claude-code:${SESSION}`) =>
  t.request(
    'POST',
    `/api/hermes/sessions/${encodeURIComponent(session)}/workspace-run-changes/${encodeURIComponent(changeId)}/revert`,
    { headers: { 'content-type': 'application/json' }, body: '{}' },
  );

async function openWrite(t: TestServer, ws: string) {
  await postHook(t, JSON.stringify(payload(ws, 'UserPromptSubmit', { prompt: 'write a large file' })));
  // The pre event carries the content once: under the limit, it opens the tool call.
  const pre = await postHook(t, JSON.stringify(preWrite(ws, BIG)));
  expect([pre.status, pre.body]).toEqual([200, {}]);
  fs.writeFileSync(path.join(ws, 'big.txt'), BIG);
}

describe('a hook payload over the body limit', () => {
  for (const [how, send] of [
    ['announced by Content-Length', postHook],
    ['sent chunked', postChunked],
  ] as const) {
    it(`a PostToolUse over the limit (${how}) closes its tool call, failed with the reason, and stores its change`, async () => {
      const { t, ws, logs } = await setup();
      await openWrite(t, ws);
      const body = JSON.stringify(postWrite(ws, BIG));
      expect(Buffer.byteLength(body)).toBeGreaterThan(2.5 * 1024 * 1024);
      const res = await send(t, body);
      expect([res.status, res.body]).toEqual([200, {}]);

      const d = await detailOf(t);
      expect(toolCalls(d)).toEqual([['toolu_big', 'failed', hookBodyOverLimit(Buffer.byteLength(body))]]);
      expect(filesOf(d, 'tool:toolu_big')).toEqual(['big.txt']);
      expect(logs.some((l) => l.includes('payload not read') && l.includes('larger than'))).toBe(true);
      expect(logs.some((l) => l.includes('closed the tool call toolu_big without its answer'))).toBe(true);

      // The turn ends; nothing of it is open, so a revert of the run is not refused as busy.
      await postHook(t, JSON.stringify(payload(ws, 'Stop', { last_assistant_message: 'done' })));
      const end = await detailOf(t);
      expect(toolCalls(end)).toEqual([['toolu_big', 'failed', hookBodyOverLimit(Buffer.byteLength(body))]]);
      const reverted = await revert(t, 'run:prompt-1');
      expect(reverted.status).toBe(200);
      expect(fs.existsSync(path.join(ws, 'big.txt'))).toBe(false);
    });
  }

  it('while that tool call is open (its PostToolUse lost), a revert in the workspace is busy: the control', async () => {
    const { t, ws } = await setup();
    await postHook(t, JSON.stringify(payload(ws, 'UserPromptSubmit', { prompt: 'first', prompt_id: 'prompt-0' })));
    fs.writeFileSync(path.join(ws, 'first.txt'), 'first\n');
    await postHook(t, JSON.stringify(payload(ws, 'Stop', { prompt_id: 'prompt-0', last_assistant_message: 'ok' })));
    await openWrite(t, ws);
    const busy = await revert(t, 'run:prompt-0');
    expect([busy.status, busy.body.error.code]).toEqual([409, 'workspace_busy']);
    expect(toolCalls(await detailOf(t))).toEqual([['toolu_big', 'running', null]]);
  });

  it('a PostToolUse under the limit closes its tool call as completed (the control)', async () => {
    const { t, ws } = await setup();
    await openWrite(t, ws);
    const small = 'x'.repeat(900 * 1024);
    const body = JSON.stringify(postWrite(ws, small));
    expect(Buffer.byteLength(body)).toBeLessThan(2 * 1024 * 1024);
    expect((await postHook(t, body)).status).toBe(200);
    const d = await detailOf(t);
    expect(toolCalls(d)).toEqual([['toolu_big', 'completed', null]]);
    expect(filesOf(d, 'tool:toolu_big')).toEqual(['big.txt']);
  });

  it('a PreToolUse over the limit opens nothing on a guess, and the agent still gets the neutral answer', async () => {
    const { t, ws, logs } = await setup();
    await postHook(t, JSON.stringify(payload(ws, 'UserPromptSubmit', { prompt: 'write a large file' })));
    const huge = BIG + BIG;
    const res = await postHook(t, JSON.stringify(preWrite(ws, huge)));
    expect([res.status, res.body]).toEqual([200, {}]);
    const d = await detailOf(t);
    expect(d.tool_calls).toEqual([]);
    expect(d.runs.map((r: { status: string }) => r.status)).toEqual(['running']);
    expect(logs.some((l) => l.includes('was not used (it would mean tool.started)'))).toBe(true);
  });

  it('a UserPromptSubmit over the limit starts no run', async () => {
    const { t, ws, logs } = await setup();
    const res = await postHook(t, JSON.stringify(payload(ws, 'UserPromptSubmit', { prompt: BIG + BIG })));
    expect([res.status, res.body]).toEqual([200, {}]);
    const detail = await t.get(`/api/hermes/sessions/${encodeURIComponent(`claude-code:${SESSION}`)}`);
    expect(detail.status).toBe(404);
    expect(logs.some((l) => l.includes('was not used'))).toBe(true);
  });
});

/**
 * opencode and Hermes keep their tool-call ids nested (`input.callID`, `extra.tool_call_id`), and
 * Hermes sends its ids after the tool's input: an over-limit end is found where the agent puts it.
 */
describe('a tool end over the body limit from an agent that nests its ids', () => {
  const postTo = (t: TestServer, agent: string, body: unknown) =>
    t.request('POST', `/api/hooks/${agent}`, {
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const detail = async (t: TestServer, id: string) =>
    (await t.get(`/api/hermes/sessions/${encodeURIComponent(id)}`)).body;

  const opencode = {
    session: 'opencode:ses_big1',
    prompt: (ws: string) => ({
      hook: 'chat.message',
      directory: ws,
      input: { sessionID: 'ses_big1', messageID: 'msg_1' },
      output: { message: { id: 'msg_1' }, parts: [{ type: 'text', text: 'write a large file' }] },
    }),
    pre: (ws: string) => ({
      hook: 'tool.execute.before',
      directory: ws,
      input: { tool: 'write', sessionID: 'ses_big1', callID: 'call_big' },
      output: { args: { filePath: path.join(ws, 'big.txt'), content: BIG } },
    }),
    post: (ws: string, content: string) => ({
      hook: 'tool.execute.after',
      directory: ws,
      input: { tool: 'write', sessionID: 'ses_big1', callID: 'call_big' },
      output: { title: 'big.txt', output: content, metadata: { filepath: path.join(ws, 'big.txt'), exists: false } },
    }),
  };
  /** In Hermes's order: the tool's input before the session id, the call id after the arguments and result. */
  const hermes = {
    session: 'hermes:20261130_big',
    base: (ws: string, event: string, tool: string | null, input: unknown) => ({
      hook_event_name: event,
      tool_name: tool,
      tool_input: input,
      session_id: '20261130_big',
      cwd: ws,
      profile: 'default',
    }),
    prompt(ws: string) {
      return { ...this.base(ws, 'pre_llm_call', null, null), extra: { turn_id: 'turn_1', user_message: 'write it' } };
    },
    pre(ws: string) {
      const input = { path: path.join(ws, 'big.txt'), content: BIG };
      return { ...this.base(ws, 'pre_tool_call', 'write_file', input), extra: { tool_call_id: 'call_big' } };
    },
    post(ws: string, content: string) {
      const input = { path: path.join(ws, 'big.txt'), content };
      return {
        ...this.base(ws, 'post_tool_call', 'write_file', input),
        extra: {
          tool_name: 'write_file',
          args: input,
          result: `{"bytes_written": ${content.length}}`,
          session_id: '20261130_big',
          tool_call_id: 'call_big',
          turn_id: 'turn_1',
          status: 'success',
        },
      };
    },
  };

  for (const [agent, a] of [
    ['opencode', opencode],
    ['hermes', hermes],
  ] as const) {
    it(`${agent}: a tool end over the limit closes its call, failed with the reason, stores its change, drops its checkpoint`, async () => {
      const { t, ws, logs } = await setup();
      await postTo(t, agent, a.prompt(ws));
      expect((await postTo(t, agent, a.pre(ws))).status).toBe(200);
      expect(t.server.engine.has(a.session, 'tool:call_big')).toBe(true);
      fs.writeFileSync(path.join(ws, 'big.txt'), BIG);
      const body = JSON.stringify(a.post(ws, BIG + BIG));
      expect(Buffer.byteLength(body)).toBeGreaterThan(2 * 1024 * 1024);
      expect(await postTo(t, agent, body)).toMatchObject({ status: 200, body: {} });

      const d = await detail(t, a.session);
      expect(toolCalls(d)).toEqual([['call_big', 'failed', hookBodyOverLimit(Buffer.byteLength(body))]]);
      expect(filesOf(d, 'tool:call_big')).toEqual(['big.txt']);
      expect(t.server.engine.has(a.session, 'tool:call_big')).toBe(false);
      expect(d.runs.map((r: { status: string }) => r.status)).toEqual(['running']);
      expect(logs.some((l) => l.includes('closed the tool call call_big without its answer'))).toBe(true);
    });

    it(`${agent}: the same end under the limit closes its call as completed (the control)`, async () => {
      const { t, ws } = await setup();
      await postTo(t, agent, a.prompt(ws));
      await postTo(t, agent, a.pre(ws));
      fs.writeFileSync(path.join(ws, 'big.txt'), BIG);
      expect((await postTo(t, agent, a.post(ws, 'small'))).status).toBe(200);
      const d = await detail(t, a.session);
      expect(toolCalls(d)).toEqual([['call_big', 'completed', null]]);
      expect(t.server.engine.has(a.session, 'tool:call_big')).toBe(false);
    });
  }
});

/**
 * A run-end event over the limit (a Stop whose reply alone is over 2 MiB) still ends the run it
 * names: the run is recorded as the agent ended it, and its close ends the tool calls still open.
 */
describe("a run's end over the body limit", () => {
  const postTo = (t: TestServer, agent: string, body: unknown) =>
    t.request('POST', `/api/hooks/${agent}`, {
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const runsOf = (d: { runs: { run_id: string; status: string; error: string | null }[] }) =>
    d.runs.map((r) => [r.run_id, r.status, r.error]);
  const messagesOf = (d: { messages: { role: string }[] }) => d.messages.map((m) => m.role);

  const agents = {
    'claude-code': {
      session: `claude-code:${SESSION}`,
      run: 'prompt-1',
      prompt: (ws: string) => payload(ws, 'UserPromptSubmit', { prompt: 'write a large file' }),
      pre: (ws: string) => preWrite(ws, 'small\n'),
      end: (ws: string, reply: string) =>
        payload(ws, 'Stop', { stop_hook_active: false, last_assistant_message: reply }),
    },
    opencode: {
      session: 'opencode:ses_end1',
      run: 'msg_1',
      prompt: (ws: string) => ({
        hook: 'chat.message',
        directory: ws,
        input: { sessionID: 'ses_end1', messageID: 'msg_1' },
        output: { message: { id: 'msg_1' }, parts: [{ type: 'text', text: 'write it' }] },
      }),
      pre: (ws: string) => ({
        hook: 'tool.execute.before',
        directory: ws,
        input: { tool: 'write', sessionID: 'ses_end1', callID: 'call_open' },
        output: { args: { filePath: path.join(ws, 'big.txt'), content: 'small\n' } },
      }),
      end: (ws: string, reply: string) => ({
        hook: 'event',
        directory: ws,
        event: { type: 'session.idle', properties: { sessionID: 'ses_end1' } },
        reply,
      }),
    },
    hermes: {
      session: 'hermes:20261130_end',
      run: 'turn_1',
      prompt: (ws: string) => ({
        hook_event_name: 'pre_llm_call',
        tool_name: null,
        tool_input: null,
        session_id: '20261130_end',
        cwd: ws,
        extra: { turn_id: 'turn_1', user_message: 'write it' },
      }),
      pre: (ws: string) => ({
        hook_event_name: 'pre_tool_call',
        tool_name: 'write_file',
        tool_input: { path: path.join(ws, 'big.txt'), content: 'small\n' },
        session_id: '20261130_end',
        cwd: ws,
        extra: { tool_call_id: 'call_open', turn_id: 'turn_1' },
      }),
      end: (ws: string, reply: string) => ({
        hook_event_name: 'post_llm_call',
        tool_name: null,
        tool_input: null,
        session_id: '20261130_end',
        cwd: ws,
        extra: { turn_id: 'turn_1', assistant_response: reply },
      }),
    },
  };
  const openCall = { 'claude-code': 'toolu_big', opencode: 'call_open', hermes: 'call_open' };

  for (const [agent, a] of Object.entries(agents) as [keyof typeof agents, (typeof agents)[keyof typeof agents]][]) {
    it(`${agent}: a run's end over the limit ends its run, and the run's close ends its open tool call`, async () => {
      const { t, ws, logs } = await setup();
      await postTo(t, agent, a.prompt(ws));
      await postTo(t, agent, a.pre(ws));
      fs.writeFileSync(path.join(ws, 'big.txt'), 'small\n');
      const body = JSON.stringify(a.end(ws, BIG + BIG));
      expect(Buffer.byteLength(body)).toBeGreaterThan(2 * 1024 * 1024);
      expect(await postTo(t, agent, body)).toMatchObject({ status: 200, body: {} });

      const d = (await t.get(`/api/hermes/sessions/${encodeURIComponent(a.session)}`)).body;
      expect(runsOf(d)).toEqual([[a.run, 'completed', null]]);
      expect(toolCalls(d)).toEqual([[openCall[agent], 'failed', TOOL_ENDED_WITH_RUN]]);
      expect(filesOf(d, `run:${a.run}`)).toEqual(['big.txt']);
      // The reply was not read: nothing of it is stored.
      expect(messagesOf(d)).toEqual(['user']);
      expect(t.server.engine.has(a.session, `run:${a.run}`)).toBe(false);
      expect(logs.some((l) => l.includes(`ended the run ${a.run} (run.completed)`))).toBe(true);
      // Nothing of the run is open any more: a revert of it is not refused as busy.
      const reverted = await revert(t, `run:${a.run}`, a.session);
      expect(reverted.status).toBe(200);
    });

    it(`${agent}: the same end under the limit ends the run with its reply (the control)`, async () => {
      const { t, ws } = await setup();
      await postTo(t, agent, a.prompt(ws));
      await postTo(t, agent, a.pre(ws));
      expect((await postTo(t, agent, a.end(ws, 'done'))).status).toBe(200);
      const d = (await t.get(`/api/hermes/sessions/${encodeURIComponent(a.session)}`)).body;
      expect(runsOf(d)).toEqual([[a.run, 'completed', null]]);
      expect(toolCalls(d)).toEqual([[openCall[agent], 'failed', TOOL_ENDED_WITH_RUN]]);
      expect(messagesOf(d)).toEqual(['user', 'assistant']);
    });
  }

  it('a Stop over the limit with no run open sends nothing', async () => {
    const { t, ws, logs } = await setup();
    const res = await postTo(
      t,
      'claude-code',
      JSON.stringify(payload(ws, 'Stop', { last_assistant_message: BIG + BIG })),
    );
    expect([res.status, res.body]).toEqual([200, {}]);
    expect((await t.get(`/api/hermes/sessions/${encodeURIComponent(`claude-code:${SESSION}`)}`)).status).toBe(404);
    expect(logs.some((l) => l.includes('was not used (it would mean nothing to close)'))).toBe(true);
  });
});

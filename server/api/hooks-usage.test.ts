import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Run, SessionDetailResponse } from '../../shared/index.ts';
import { transcriptLines, type TurnSpec } from '../test-support/claude-transcript.ts';
import { createTempRepo } from '../test-support/temp-repo.ts';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';

/**
 * A run's token usage, from the transcript Claude Code names in its hook payloads, read at the
 * run's end by the real server and served with the run and summed on its session.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const SESSION = 'b44f8774-2456-47b3-933a-f3f32a12051f';

async function setup() {
  const t = await startTestServer({ log: () => undefined });
  cleanups.push(() => t.close());
  const repo = createTempRepo({ files: { 'README.md': '# demo\n' }, git: true });
  cleanups.push(() => repo.cleanup());
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-claude-home-'));
  cleanups.push(() => fs.rmSync(home, { recursive: true, force: true }));
  const transcript = path.join(home, '.claude', 'projects', 'p', `${SESSION}.jsonl`);
  fs.mkdirSync(path.dirname(transcript), { recursive: true });
  return { t, ws: repo.dir, transcript };
}

const post = (t: TestServer, body: unknown) =>
  t.request('POST', '/api/hooks/claude-code', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const payload = (ws: string, transcript: string, promptId: string, event: string, rest: object = {}) => ({
  session_id: SESSION,
  transcript_path: transcript,
  cwd: ws,
  prompt_id: promptId,
  permission_mode: 'acceptEdits',
  hook_event_name: event,
  ...rest,
});
const msg = (id: string, input: number, output: number, cacheRead: number, cacheWrite: number, blocks = 1) => ({
  id,
  input,
  output,
  cacheRead,
  cacheWrite,
  blocks,
});

async function prompt(t: TestServer, ws: string, transcript: string, turn: TurnSpec & { promptId: string }) {
  const p = (event: string, rest: object = {}) => payload(ws, transcript, turn.promptId, event, rest);
  expect((await post(t, p('UserPromptSubmit', { prompt: turn.prompt }))).status).toBe(200);
  // What the agent writes while it answers: the prompt's line, then its messages.
  const text = transcriptLines(SESSION, [turn]).split('\n').slice(1).join('\n');
  fs.appendFileSync(transcript, text);
  expect((await post(t, p('Stop', { stop_hook_active: false, last_assistant_message: 'done' }))).status).toBe(200);
}

const detail = async (t: TestServer) =>
  (await t.get(`/api/hermes/sessions/${encodeURIComponent(`claude-code:${SESSION}`)}`)).body as SessionDetailResponse;

describe('Claude Code token usage through the hooks', () => {
  it('each run gets the usage of its own messages (one count per message id), the session their sum', async () => {
    const { t, ws, transcript } = await setup();
    await prompt(t, ws, transcript, {
      prompt: 'one',
      promptId: 'p1',
      messages: [msg('msg_1', 10, 5, 100, 50, 2), msg('msg_2', 3, 7, 200, 0)],
    });
    await prompt(t, ws, transcript, { prompt: 'two', promptId: 'p2', messages: [msg('msg_3', 1, 2, 300, 4, 3)] });
    const d = await detail(t);
    expect(d.runs.map((r: Run) => [r.run_id, r.status, r.usage])).toEqual([
      ['p1', 'completed', { input: 13, output: 12, cache_read: 300, cache_write: 50 }],
      ['p2', 'completed', { input: 1, output: 2, cache_read: 300, cache_write: 4 }],
    ]);
    expect(d.session.usage).toEqual({ input: 14, output: 14, cache_read: 600, cache_write: 54 });
    const list = await t.get('/api/hermes/sessions');
    expect(list.body.sessions[0].usage).toEqual({ input: 14, output: 14, cache_read: 600, cache_write: 54 });
  });

  it('a run whose transcript is gone or a link shows no usage, and still completes; a session without any has none', async () => {
    const { t, ws, transcript } = await setup();
    const target = transcript.replace('.jsonl', '-real.jsonl');
    fs.writeFileSync(
      target,
      transcriptLines(SESSION, [{ prompt: 'x', promptId: 'p1', messages: [msg('m', 1, 1, 0, 0)] }]),
    );
    fs.symlinkSync(target, transcript);
    const p = (event: string, rest: object = {}) => payload(ws, transcript, 'p1', event, rest);
    await post(t, p('UserPromptSubmit', { prompt: 'x' }));
    await post(t, p('Stop', { stop_hook_active: false }));
    const gone = (event: string, rest: object = {}) => payload(ws, `${transcript}.gone.jsonl`, 'p2', event, rest);
    await post(t, gone('UserPromptSubmit', { prompt: 'y' }));
    await post(t, gone('Stop', { stop_hook_active: false }));
    const d = await detail(t);
    expect(d.runs.map((r: Run) => [r.run_id, r.status, r.usage])).toEqual([
      ['p1', 'completed', null],
      ['p2', 'completed', null],
    ]);
    expect(d.session.usage).toBeNull();
  });
});

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '../hooks/fixtures');

describe('Codex and Gemini CLI token usage through the hooks', () => {
  /** A copy of a log recorded from the real CLI, where the agent would keep it. */
  async function withLog(fixture: string) {
    const { t, ws } = await setup();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-agent-log-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const log = path.join(dir, 'session.jsonl');
    fs.copyFileSync(path.join(fixtures, fixture), log);
    const send = (agent: string, body: unknown) =>
      t.request('POST', `/api/hooks/${agent}`, {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    return { t, ws, log, send };
  }

  it("a Codex run gets its turn's answers from Codex's session log, named at Stop", async () => {
    const { t, ws, log, send } = await withLog('codex/rollout-two-prompts.jsonl');
    const base = { session_id: 'cx1', transcript_path: log, cwd: ws, model: 'gpt-5.5' };
    for (const [turn, prompt] of [
      ['01a23797-b5a2-7e23-95d3-eac07253ce1a', 'Do the first thing'],
      ['01a23797-baf1-7053-bc35-8355cbd917dd', 'Now the second thing'],
    ] as const) {
      expect(
        (await send('codex', { ...base, turn_id: turn, hook_event_name: 'UserPromptSubmit', prompt })).status,
      ).toBe(200);
      const stop = { ...base, turn_id: turn, hook_event_name: 'Stop', stop_hook_active: false };
      expect((await send('codex', stop)).status).toBe(200);
    }
    const d = (await t.get(`/api/hermes/sessions/${encodeURIComponent('codex:cx1')}`)).body as SessionDetailResponse;
    expect(d.runs.map((r: Run) => r.usage)).toEqual([
      { input: 300, output: 42, cache_read: 2200, cache_write: 0 },
      { input: 220, output: 7, cache_read: 1280, cache_write: 0 },
    ]);
    expect(d.session.usage).toEqual({ input: 520, output: 49, cache_read: 3480, cache_write: 0 });
  });

  it("a Gemini CLI run gets the answers after its prompt from Gemini's chat log, named at AfterAgent", async () => {
    const { t, ws, log, send } = await withLog('gemini/chat-two-prompts.jsonl');
    const base = { session_id: 'gm1', transcript_path: log, cwd: ws };
    const at = (n: number) => `2026-12-02T16:31:0${n}.000Z`;
    await send('gemini', { ...base, hook_event_name: 'BeforeAgent', timestamp: at(1), prompt: 'Now the second thing' });
    await send('gemini', { ...base, hook_event_name: 'AfterAgent', timestamp: at(2), prompt_response: 'Again.' });
    const d = (await t.get(`/api/hermes/sessions/${encodeURIComponent('gemini:gm1')}`)).body as SessionDetailResponse;
    expect(d.runs.map((r: Run) => [r.status, r.usage])).toEqual([
      ['completed', { input: 50, output: 6, cache_read: 950, cache_write: 0 }],
    ]);
  });
});

import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { TOOL_ENDED_WITH_RUN } from '../../shared/index.ts';
import { replay } from '../hooks/fixtures/mapping-replay.ts';
import { MAPPERS, type HookAgent } from '../hooks/index.ts';
import { createTempRepo } from '../test-support/temp-repo.ts';
import { startTestServer } from '../test-support/server-harness.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The fixture sequence with its workspace moved into a real temporary repository. */
function sequenceIn(agent: string, ws: string): unknown[] {
  const file = new URL(`../hooks/fixtures/${agent}/sequence.json`, import.meta.url);
  return JSON.parse(fs.readFileSync(file, 'utf8').replaceAll('/home/dev/project', ws)) as unknown[];
}

const AGENTS: HookAgent[] = ['gemini', 'cursor', 'copilot', 'opencode', 'cline', 'hermes'];

/**
 * The tool calls each fixture session leaves without an end when its run ends (an interrupted or
 * cancelled turn): the mapping sends no end for them, the run's own close ends them.
 */
const UNREPORTED: Record<string, { run: string; call: string }[]> = {
  cursor: [{ run: '7a2c0b3d-1f5e-4d2c-9e68-1b2f3c4d5e6f', call: 'tool-4-7a2c0b3d-1f5e-4d2c-9e68-1b2f3c4d5e6f' }],
  opencode: [{ run: 'msg_a1b2c3d4e5f6A1B2C3D4E5F6', call: 'call_e1' }],
  cline: [{ run: 'prompt-2-2026-11-30T10:00:13.000Z', call: 'call_5_sh' }],
  hermes: [{ run: 'turn_02', call: 'call_t3' }],
};

interface ToolCallRow {
  tool_call_id: string;
  run_id: string;
  name: string;
  status: string;
  error: string | null;
}

describe('POST /api/hooks/:agent stores what each agent mapping says, and the bridge refuses none of it', () => {
  for (const agent of AGENTS)
    it(`${agent}: the fixture session becomes the runs, tool calls and messages its mapping produced`, async () => {
      const logs: string[] = [];
      const t = await startTestServer({ log: (m) => logs.push(m) });
      cleanups.push(() => t.close());
      const repo = createTempRepo({ files: { 'README.md': '# demo\n' }, git: true });
      cleanups.push(() => repo.cleanup());
      const payloads = sequenceIn(agent, repo.dir);
      for (const p of payloads) {
        const res = await t.request('POST', `/api/hooks/${agent}`, {
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(p),
        });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({});
      }
      expect(logs.filter((l) => l.startsWith(`hook ${agent}`))).toEqual([]);

      const expected = replay(MAPPERS[agent]!, payloads).events;
      const sessionId = expected[0]!.session_id;
      const d = (await t.get(`/api/hermes/sessions/${encodeURIComponent(sessionId)}`)).body;
      expect(d.session.workspace).toBe(repo.dir);
      const runEnds = expected.flatMap((e) => (e.type === 'run.completed' || e.type === 'run.failed' ? [e] : []));
      expect(d.runs.map((r: { run_id: string; status: string }) => `${r.run_id} ${r.status}`)).toEqual(
        runEnds.map((e) => `${e.run_id} ${e.type === 'run.completed' ? 'completed' : 'failed'}`),
      );
      const toolEnds = new Map(
        expected.flatMap((e) =>
          e.type === 'tool.completed' ? [[e.tool_call_id, e.error ? 'failed' : 'completed']] : [],
        ),
      );
      // A call the mapping sends no end for is closed by its run's end, failed.
      expect(d.tool_calls.map((c: ToolCallRow) => `${c.name} ${c.status}`)).toEqual(
        expected.flatMap((e) =>
          e.type === 'tool.started' ? [`${e.name} ${toolEnds.get(e.tool_call_id) ?? 'failed'}`] : [],
        ),
      );
      const unreported = expected.flatMap((e) =>
        e.type === 'tool.started' && !toolEnds.has(e.tool_call_id) ? [{ run: e.run_id, call: e.tool_call_id }] : [],
      );
      expect(unreported).toEqual(UNREPORTED[agent] ?? []);
      for (const { run, call } of unreported)
        expect(d.tool_calls.find((c: ToolCallRow) => c.tool_call_id === call)).toMatchObject({
          run_id: run,
          status: 'failed',
          error: TOOL_ENDED_WITH_RUN,
        });
      expect(d.messages.map((m: { role: string; content: string }) => `${m.role}: ${m.content}`)).toEqual(
        expected.flatMap((e) => (e.type === 'message' ? [`${e.role}: ${e.content}`] : [])),
      );
    });
});

describe('a run a hook mapping ends closes its tool calls still open, through the run close alone', () => {
  it('gemini: a turn never closed, ended by the next prompt, fails and ends its open tool call with it', async () => {
    const t = await startTestServer({ log: () => {} });
    cleanups.push(() => t.close());
    const repo = createTempRepo({ files: { 'README.md': '# demo\n' }, git: true });
    cleanups.push(() => repo.cleanup());
    const base = { session_id: 'p', cwd: repo.dir, timestamp: 't' };
    for (const p of [
      { ...base, hook_event_name: 'BeforeAgent', prompt: 'one' },
      { ...base, hook_event_name: 'BeforeTool', tool_name: 'write_file', tool_input: { file_path: '/a' } },
      { ...base, hook_event_name: 'BeforeAgent', prompt: 'two' },
    ])
      expect(
        (
          await t.request('POST', '/api/hooks/gemini', {
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(p),
          })
        ).status,
      ).toBe(200);
    const d = (await t.get(`/api/hermes/sessions/${encodeURIComponent('gemini:p')}`)).body;
    expect(d.runs.map((r: { run_id: string; status: string }) => [r.run_id, r.status])).toEqual([
      ['prompt-1-t', 'failed'],
      ['prompt-2-t', 'running'],
    ]);
    expect(d.tool_calls.map((c: ToolCallRow) => [c.tool_call_id, c.run_id, c.status, c.error])).toEqual([
      ['tool-1-t', 'prompt-1-t', 'failed', TOOL_ENDED_WITH_RUN],
    ]);
    expect(t.server.engine.has('gemini:p', 'tool:tool-1-t')).toBe(false);
  });
});

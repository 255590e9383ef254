import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
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
      expect(
        d.tool_calls.map((c: { tool_call_id: string; name: string; status: string }) => `${c.name} ${c.status}`),
      ).toEqual(
        expected.flatMap((e) => (e.type === 'tool.started' ? [`${e.name} ${toolEnds.get(e.tool_call_id)}`] : [])),
      );
      expect(d.messages.map((m: { role: string; content: string }) => `${m.role}: ${m.content}`)).toEqual(
        expected.flatMap((e) => (e.type === 'message' ? [`${e.role}: ${e.content}`] : [])),
      );
    });
});

import { expect, it } from 'vitest';
import type { ToolCall } from '../../shared/index.ts';
import { describeEachEngine } from '../test-support/store-engines.ts';
import type { Finish, Store } from './index.ts';

const call = (id: string, runId: string, startedAt: number): ToolCall & { workspace: string | null } => ({
  tool_call_id: id,
  run_id: runId,
  session_id: 's',
  name: null,
  status: 'running',
  started_at: startedAt,
  finished_at: null,
  error: null,
  change_id: `tool:${id}`,
  tracking: false,
  reason: null,
  workspace: null,
});

const finished = (): Finish => ({
  status: 'completed',
  finished_at: 99,
  error: null,
  tracking: false,
  reason: null,
  response: { change_id: 'x', tracking: false, reason: 'no_checkpoint' },
});

async function seed(s: Store) {
  await s.sessions.upsert('s', {}, 1);
  await s.sessions.upsert('other', {}, 1);
  await s.runs.insertToolCall(call('c3', 'r1', 30));
  await s.runs.insertToolCall(call('c1', 'r1', 10));
  await s.runs.insertToolCall(call('c2', 'r1', 20));
  await s.runs.insertToolCall(call('d1', 'r2', 15));
  await s.runs.insertToolCall({ ...call('e1', 'r1', 5), session_id: 'other' });
  await s.runs.finish('tool', 's', 'c2', finished());
}

describeEachEngine('the open tool calls of a run', (engine) => {
  it('are the ids of that run of that session still running, in start order', async () => {
    const s = await engine.open();
    await seed(s);
    expect(await s.runs.openToolCalls('s', 'r1')).toEqual(['c1', 'c3']);
    expect(await s.runs.openToolCalls('s', 'r2')).toEqual(['d1']);
    expect(await s.runs.openToolCalls('other', 'r1')).toEqual(['e1']);
    expect(await s.runs.openToolCalls('s', 'r9')).toEqual([]);
  });

  it('a tool call finished leaves the list; the session-wide list still holds it (the control)', async () => {
    const s = await engine.open();
    await seed(s);
    await s.runs.finish('tool', 's', 'c1', finished());
    expect(await s.runs.openToolCalls('s', 'r1')).toEqual(['c3']);
    expect((await s.runs.list('tool', 's')).map((t) => `${t.tool_call_id} ${t.status}`)).toEqual([
      'c1 completed',
      'd1 running',
      'c2 completed',
      'c3 running',
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { readFixture, replay } from '../fixtures/mapping-replay.ts';
import { initialHookState } from '../types.ts';
import { MAX_OPENCODE_STEPS, opencodeMapper } from './opencode.ts';

const S = 'opencode:ses_5a1e2b3c4d5eFfA1b2C3d4E5f6';
const WS = '/home/dev/project';
const R1 = 'msg_a1b2c3d4e5f6A1B2C3D4E5F6';
const R2 = 'msg_b2c3d4e5f6a1B2C3D4E5F6A1';

describe('opencode hook mapping', () => {
  it('maps a whole session: runs named by the user message, blocks by call id, the reply and a session error', () => {
    const { perPayload, events } = replay(opencodeMapper, readFixture('opencode', 'sequence'));
    expect(perPayload[4]).toEqual([]); // read only reads
    expect(perPayload[5]).toEqual([]);
    expect(events).toEqual([
      {
        type: 'session.upsert',
        session_id: S,
        title: 'New session - 2026-11-30T10:00:00.000Z',
        workspace: WS,
      },
      // the synthetic reminder part is not part of what the user typed
      { type: 'message', session_id: S, role: 'user', content: 'Add a greeting file and run the tests', run_id: R1 },
      { type: 'run.started', session_id: S, run_id: R1, source: 'coding-agent', workspace: WS },
      {
        type: 'tool.started',
        session_id: S,
        run_id: R1,
        tool_call_id: 'call_w1',
        name: 'write: hello.txt',
        workspace: WS,
      },
      { type: 'tool.completed', session_id: S, run_id: R1, tool_call_id: 'call_w1' },
      {
        type: 'tool.started',
        session_id: S,
        run_id: R1,
        tool_call_id: 'call_b1',
        name: 'bash: echo bye >> hello.txt',
        workspace: WS,
      },
      {
        type: 'tool.started',
        session_id: S,
        run_id: R1,
        tool_call_id: 'call_b2',
        name: 'bash: npm test',
        workspace: WS,
      },
      // with call ids, an after event ends its own call, whatever the order
      { type: 'tool.completed', session_id: S, run_id: R1, tool_call_id: 'call_b2', error: 'exit code 1' },
      { type: 'tool.completed', session_id: S, run_id: R1, tool_call_id: 'call_b1' },
      {
        type: 'tool.started',
        session_id: S,
        run_id: R1,
        tool_call_id: 'call_e1',
        name: 'edit: hello.txt',
        workspace: WS,
      },
      // the edit never reported its end (opencode skips the after hook when a tool throws)
      // the call it never reported is left open: the run's end closes it (a real-server test, api/hooks-agents)
      { type: 'message', session_id: S, role: 'assistant', content: 'Created hello.txt; one test fails.', run_id: R1 },
      { type: 'run.completed', session_id: S, run_id: R1 },
      { type: 'message', session_id: S, role: 'user', content: 'Fix the test', run_id: R2 },
      { type: 'run.started', session_id: S, run_id: R2, source: 'coding-agent', workspace: WS },
      { type: 'run.failed', session_id: S, run_id: R2, error: 'Bad Gateway' },
    ]);
  });

  it("a turn's tokens are the sum of its model calls, reasoning as output; a call that is not counts gives none", () => {
    const all = readFixture('opencode', 'sequence') as Record<string, unknown>[];
    const idle = all[11]!;
    const step = (input: unknown, output = 5, reasoning = 2, read = 100, write = 7) => ({
      input,
      output,
      reasoning,
      cache: { read, write },
    });
    const usageOf = (steps: unknown) => {
      const { events } = replay(opencodeMapper, [...all.slice(0, 11), { ...idle, steps }]);
      const end = events.find((e) => e.type === 'run.completed')!;
      return 'usage' in end ? end.usage : undefined;
    };
    expect(usageOf([step(10), step(30, 1, 0, 0, 0)])).toEqual({
      input: 40,
      output: 8,
      cache_read: 100,
      cache_write: 7,
    });
    // Not reported, no calls, a figure that is not a count, or more calls than the bound: no figures.
    expect(usageOf(undefined)).toBeUndefined();
    expect(usageOf([])).toBeUndefined();
    expect(usageOf([step(10), step(-1)])).toBeUndefined();
    expect(usageOf([step(10), step('12')])).toBeUndefined();
    expect(usageOf([step(10), 'x'])).toBeUndefined();
    expect(usageOf(Array.from({ length: MAX_OPENCODE_STEPS }, () => step(1)))).toMatchObject({
      input: MAX_OPENCODE_STEPS,
    });
    expect(usageOf(Array.from({ length: MAX_OPENCODE_STEPS + 1 }, () => step(1)))).toBeUndefined();
  });

  it("a turn's price is the sum of its calls' cost when opencode priced every call above zero", () => {
    const all = readFixture('opencode', 'sequence') as Record<string, unknown>[];
    const idle = all[11]!;
    const step = (cost: unknown) => ({ input: 1, output: 1, reasoning: 0, cache: { read: 0, write: 0 }, cost });
    const costOf = (steps: unknown[]) => {
      const { events } = replay(opencodeMapper, [...all.slice(0, 11), { ...idle, steps }]);
      const end = events.find((e) => e.type === 'run.completed')!;
      return 'usage' in end ? end.usage : undefined;
    };
    const priced = costOf([step(0.0125), step(0.0025)]);
    expect(priced).toMatchObject({ input: 2 });
    expect(priced?.cost_usd).toBeCloseTo(0.015, 12);
    // opencode says 0 for a model it has no price for: tokens, no money.
    const unpriced = costOf([step(0), step(0)]);
    expect(unpriced).toMatchObject({ input: 2 });
    expect(unpriced).not.toHaveProperty('cost_usd');
    // A call without a price, or one that is not an amount: the sum would be wrong, so no money.
    for (const odd of [undefined, '0.01', -1, Number.NaN, 2e9]) {
      const u = costOf([step(0.01), step(odd)]);
      expect(u).toMatchObject({ input: 2 });
      expect(u).not.toHaveProperty('cost_usd');
    }
  });

  it('maps malformed and unknown payloads to no events without throwing', () => {
    for (const payload of readFixture('opencode', 'unknown')) {
      const state = initialHookState();
      const out = opencodeMapper.map(payload, state);
      expect(out.events).toEqual([]);
      expect(out.state).toEqual(state);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { readFixture, replay } from '../fixtures/mapping-replay.ts';
import { initialHookState } from '../types.ts';
import { hermesMapper } from './hermes.ts';

const S = 'hermes:20261130_100000_a1b2c3';
const WS = '/home/dev/project';

describe('hermes hook mapping', () => {
  it('maps a whole session: runs named by turn id, blocks by call id or in order, the reply and an interrupted turn', () => {
    const { perPayload, events } = replay(hermesMapper, readFixture('hermes', 'sequence'));
    expect(perPayload[4]).toEqual([]); // read_file only reads
    expect(perPayload[5]).toEqual([]);
    expect(perPayload[13]).toEqual([]); // the good turn's end: post_llm_call already ended the run
    expect(events).toEqual([
      { type: 'session.upsert', session_id: S, workspace: WS },
      {
        type: 'message',
        session_id: S,
        role: 'user',
        content: 'Add a greeting file and run the tests',
        run_id: 'turn_01',
      },
      { type: 'run.started', session_id: S, run_id: 'turn_01', source: 'coding-agent', workspace: WS },
      {
        type: 'tool.started',
        session_id: S,
        run_id: 'turn_01',
        tool_call_id: 'call_w1',
        name: 'write_file: hello.txt',
        workspace: WS,
      },
      { type: 'tool.completed', session_id: S, run_id: 'turn_01', tool_call_id: 'call_w1' },
      {
        type: 'tool.started',
        session_id: S,
        run_id: 'turn_01',
        tool_call_id: 'call_t1',
        name: 'terminal: echo bye >> hello.txt',
        workspace: WS,
      },
      { type: 'tool.completed', session_id: S, run_id: 'turn_01', tool_call_id: 'call_t1' },
      {
        type: 'tool.started',
        session_id: S,
        run_id: 'turn_01',
        tool_call_id: 'call_t2',
        name: 'terminal: npm test',
        workspace: WS,
      },
      {
        type: 'tool.completed',
        session_id: S,
        run_id: 'turn_01',
        tool_call_id: 'call_t2',
        error: 'error: exit code 1',
      },
      // no tool-call id: the id is made up and the post event pairs with the oldest open patch call
      {
        type: 'tool.started',
        session_id: S,
        run_id: 'turn_01',
        tool_call_id: 'tool-4-turn_01',
        name: 'patch: hello.txt',
        workspace: WS,
      },
      { type: 'tool.completed', session_id: S, run_id: 'turn_01', tool_call_id: 'tool-4-turn_01' },
      {
        type: 'message',
        session_id: S,
        role: 'assistant',
        content: 'Created hello.txt; one test fails.',
        run_id: 'turn_01',
      },
      { type: 'run.completed', session_id: S, run_id: 'turn_01' },
      { type: 'message', session_id: S, role: 'user', content: 'Fix the tests', run_id: 'turn_02' },
      { type: 'run.started', session_id: S, run_id: 'turn_02', source: 'coding-agent', workspace: WS },
      {
        type: 'tool.started',
        session_id: S,
        run_id: 'turn_02',
        tool_call_id: 'call_t3',
        name: 'terminal: npm test -- --watch',
        workspace: WS,
      },
      // the call it never reported is left open: the run's end closes it (a real-server test, api/hooks-agents)
      { type: 'run.failed', session_id: S, run_id: 'turn_02', error: 'interrupted (user_interrupt)' },
    ]);
  });

  it('pairs post events without ids with the oldest open call of the same tool', () => {
    const base = { session_id: 's', cwd: WS, profile: 'default' };
    const { events } = replay(hermesMapper, [
      { ...base, hook_event_name: 'pre_llm_call', extra: { turn_id: 't1', user_message: 'go' } },
      { ...base, hook_event_name: 'pre_tool_call', tool_name: 'terminal', tool_input: { command: 'a' }, extra: {} },
      { ...base, hook_event_name: 'pre_tool_call', tool_name: 'write_file', tool_input: { path: 'x' }, extra: {} },
      { ...base, hook_event_name: 'pre_tool_call', tool_name: 'terminal', tool_input: { command: 'b' }, extra: {} },
      {
        ...base,
        hook_event_name: 'post_tool_call',
        tool_name: 'terminal',
        tool_input: { command: 'a' },
        extra: { status: 'success' },
      },
      {
        ...base,
        hook_event_name: 'post_tool_call',
        tool_name: 'terminal',
        tool_input: { command: 'b' },
        extra: { status: 'success' },
      },
    ]);
    expect(events.filter((e) => e.type === 'tool.completed').map((e) => e.tool_call_id)).toEqual(['tool-1', 'tool-3']);
  });

  it('maps malformed and unknown payloads to no events without throwing', () => {
    for (const payload of readFixture('hermes', 'unknown')) {
      const state = initialHookState();
      const out = hermesMapper.map(payload, state);
      expect(out.events).toEqual([]);
      expect(out.state).toEqual(state);
    }
  });
});

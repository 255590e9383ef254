import { describe, expect, it } from 'vitest';
import { readFixture, replay } from '../fixtures/mapping-replay.ts';
import { initialHookState } from '../types.ts';
import { cursorMapper } from './cursor.ts';

const S = 'cursor:668320d2-2fd8-4888-b33c-2a466fec86e7';
const WS = '/home/dev/project';
const R1 = '5f1b9a2c-0e4d-4c1b-8d57-0a1e2b3c4d5e';
const R2 = '7a2c0b3d-1f5e-4d2c-9e68-1b2f3c4d5e6f';

describe('cursor hook mapping', () => {
  it('maps two prompts of a conversation to runs named by their generation ids, with shell and MCP blocks', () => {
    const { perPayload, events } = replay(cursorMapper, readFixture('cursor', 'sequence'));
    // beforeReadFile only reads
    expect(perPayload[1]).toEqual([]);
    expect(events).toEqual([
      { type: 'session.upsert', session_id: S, workspace: WS },
      { type: 'message', session_id: S, role: 'user', content: 'Rename the greeting and run the tests', run_id: R1 },
      { type: 'run.started', session_id: S, run_id: R1, source: 'coding-agent', workspace: WS },
      // an edit is reported only after it happened: a message, its change lands in the run
      { type: 'message', session_id: S, role: 'tool', content: 'Edited /home/dev/project/hello.txt', run_id: R1 },
      {
        type: 'tool.started',
        session_id: S,
        run_id: R1,
        tool_call_id: `tool-1-${R1}`,
        name: 'shell: sed -i s/hi/hey/ hello.txt',
        workspace: WS,
      },
      {
        type: 'tool.started',
        session_id: S,
        run_id: R1,
        tool_call_id: `tool-2-${R1}`,
        name: 'shell: npm test',
        workspace: WS,
      },
      // the oldest open shell call ends first
      { type: 'tool.completed', session_id: S, run_id: R1, tool_call_id: `tool-1-${R1}` },
      { type: 'tool.completed', session_id: S, run_id: R1, tool_call_id: `tool-2-${R1}` },
      {
        type: 'tool.started',
        session_id: S,
        run_id: R1,
        tool_call_id: `tool-3-${R1}`,
        name: 'mcp create_issue',
        workspace: WS,
      },
      { type: 'tool.completed', session_id: S, run_id: R1, tool_call_id: `tool-3-${R1}` },
      { type: 'message', session_id: S, role: 'assistant', content: 'Renamed it; one test fails.', run_id: R1 },
      { type: 'run.completed', session_id: S, run_id: R1 },
      { type: 'message', session_id: S, role: 'user', content: 'Try again', run_id: R2 },
      { type: 'run.started', session_id: S, run_id: R2, source: 'coding-agent', workspace: WS },
      {
        type: 'tool.started',
        session_id: S,
        run_id: R2,
        tool_call_id: `tool-4-${R2}`,
        name: 'shell: npm test -- --watch',
        workspace: WS,
      },
      // an aborted prompt fails its run; the shell call it never reported is left to the run's close
      // (a real-server test, api/hooks-agents)
      {
        type: 'run.failed',
        session_id: S,
        run_id: R2,
        error: 'aborted: the prompt was stopped before it finished',
      },
    ]);
  });

  it('fails the run of a prompt that stopped with an error', () => {
    const [prompt] = readFixture('cursor', 'sequence') as Record<string, unknown>[];
    const { events } = replay(cursorMapper, [prompt, { ...prompt, hook_event_name: 'stop', status: 'error' }]);
    expect(events.at(-1)).toEqual({
      type: 'run.failed',
      session_id: S,
      run_id: R1,
      error: 'the agent stopped with an error',
    });
  });

  it('maps malformed and unknown payloads to no events without throwing', () => {
    for (const payload of readFixture('cursor', 'unknown')) {
      const state = initialHookState();
      const out = cursorMapper.map(payload, state);
      expect(out.events).toEqual([]);
      expect(out.state).toEqual(state);
    }
  });
});

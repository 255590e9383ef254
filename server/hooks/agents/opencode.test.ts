import { describe, expect, it } from 'vitest';
import { readFixture, replay } from '../fixtures/mapping-replay.ts';
import { initialHookState } from '../types.ts';
import { opencodeMapper } from './opencode.ts';

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

  it('maps malformed and unknown payloads to no events without throwing', () => {
    for (const payload of readFixture('opencode', 'unknown')) {
      const state = initialHookState();
      const out = opencodeMapper.map(payload, state);
      expect(out.events).toEqual([]);
      expect(out.state).toEqual(state);
    }
  });
});

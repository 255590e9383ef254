import { describe, expect, it } from 'vitest';
import { readFixture, replay } from '../fixtures/mapping-replay.ts';
import { initialHookState } from '../types.ts';
import { copilotMapper } from './copilot.ts';

const SID = '2b8c7e14-93a5-4f0e-b1d2-6c7d8e9f0a1b';
const S = `copilot:${SID}`;
const WS = '/home/dev/project';
const T0 = 1764583200000;
/** The fixture's n-th payload (1-based) has timestamp T0 + n seconds. */
const at = (n: number) => T0 + n * 1000;

describe('copilot hook mapping', () => {
  it('maps a whole camelCase session: two prompts, the blocks of its editing tools, a failure and a fatal error', () => {
    const { perPayload, events } = replay(copilotMapper, readFixture('copilot', 'sequence'));
    const R1 = `prompt-1-${at(2)}`;
    const R2 = `prompt-2-${at(14)}`;
    expect(perPayload[4]).toEqual([]); // view only reads
    expect(perPayload[14]).toEqual([]); // a recoverable error ends nothing
    expect(perPayload[16]).toEqual([]); // no run is open when the session ends
    expect(events).toEqual([
      { type: 'session.upsert', session_id: S, workspace: WS },
      { type: 'message', session_id: S, role: 'user', content: 'Add a greeting file and run the tests', run_id: R1 },
      { type: 'run.started', session_id: S, run_id: R1, source: 'coding-agent', workspace: WS },
      {
        type: 'tool.started',
        session_id: S,
        run_id: R1,
        tool_call_id: `tool-1-${at(3)}`,
        name: 'create: hello.txt',
        workspace: WS,
      },
      { type: 'tool.completed', session_id: S, run_id: R1, tool_call_id: `tool-1-${at(3)}` },
      {
        type: 'tool.started',
        session_id: S,
        run_id: R1,
        tool_call_id: `tool-2-${at(7)}`,
        name: 'bash: echo bye >> hello.txt',
        workspace: WS,
      },
      {
        type: 'tool.started',
        session_id: S,
        run_id: R1,
        tool_call_id: `tool-3-${at(8)}`,
        name: 'bash: npm test',
        workspace: WS,
      },
      // pre/post without ids: the oldest open bash call ends first
      { type: 'tool.completed', session_id: S, run_id: R1, tool_call_id: `tool-2-${at(7)}` },
      {
        type: 'tool.completed',
        session_id: S,
        run_id: R1,
        tool_call_id: `tool-3-${at(8)}`,
        error: 'Command failed with exit code 1',
      },
      {
        type: 'tool.started',
        session_id: S,
        run_id: R1,
        tool_call_id: `tool-4-${at(11)}`,
        name: 'edit: hello.txt',
        workspace: WS,
      },
      {
        type: 'tool.completed',
        session_id: S,
        run_id: R1,
        tool_call_id: `tool-4-${at(11)}`,
        error: 'failure: No match found for old_str',
      },
      { type: 'run.completed', session_id: S, run_id: R1 },
      { type: 'message', session_id: S, role: 'user', content: 'Now fix the tests', run_id: R2 },
      { type: 'run.started', session_id: S, run_id: R2, source: 'coding-agent', workspace: WS },
      { type: 'run.failed', session_id: S, run_id: R2, error: 'model_call: Quota exhausted' },
    ]);
  });

  it('reads the snake_case dialect named by hook_event_name the same way', () => {
    const base = { session_id: SID, cwd: WS, timestamp: '2026-11-30T10:00:00.000Z' };
    const { events } = replay(copilotMapper, [
      { ...base, hook_event_name: 'UserPromptSubmit', prompt: 'go' },
      { ...base, hook_event_name: 'PreToolUse', tool_name: 'bash', tool_input: { command: 'make' } },
      {
        ...base,
        hook_event_name: 'PostToolUseFailure',
        tool_name: 'bash',
        tool_input: { command: 'make' },
        error: 'exit 2',
      },
      { ...base, hook_event_name: 'Stop', transcript_path: '/t', stop_reason: 'end_turn' },
    ]);
    const run = 'prompt-1-2026-11-30T10:00:00.000Z';
    expect(events).toEqual([
      { type: 'session.upsert', session_id: S, workspace: WS },
      { type: 'message', session_id: S, role: 'user', content: 'go', run_id: run },
      { type: 'run.started', session_id: S, run_id: run, source: 'coding-agent', workspace: WS },
      {
        type: 'tool.started',
        session_id: S,
        run_id: run,
        tool_call_id: 'tool-1-2026-11-30T10:00:00.000Z',
        name: 'bash: make',
        workspace: WS,
      },
      {
        type: 'tool.completed',
        session_id: S,
        run_id: run,
        tool_call_id: 'tool-1-2026-11-30T10:00:00.000Z',
        error: 'exit 2',
      },
      { type: 'run.completed', session_id: S, run_id: run },
    ]);
  });

  it('maps malformed and unknown payloads to no events without throwing', () => {
    for (const payload of readFixture('copilot', 'unknown')) {
      const state = initialHookState();
      const out = copilotMapper.map(payload, state);
      expect(out.events).toEqual([]);
      expect(out.state).toEqual(state);
    }
  });
});

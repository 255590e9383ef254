import { describe, expect, it } from 'vitest';
import { readFixture, replay } from '../fixtures/mapping-replay.ts';
import { initialHookState } from '../types.ts';
import { geminiMapper } from './gemini.ts';

const S = 'gemini:6c1f0d2e-5b7a-4f43-9d0e-2a1b3c4d5e6f';
const WS = '/home/dev/project';
const RUN = 'prompt-1-2026-11-30T10:00:01.000Z';

describe('gemini hook mapping', () => {
  it('maps a whole session to the bridge events of one run with a block per editing tool', () => {
    const { perPayload, events, sessionIds } = replay(geminiMapper, readFixture('gemini', 'sequence'));
    expect(sessionIds.every((id) => id === '6c1f0d2e-5b7a-4f43-9d0e-2a1b3c4d5e6f')).toBe(true);
    expect(perPayload[0]).toEqual([{ type: 'session.upsert', session_id: S, workspace: WS }]);
    // the read-only read_file (payloads 5 and 6) needs no checkpoint and maps to nothing
    expect(perPayload[4]).toEqual([]);
    expect(perPayload[5]).toEqual([]);
    // no run is open when the session ends
    expect(perPayload[13]).toEqual([]);
    expect(events).toEqual([
      { type: 'session.upsert', session_id: S, workspace: WS },
      { type: 'message', session_id: S, role: 'user', content: 'Add a greeting file and run the checks', run_id: RUN },
      { type: 'run.started', session_id: S, run_id: RUN, source: 'coding-agent', workspace: WS },
      {
        type: 'tool.started',
        session_id: S,
        run_id: RUN,
        tool_call_id: 'tool-1-2026-11-30T10:00:02.000Z',
        name: 'write_file: hello.txt',
        workspace: WS,
      },
      { type: 'tool.completed', session_id: S, run_id: RUN, tool_call_id: 'tool-1-2026-11-30T10:00:02.000Z' },
      {
        type: 'tool.started',
        session_id: S,
        run_id: RUN,
        tool_call_id: 'tool-2-2026-11-30T10:00:06.000Z',
        name: 'run_shell_command: echo bye >> hello.txt',
        workspace: WS,
      },
      {
        type: 'tool.started',
        session_id: S,
        run_id: RUN,
        tool_call_id: 'tool-3-2026-11-30T10:00:07.000Z',
        name: 'run_shell_command: npm test --silent',
        workspace: WS,
      },
      // without ids, each AfterTool pairs with the oldest open call of the same tool
      { type: 'tool.completed', session_id: S, run_id: RUN, tool_call_id: 'tool-2-2026-11-30T10:00:06.000Z' },
      {
        type: 'tool.completed',
        session_id: S,
        run_id: RUN,
        tool_call_id: 'tool-3-2026-11-30T10:00:07.000Z',
        error: 'Command exited with code 1',
      },
      {
        type: 'tool.started',
        session_id: S,
        run_id: RUN,
        tool_call_id: 'tool-4-2026-11-30T10:00:10.000Z',
        name: 'replace: hello.txt',
        workspace: WS,
      },
      { type: 'tool.completed', session_id: S, run_id: RUN, tool_call_id: 'tool-4-2026-11-30T10:00:10.000Z' },
      { type: 'message', session_id: S, role: 'assistant', content: 'Created hello.txt; the tests fail.', run_id: RUN },
      { type: 'run.completed', session_id: S, run_id: RUN },
    ]);
  });

  it('pairs an AfterTool with the oldest open call of the same tool, not with another tool', () => {
    const base = { session_id: 'p', cwd: WS, timestamp: 't' };
    const { events } = replay(geminiMapper, [
      { ...base, hook_event_name: 'BeforeAgent', prompt: 'go' },
      { ...base, hook_event_name: 'BeforeTool', tool_name: 'write_file', tool_input: { file_path: '/a' } },
      { ...base, hook_event_name: 'BeforeTool', tool_name: 'replace', tool_input: { file_path: '/b' } },
      { ...base, hook_event_name: 'BeforeTool', tool_name: 'write_file', tool_input: { file_path: '/c' } },
      { ...base, hook_event_name: 'AfterTool', tool_name: 'replace', tool_response: {} },
      { ...base, hook_event_name: 'AfterTool', tool_name: 'write_file', tool_response: {} },
    ]);
    const completed = events.filter((e) => e.type === 'tool.completed').map((e) => e.tool_call_id);
    expect(completed).toEqual(['tool-2-t', 'tool-1-t']);
  });

  it('ends a turn the agent never closed when the next prompt begins; its open tools are left to its close', () => {
    const base = { session_id: 'p', cwd: WS, timestamp: 't' };
    const { events } = replay(geminiMapper, [
      { ...base, hook_event_name: 'BeforeAgent', prompt: 'one' },
      { ...base, hook_event_name: 'BeforeTool', tool_name: 'write_file', tool_input: { file_path: '/a' } },
      { ...base, hook_event_name: 'BeforeAgent', prompt: 'two' },
    ]);
    expect(events.map((e) => e.type)).toEqual([
      'session.upsert',
      'message',
      'run.started',
      'tool.started',
      'run.failed',
      'message',
      'run.started',
    ]);
    // tool-1-t ends failed with the run's close (a real-server test, api/hooks-agents)
    expect(events[4]).toMatchObject({ type: 'run.failed', run_id: 'prompt-1-t' });
    expect(events[6]).toMatchObject({ run_id: 'prompt-2-t' });
  });

  it('maps the payloads Gemini CLI 0.61.0 really sent (run offline: write, shell, read, a failed replace)', () => {
    const { events } = replay(geminiMapper, readFixture('gemini', 'measured-0.61.0'));
    const S2 = 'gemini:a2c049b2-2e8f-42cc-b805-dd6a55e170c7';
    const run = 'prompt-1-2026-12-01T01:58:28.006Z';
    expect(events).toEqual([
      { type: 'session.upsert', session_id: S2, workspace: WS },
      { type: 'message', session_id: S2, role: 'user', content: 'Add a greeting file', run_id: run },
      { type: 'run.started', session_id: S2, run_id: run, source: 'coding-agent', workspace: WS },
      {
        type: 'tool.started',
        session_id: S2,
        run_id: run,
        tool_call_id: 'tool-1-2026-12-01T02:00:17.784Z',
        name: 'write_file: hello.txt',
        workspace: WS,
      },
      { type: 'tool.completed', session_id: S2, run_id: run, tool_call_id: 'tool-1-2026-12-01T02:00:17.784Z' },
      {
        type: 'tool.started',
        session_id: S2,
        run_id: run,
        tool_call_id: 'tool-2-2026-12-01T02:00:17.963Z',
        name: 'run_shell_command: echo bye >> hello.txt',
        workspace: WS,
      },
      { type: 'tool.completed', session_id: S2, run_id: run, tool_call_id: 'tool-2-2026-12-01T02:00:17.963Z' },
      {
        type: 'tool.started',
        session_id: S2,
        run_id: run,
        tool_call_id: 'tool-3-2026-12-01T02:00:18.330Z',
        name: 'replace: hello.txt',
        workspace: WS,
      },
      {
        type: 'tool.completed',
        session_id: S2,
        run_id: run,
        tool_call_id: 'tool-3-2026-12-01T02:00:18.330Z',
        error: expect.stringContaining("Could not find an exact match for 'old_string'") as string,
      },
      { type: 'message', session_id: S2, role: 'assistant', content: 'All done.', run_id: run },
      { type: 'run.completed', session_id: S2, run_id: run },
    ]);
  });

  it('maps malformed and unknown payloads to no events without throwing', () => {
    for (const payload of readFixture('gemini', 'unknown')) {
      const state = initialHookState();
      const out = geminiMapper.map(payload, state);
      expect(out.events).toEqual([]);
      expect(out.state).toEqual(state);
    }
  });
});

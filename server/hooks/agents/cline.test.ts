import { describe, expect, it } from 'vitest';
import { readFixture, replay } from '../fixtures/mapping-replay.ts';
import { initialHookState } from '../types.ts';
import { clineMapper } from './cline.ts';
import { ENDED_BY_NEXT_PROMPT } from './kit.ts';

const S = 'cline:1764583200123';
const WS = '/home/dev/project';

describe('cline hook mapping', () => {
  it('maps a whole CLI task: the first tool call opens the run, blocks by call id, the reply, then a cancelled prompt', () => {
    const { perPayload, events } = replay(clineMapper, readFixture('cline', 'sequence'));
    // the CLI sends no prompt with the task's start: the first tool call opens the run
    const R1 = 'prompt-1-2026-11-30T10:00:02.000Z';
    const R2 = 'prompt-2-2026-11-30T10:00:13.000Z';
    expect(perPayload[3]).toEqual([]); // read_files only reads
    expect(perPayload[4]).toEqual([]);
    expect(events).toEqual([
      { type: 'session.upsert', session_id: S, workspace: WS },
      { type: 'run.started', session_id: S, run_id: R1, source: 'coding-agent', workspace: WS },
      {
        type: 'tool.started',
        session_id: S,
        run_id: R1,
        tool_call_id: 'call_0_ed',
        name: 'editor: hello.txt',
        workspace: WS,
      },
      { type: 'tool.completed', session_id: S, run_id: R1, tool_call_id: 'call_0_ed' },
      {
        type: 'tool.started',
        session_id: S,
        run_id: R1,
        tool_call_id: 'call_2_sh',
        name: 'run_commands: echo bye >> hello.txt',
        workspace: WS,
      },
      { type: 'tool.completed', session_id: S, run_id: R1, tool_call_id: 'call_2_sh' },
      {
        type: 'tool.started',
        session_id: S,
        run_id: R1,
        tool_call_id: 'call_3_sh',
        name: 'run_commands: npm test; npm run lint',
        workspace: WS,
      },
      {
        type: 'tool.completed',
        session_id: S,
        run_id: R1,
        tool_call_id: 'call_3_sh',
        error: 'Command failed with exit code 1',
      },
      {
        type: 'tool.started',
        session_id: S,
        run_id: R1,
        tool_call_id: 'call_4_ed',
        name: 'editor: hello.txt',
        workspace: WS,
      },
      { type: 'tool.completed', session_id: S, run_id: R1, tool_call_id: 'call_4_ed', error: 'old_text not found' },
      { type: 'message', session_id: S, role: 'assistant', content: 'Created hello.txt; the tests fail.', run_id: R1 },
      { type: 'run.completed', session_id: S, run_id: R1 },
      { type: 'message', session_id: S, role: 'user', content: 'Fix the tests', run_id: R2 },
      { type: 'run.started', session_id: S, run_id: R2, source: 'coding-agent', workspace: WS },
      {
        type: 'tool.started',
        session_id: S,
        run_id: R2,
        tool_call_id: 'call_5_sh',
        name: 'run_commands: npm test -- --watch',
        workspace: WS,
      },
      // the call it never reported is left open: the run's end closes it (a real-server test, api/hooks-agents)
      { type: 'run.failed', session_id: S, run_id: R2, error: 'cancelled: user_cancelled' },
    ]);
  });

  it('maps the extension dialect: the task text opens the run and calls without ids pair in order per tool', () => {
    const { events } = replay(clineMapper, readFixture('cline', 'extension-sequence'));
    const S2 = 'cline:task-ext-1';
    const R = 'prompt-1-1764583300016';
    expect(events).toEqual([
      { type: 'session.upsert', session_id: S2, workspace: WS },
      { type: 'message', session_id: S2, role: 'user', content: 'Add a greeting', run_id: R },
      { type: 'run.started', session_id: S2, run_id: R, source: 'coding-agent', workspace: WS },
      {
        type: 'tool.started',
        session_id: S2,
        run_id: R,
        tool_call_id: 'tool-1-1764583300017',
        name: 'execute_command: echo a > a.txt',
        workspace: WS,
      },
      {
        type: 'tool.started',
        session_id: S2,
        run_id: R,
        tool_call_id: 'tool-2-1764583300018',
        name: 'execute_command: false',
        workspace: WS,
      },
      { type: 'tool.completed', session_id: S2, run_id: R, tool_call_id: 'tool-1-1764583300017' },
      { type: 'tool.completed', session_id: S2, run_id: R, tool_call_id: 'tool-2-1764583300018', error: 'exit code 1' },
      {
        type: 'tool.started',
        session_id: S2,
        run_id: R,
        tool_call_id: 'tool-3-1764583300021',
        name: 'write_to_file: b.txt',
        workspace: WS,
      },
      { type: 'tool.completed', session_id: S2, run_id: R, tool_call_id: 'tool-3-1764583300021' },
      { type: 'run.completed', session_id: S2, run_id: R },
    ]);
  });

  it("keys the session by the root session id: a conversation's second prompt (a new task id) is a new run of the same session", () => {
    const first = readFixture('cline', 'sequence') as Record<string, unknown>[];
    const start = first[0]!;
    const call = first[1]!;
    const second = [
      { ...start, taskId: '1764583299999', timestamp: '2026-11-30T10:05:00.000Z' },
      {
        ...call,
        taskId: '1764583299999',
        timestamp: '2026-11-30T10:05:01.000Z',
        tool_call: { ...(call.tool_call as object), id: 'call_9' },
      },
    ];
    const { events, sessionIds } = replay(clineMapper, [start, call, ...second]);
    expect(new Set(sessionIds)).toEqual(new Set(['1764583200123']));
    expect(new Set(events.map((e) => e.session_id))).toEqual(new Set([S]));
    expect(events.filter((e) => e.type === 'run.started')).toHaveLength(2);
    // The first task never reported its end: the second one's start closes its run.
    expect(events.filter((e) => e.type === 'run.failed').map((e) => 'error' in e && e.error)).toEqual([
      ENDED_BY_NEXT_PROMPT,
    ]);
    // Control: without a root session id (the extension's payloads) the task id keys it.
    const bare = (p: Record<string, unknown>) => ({ ...p, sessionContext: undefined });
    const apart = replay(clineMapper, [bare(start), bare(second[0]!)]);
    expect(apart.sessionIds).toEqual(['1764583200123', '1764583299999']);
  });

  describe('hooks that arrive out of order (Cline does not wait for a task start or end hook)', () => {
    const first = readFixture('cline', 'sequence') as Record<string, unknown>[];
    const task = (p: Record<string, unknown>, taskId: string, id?: string, extra: Record<string, unknown> = {}) => ({
      ...p,
      taskId,
      ...(id
        ? { tool_call: { ...(p.tool_call as object), id }, tool_result: { ...(p.tool_result as object), id } }
        : {}),
      ...extra,
    });
    const end = (taskId: string, reply: string) =>
      task(first[11]!, taskId, undefined, { turn: { outputText: reply, status: 'completed' } });
    const [start, call, result] = [first[0]!, first[1]!, first[2]!];
    const ends = (events: { type: string }[]) =>
      events
        .filter((e) => e.type === 'run.completed' || e.type === 'run.failed')
        .map((e) => [e.type, 'run_id' in e && e.run_id]);

    it("a task's first tool call ahead of its start hook opens its run, and the late start does not end it", () => {
      const { events } = replay(clineMapper, [
        task(start, 'T1'),
        task(call, 'T1', 'c1'),
        task(result, 'T1', 'c1'),
        end('T1', 'First reply.'),
        task(call, 'T2', 'c2'),
        task(start, 'T2'),
        task(result, 'T2', 'c2'),
        end('T2', 'Second reply.'),
      ]);
      const runs = events.filter((e) => e.type === 'run.started').map((e) => 'run_id' in e && e.run_id);
      expect(runs).toHaveLength(2);
      expect(ends(events)).toEqual([
        ['run.completed', runs[0]],
        ['run.completed', runs[1]],
      ]);
      const inRun = (id: string) =>
        events
          .filter((e) => 'tool_call_id' in e && e.tool_call_id === id)
          .map((e) => [e.type, 'run_id' in e && e.run_id]);
      expect(inRun('c2')).toEqual([
        ['tool.started', runs[1]],
        ['tool.completed', runs[1]],
      ]);
    });

    it("a task's end reported after the next task began ends nothing of the next one and keeps its reply", () => {
      const { events } = replay(clineMapper, [
        task(start, 'T1'),
        task(call, 'T1', 'c1'),
        task(result, 'T1', 'c1'),
        task(start, 'T2'),
        task(call, 'T2', 'c2'),
        end('T1', 'First reply.'),
        task(result, 'T2', 'c2'),
        end('T2', 'Second reply.'),
      ]);
      const runs = events.filter((e) => e.type === 'run.started').map((e) => 'run_id' in e && e.run_id);
      expect(runs).toHaveLength(2);
      // The first run's end came too late to be its end: the next task's start ended it, as before.
      expect(ends(events)).toEqual([
        ['run.failed', runs[0]],
        ['run.completed', runs[1]],
      ]);
      const replies = events
        .filter((e) => e.type === 'message')
        .map((e) => ['run_id' in e && e.run_id, 'content' in e && e.content]);
      expect(replies).toEqual([
        [runs[0], 'First reply.'],
        [runs[1], 'Second reply.'],
      ]);
      expect(events.filter((e) => 'tool_call_id' in e && e.tool_call_id === 'c2').map((e) => e.type)).toEqual([
        'tool.started',
        'tool.completed',
      ]);
    });
  });

  it('maps malformed and unknown payloads to no events without throwing', () => {
    for (const payload of readFixture('cline', 'unknown')) {
      const state = initialHookState();
      const out = clineMapper.map(payload, state);
      expect(out.events).toEqual([]);
      expect(out.state).toEqual(state);
    }
  });
});

import { describe, expect, it } from 'vitest';
import type { BridgeEvent } from '../../../shared/index.ts';
import { loadFixture, payloadsOf } from '../fixtures/replay.ts';
import { initialHookState, type AgentMapper, type HookSessionState } from '../types.ts';
import { claudeCodeMapper } from './claude-code.ts';
import { codexMapper } from './codex.ts';
import { MAX_SUMMARY_CHARS, toolSummary, TRUNCATED } from './kit.ts';

const W = '/work/space';

function replay(mapper: AgentMapper, payloads: unknown[], state: HookSessionState = initialHookState()) {
  const events: BridgeEvent[] = [];
  for (const p of payloads) {
    const m = mapper.map(p, state);
    events.push(...m.events);
    state = m.state;
  }
  return { events, state };
}
const brief = (e: BridgeEvent) => {
  switch (e.type) {
    case 'session.upsert':
      return `${e.type} ${e.title}`;
    case 'message':
      return `${e.type} ${e.role} ${e.run_id} ${e.content.slice(0, 12)}`;
    case 'run.started':
    case 'run.completed':
    case 'run.failed':
      return `${e.type} ${e.run_id}`;
    case 'tool.started':
      return `${e.type} ${e.run_id} ${e.tool_call_id} ${e.name}`;
    case 'tool.completed':
      return `${e.type} ${e.tool_call_id}${e.error ? ' error' : ''}`;
  }
};

describe('Claude Code mapping', () => {
  it('maps two prompts to two runs with the prompts, replies and one tool call per editing tool (none for Read)', () => {
    const { events, state } = replay(claudeCodeMapper, payloadsOf(loadFixture('claude-code', 'two-prompts', W)));
    const P1 = 'b1f9e0c4-6a57-4d1e-8f3a-2c7d9e4b5a61';
    const P2 = 'c7d3a2b9-1e84-4f60-a5c2-9b8e7d6f4a13';
    expect(events.map(brief)).toEqual([
      'session.upsert Claude Code · space',
      `run.started ${P1}`,
      `message user ${P1} Create notes`,
      `tool.started ${P1} toolu_01Write Write: notes.txt`,
      'tool.completed toolu_01Write',
      `message assistant ${P1} I created no`,
      `run.completed ${P1}`,
      `run.started ${P2}`,
      `message user ${P2} Say goodbye `,
      `tool.started ${P2} toolu_03Edit Edit: notes.txt`,
      'tool.completed toolu_03Edit',
      `tool.started ${P2} toolu_04Bash Bash: echo done > build.log`,
      'tool.completed toolu_04Bash',
      `message assistant ${P2} notes.txt no`,
      `run.completed ${P2}`,
    ]);
    for (const e of events) expect(e.session_id).toBe('claude-code:5f0c2a8e-3d41-4b7a-9c52-1e8f0a6b7d10');
    expect(events.find((e) => e.type === 'run.started')).toMatchObject({ workspace: W, source: 'coding-agent' });
    expect(state.runId).toBeNull();
  });

  it('a failed tool call completes with its error, and StopFailure fails the run', () => {
    const base = { session_id: 's', cwd: W };
    const { events } = replay(claudeCodeMapper, [
      { ...base, hook_event_name: 'UserPromptSubmit', prompt_id: 'p1', prompt: 'go' },
      {
        ...base,
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'false' },
        tool_use_id: 't1',
      },
      { ...base, hook_event_name: 'PostToolUseFailure', tool_name: 'Bash', tool_use_id: 't1', error: 'exit 1' },
      { ...base, hook_event_name: 'StopFailure', error: 'rate_limit' },
    ]);
    expect(events.filter((e) => e.type !== 'session.upsert' && e.type !== 'message')).toEqual([
      { type: 'run.started', session_id: 'claude-code:s', run_id: 'p1', source: 'coding-agent', workspace: W },
      {
        type: 'tool.started',
        session_id: 'claude-code:s',
        run_id: 'p1',
        tool_call_id: 't1',
        name: 'Bash: false',
        workspace: W,
      },
      { type: 'tool.completed', session_id: 'claude-code:s', run_id: 'p1', tool_call_id: 't1', error: 'exit 1' },
      { type: 'run.failed', session_id: 'claude-code:s', run_id: 'p1', error: 'rate_limit' },
    ]);
  });

  it('a prompt that never reported its end is failed with the reason when the next prompt arrives', () => {
    const base = { session_id: 's', cwd: W };
    const { events } = replay(claudeCodeMapper, [
      { ...base, hook_event_name: 'UserPromptSubmit', prompt_id: 'p1', prompt: 'one' },
      { ...base, hook_event_name: 'UserPromptSubmit', prompt_id: 'p2', prompt: 'two' },
    ]);
    expect(events.find((e) => e.type === 'run.failed')).toMatchObject({
      run_id: 'p1',
      error: expect.stringMatching(/new prompt/),
    });
  });

  it('a tool call outside a known prompt (state lost on a restart) opens a run of its own', () => {
    const { events, state } = replay(claudeCodeMapper, [
      {
        session_id: 's',
        cwd: W,
        hook_event_name: 'PreToolUse',
        tool_name: 'Write',
        tool_input: { file_path: `${W}/a` },
        tool_use_id: 't1',
      },
    ]);
    expect(events.map((e) => e.type)).toEqual(['session.upsert', 'run.started', 'tool.started']);
    expect(state.runId).toBe('turn-1');
  });

  it('a payload without a session id, or not an object, is not a payload of the agent', () => {
    for (const p of [null, 'text', [], { hook_event_name: 'Stop' }, { session_id: 42 }]) {
      const m = claudeCodeMapper.map(p, initialHookState());
      expect(m.sessionId).toBeNull();
      expect(m.events).toEqual([]);
    }
  });

  it('a relative or missing cwd gives no workspace rather than an event the bridge refuses', () => {
    const m = claudeCodeMapper.map(
      { session_id: 's', cwd: 'rel/dir', hook_event_name: 'UserPromptSubmit', prompt: 'x' },
      initialHookState(),
    );
    for (const e of m.events) expect(e).not.toHaveProperty('workspace');
  });
});

describe('Codex mapping', () => {
  it('takes the run id from turn_id and keys sessions under codex', () => {
    const { events } = replay(codexMapper, payloadsOf(loadFixture('codex', 'one-prompt', W)));
    expect(events.map(brief)).toEqual([
      'session.upsert Codex · space',
      'run.started 019a7f3e-8c22-7000-8000-000000000001',
      'message user 019a7f3e-8c22-7000-8000-000000000001 Write a gree',
      "tool.started 019a7f3e-8c22-7000-8000-000000000001 call_A1 Bash: printf 'hi\\n' > hello.txt",
      'tool.completed call_A1',
      'message assistant 019a7f3e-8c22-7000-8000-000000000001 hello.txt ho',
      'run.completed 019a7f3e-8c22-7000-8000-000000000001',
    ]);
    expect(events[0]!.session_id).toBe('codex:019a7f3e-8c21-7d40-b5e6-3f2a1c9d8e70');
  });

  const call = (hook_event_name: string, tool_name: string, tool_input: unknown, tool_use_id: string) => ({
    session_id: 'c1',
    turn_id: 't1',
    cwd: W,
    hook_event_name,
    tool_name,
    tool_input,
    tool_use_id,
  });

  it('view_image only reads: no tool call, so no checkpoint and no empty block', () => {
    const prompt = { session_id: 'c1', turn_id: 't1', cwd: W, hook_event_name: 'UserPromptSubmit', prompt: 'look' };
    const { events } = replay(codexMapper, [
      prompt,
      call('PreToolUse', 'view_image', { path: `${W}/shot.png` }, 'call_V'),
      call('PostToolUse', 'view_image', { path: `${W}/shot.png` }, 'call_V'),
    ]);
    expect(events.filter((e) => e.type.startsWith('tool.'))).toEqual([]);
    // Control: Claude Code has no such tool, so the same name there is a tool call.
    const claude = replay(claudeCodeMapper, [
      { ...prompt, prompt_id: 'p1' },
      call('PreToolUse', 'view_image', { path: `${W}/shot.png` }, 'call_V'),
    ]);
    expect(claude.events.filter((e) => e.type === 'tool.started')).toHaveLength(1);
  });

  it("apply_patch's block is titled by the files of the patch, not its text", () => {
    const patch = [
      '*** Begin Patch',
      '*** Update File: src/app.ts',
      '@@',
      '-a',
      '+b',
      `*** Add File: ${W}/docs/new.md`,
      '+hello',
      '*** Update File: lib/old.js',
      '*** Move to: lib/new.js',
      '*** Delete File: tmp.txt',
      '*** End Patch',
    ].join('\n');
    for (const input of [{ command: patch }, patch, { input: patch }, { command: ['apply_patch', patch] }]) {
      const { events } = replay(codexMapper, [call('PreToolUse', 'apply_patch', input, 'call_P')]);
      const started = events.find((e) => e.type === 'tool.started');
      expect(started && 'name' in started ? started.name : null).toBe(
        'apply_patch: src/app.ts, docs/new.md, lib/old.js, lib/new.js, tmp.txt',
      );
    }
    // Control: a command that only mentions the marker later is shown as the command.
    expect(toolSummary('Bash', { command: 'grep "*** Begin Patch" notes' }, W)).toBe(
      'Bash: grep "*** Begin Patch" notes',
    );
  });
});

describe('tool summaries', () => {
  it('are one line of at most 200 characters, whatever the input', () => {
    const long = toolSummary('Bash', { command: `echo ${'x'.repeat(5000)}\nrm -rf\u0000 /tmp/y` }, W);
    expect([...long].length).toBe(MAX_SUMMARY_CHARS);
    expect(long.includes('\n') || long.includes('\u0000')).toBe(false);
    expect(long.endsWith(TRUNCATED)).toBe(true);
    expect(toolSummary('Bash', { command: 'a\n\tb\u0000c\u2028d' }, W)).toBe('Bash: a b c d');
  });
  it('name the file of an edit relative to the workspace, and keep an outside path whole', () => {
    expect(toolSummary('Edit', { file_path: `${W}/src/a.ts` }, W)).toBe('Edit: src/a.ts');
    expect(toolSummary('Write', { file_path: '/etc/hosts' }, W)).toBe('Write: /etc/hosts');
    expect(toolSummary('mcp__x__y', { q: 1 }, W)).toBe('mcp__x__y');
  });
});

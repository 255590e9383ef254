import { describe, expect, it } from 'vitest';
import type { ChangeSummary, DiffCompletedPayload, Message, Review, Run, ToolCall } from '../../../shared/index.ts';
import { buildTimeline, type TimelineItem } from './timeline.ts';
import {
  applyDiffCompleted,
  applyChange,
  applyMessage,
  applyProgress,
  applyRun,
  applyToolCall,
  emptySessionState,
  olderMessagesCursor,
  prependMessages,
} from './session-state.ts';

const msg = (
  id: string,
  role: Message['role'],
  t: number,
  run_id: string | null = null,
  tool_call_id: string | null = null,
): Message => ({
  id,
  session_id: 's',
  role,
  content: id,
  run_id,
  tool_call_id,
  created_at: t,
});
const run = (run_id: string, t: number, over: Partial<Run> = {}): Run => ({
  run_id,
  session_id: 's',
  title: null,
  status: 'completed',
  source: 'run',
  workspace: '/w',
  started_at: t,
  finished_at: t + 50,
  error: null,
  change_id: `run:${run_id}`,
  tracking: true,
  reason: null,
  usage: null,
  ...over,
});
const tool = (tool_call_id: string, run_id: string, t: number, over: Partial<ToolCall> = {}): ToolCall => ({
  tool_call_id,
  run_id,
  session_id: 's',
  name: 'edit',
  status: 'completed',
  started_at: t,
  finished_at: t + 5,
  error: null,
  change_id: `tool:${tool_call_id}`,
  tracking: true,
  reason: null,
  ...over,
});
const change = (change_id: string, run_id: string, over: Partial<ChangeSummary> = {}): ChangeSummary => ({
  change_id,
  session_id: 's',
  run_id,
  tool_call_id: null,
  source: 'run',
  workspace: '/w',
  workspace_kind: 'git',
  started_at: 0,
  finished_at: 0,
  changed_count: 1,
  added_count: 0,
  modified_count: 1,
  deleted_count: 0,
  renamed_count: 0,
  binary_count: 0,
  truncated: false,
  truncated_reasons: [],
  total_patch_bytes: 10,
  overlapping: false,
  omitted_count: 0,
  created_at: 0,
  total_additions: 0,
  total_deletions: 0,
  files: [],
  ...over,
});

/** A compact picture of the timeline: `m:<id>`, `run:<id>`, `tool:<id>[change]`, `out:<id>[change]`. */
const shape = (items: TimelineItem[]) =>
  items.map((it) => {
    switch (it.kind) {
      case 'message':
        return `m:${it.message.id}`;
      case 'run':
        return `run:${it.run.run_id}`;
      case 'tool':
        return `tool:${it.toolCall.tool_call_id}[${it.change?.change_id ?? ''}]${it.results.map((r) => `+${r.id}`).join('')}`;
      case 'outcome':
        return `out:${it.run.run_id}[${it.change?.change_id ?? ''}]`;
      case 'change':
        return `orphan:${it.change.change_id}`;
      case 'review':
        return `review:${it.review.id}`;
    }
  });

const state = (over: Partial<ReturnType<typeof emptySessionState>>) => ({ ...emptySessionState(), ...over });

const review = (id: string, over: Partial<Review> = {}): Review => ({
  id,
  session_id: 's',
  note: '',
  mode: 'next_prompt',
  state: 'delivered',
  comment_ids: ['c1', 'c2'],
  created_at: 0,
  delivered_at: null,
  delivered_via: 'hook',
  delivered_to: 'claude-code',
  text: 'review text',
  ...over,
});

describe('buildTimeline', () => {
  it('B24: puts the run block under the final assistant message of its run, not an earlier one', () => {
    const s = state({
      messages: [
        msg('u1', 'user', 100, 'r1'),
        msg('a1', 'assistant', 120, 'r1'),
        msg('a2', 'assistant', 140, 'r1'),
        msg('u2', 'user', 200),
      ],
      runs: [run('r1', 100)],
      changes: [change('run:r1', 'r1')],
    });
    expect(shape(buildTimeline(s))).toEqual(['m:u1', 'run:r1', 'm:a1', 'm:a2', 'out:r1[run:r1]', 'm:u2']);
  });

  it('B24: a run without an assistant message shows its block after its last message', () => {
    const s = state({
      messages: [msg('u1', 'user', 100, 'r1'), msg('u2', 'user', 300)],
      runs: [run('r1', 110)],
      changes: [change('run:r1', 'r1')],
    });
    expect(shape(buildTimeline(s))).toEqual(['m:u1', 'run:r1', 'out:r1[run:r1]', 'm:u2']);
  });

  it('a run with no messages at all shows its block after its marker', () => {
    const s = state({ runs: [run('r1', 100), run('r2', 200)], changes: [change('run:r2', 'r2')] });
    expect(shape(buildTimeline(s))).toEqual(['run:r1', 'out:r1[]', 'run:r2', 'out:r2[run:r2]']);
  });

  it('B24: a tool-level change goes inside its tool card, and tool messages link to their card', () => {
    const s = state({
      messages: [
        msg('u1', 'user', 100, 'r1'),
        msg('a1', 'assistant', 110, 'r1'),
        msg('t1', 'tool', 130, 'r1', 'tc1'),
        msg('a2', 'assistant', 150, 'r1'),
      ],
      runs: [run('r1', 105)],
      toolCalls: [tool('tc1', 'r1', 120)],
      changes: [change('tool:tc1', 'r1', { source: 'tool', tool_call_id: 'tc1' }), change('run:r1', 'r1')],
    });
    expect(shape(buildTimeline(s))).toEqual([
      'm:u1',
      'run:r1',
      'm:a1',
      'tool:tc1[tool:tc1]+t1',
      'm:a2',
      'out:r1[run:r1]',
    ]);
  });

  it('keeps each of two runs blocks under its own final message', () => {
    const s = state({
      messages: [
        msg('u1', 'user', 100, 'r1'),
        msg('a1', 'assistant', 120, 'r1'),
        msg('u2', 'user', 200, 'r2'),
        msg('a2', 'assistant', 220, 'r2'),
      ],
      runs: [run('r1', 100), run('r2', 200)],
      changes: [change('run:r1', 'r1'), change('run:r2', 'r2')],
    });
    expect(shape(buildTimeline(s))).toEqual([
      'm:u1',
      'run:r1',
      'm:a1',
      'out:r1[run:r1]',
      'm:u2',
      'run:r2',
      'm:a2',
      'out:r2[run:r2]',
    ]);
  });

  it('two overlapping wrapped commands: each block sits after its own marker, named by its command line', () => {
    // `rundiff run` tags its command line and its outcome reply (`exit 0 in 3.0 s`) with the run;
    // the second command starts and ends while the first is still running.
    const reply = (id: string, t: number, run_id: string, content: string): Message => ({
      ...msg(id, 'assistant', t, run_id),
      content,
    });
    const s = state({
      messages: [
        { ...msg('u1', 'user', 100, 'r1'), content: 'sh -c "sleep 3; echo a > a.txt"' },
        { ...msg('u2', 'user', 200, 'r2'), content: 'sh -c "echo b > b.txt"' },
        reply('a2', 260, 'r2', 'exit 0 in 0.0 s'),
        reply('a1', 3100, 'r1', 'exit 3 in 3.0 s'),
      ],
      runs: [
        run('r1', 101, { finished_at: 3101, status: 'failed', error: 'exit 3 in 3.0 s' }),
        run('r2', 201, { finished_at: 261 }),
      ],
      changes: [change('run:r1', 'r1'), change('run:r2', 'r2')],
    });
    const items = buildTimeline(s);
    // The outcome replies repeat the markers and are not shown: they anchor nothing.
    expect(shape(items)).toEqual(['m:u1', 'run:r1', 'out:r1[run:r1]', 'm:u2', 'run:r2', 'out:r2[run:r2]']);
    const prompts = items.flatMap((it) => (it.kind === 'outcome' ? [it.prompt] : []));
    expect(prompts).toEqual(['sh -c "sleep 3; echo a > a.txt"', 'sh -c "echo b > b.txt"']);
  });

  it('an outcome-looking reply of a run still open, or of an agent run, is shown and anchors its block', () => {
    const s = state({
      messages: [
        msg('u1', 'user', 100, 'r1'),
        { ...msg('a1', 'assistant', 120, 'r1'), content: 'exit 0 in 1.0 s' },
        msg('u2', 'user', 200, 'r2'),
      ],
      runs: [run('r1', 101, { source: 'coding-agent' })],
      changes: [change('run:r1', 'r1')],
    });
    expect(shape(buildTimeline(s))).toEqual(['m:u1', 'run:r1', 'm:a1', 'out:r1[run:r1]', 'm:u2']);
  });

  it('an untagged assistant reply inside a run interval counts as that run', () => {
    const s = state({
      messages: [msg('u1', 'user', 100), msg('a1', 'assistant', 120), msg('a9', 'assistant', 500)],
      runs: [run('r1', 110, { finished_at: 130 })],
      changes: [change('run:r1', 'r1')],
    });
    expect(shape(buildTimeline(s))).toEqual(['m:u1', 'run:r1', 'm:a1', 'out:r1[run:r1]', 'm:a9']);
  });

  it('shows a change whose run is unknown at its time instead of dropping it', () => {
    const s = state({ messages: [msg('u1', 'user', 100)], changes: [change('run:gone', 'gone', { created_at: 150 })] });
    expect(shape(buildTimeline(s))).toEqual(['m:u1', 'orphan:run:gone']);
  });

  it('marks a delivered review at its delivery time, before the prompt that carried it in the same millisecond', () => {
    const s = state({
      messages: [
        msg('u1', 'user', 100, 'r1'),
        msg('a1', 'assistant', 140, 'r1'),
        msg('u2', 'user', 300, 'r2'),
        msg('a2', 'assistant', 340, 'r2'),
      ],
      runs: [run('r1', 100), run('r2', 300)],
      changes: [change('run:r1', 'r1'), change('run:r2', 'r2')],
    });
    const reviews = [
      review('rv1', { delivered_at: 300 }),
      // Sent but not received yet: nothing to mark.
      review('rv2', { state: 'pending', delivered_at: null, delivered_via: null, delivered_to: null }),
    ];
    expect(shape(buildTimeline(s, reviews))).toEqual([
      'm:u1',
      'run:r1',
      'm:a1',
      'out:r1[run:r1]',
      'review:rv1',
      'm:u2',
      'run:r2',
      'm:a2',
      'out:r2[run:r2]',
    ]);
  });

  it('a review delivered while a run was going sits among its messages by time, not after its outcome', () => {
    const s = state({
      messages: [msg('u1', 'user', 100, 'r1'), msg('a1', 'assistant', 120, 'r1'), msg('a2', 'assistant', 200, 'r1')],
      runs: [run('r1', 100, { finished_at: 250 })],
      changes: [change('run:r1', 'r1')],
    });
    expect(shape(buildTimeline(s, [review('rv1', { delivered_at: 150, mode: 'now' })]))).toEqual([
      'm:u1',
      'run:r1',
      'm:a1',
      'review:rv1',
      'm:a2',
      'out:r1[run:r1]',
    ]);
  });

  it('carries live progress to the open run outcome', () => {
    const s = state({ runs: [run('r1', 100, { status: 'running', finished_at: null })] });
    applyProgress(s, {
      session_id: 's',
      run_id: 'r1',
      change_id: 'run:r1',
      available: true,
      touched: ['a'],
      touched_count: 1,
    });
    const out = buildTimeline(s).find((i) => i.kind === 'outcome');
    expect(out?.kind === 'outcome' && out.progress?.touched_count).toBe(1);
  });
});

describe('session reducers', () => {
  const payload = (over: Partial<DiffCompletedPayload> = {}): DiffCompletedPayload => ({
    event: 'workspace.diff.completed',
    session_id: 's',
    run_id: 'r1',
    change_id: 'run:r1',
    changed_count: 2,
    files: [
      {
        id: 'f1',
        path: 'a.ts',
        old_path: null,
        change_type: 'added',
        additions: 3,
        deletions: 0,
        binary: false,
        truncated: false,
        omitted_reason: null,
      },
      {
        id: 'f2',
        path: 'b.png',
        old_path: null,
        change_type: 'modified',
        additions: 0,
        deletions: 0,
        binary: true,
        truncated: false,
        omitted_reason: 'binary',
      },
    ],
    truncated: false,
    source: 'run',
    tool_call_id: null,
    overlapping: false,
    omitted_count: 0,
    total_additions: 3,
    total_deletions: 0,
    ...over,
  });

  it('B25: workspace.diff.completed inserts the block under the run without reload, marked for refetch', () => {
    const s = state({
      messages: [msg('u1', 'user', 100, 'r1'), msg('a1', 'assistant', 120, 'r1')],
      runs: [run('r1', 100, { status: 'running', finished_at: null })],
    });
    applyProgress(s, {
      session_id: 's',
      run_id: 'r1',
      change_id: 'run:r1',
      available: true,
      touched: [],
      touched_count: 2,
    });
    expect(applyDiffCompleted(s, payload())).toBe(true);
    expect(s.partial).toEqual(['run:r1']);
    expect(s.progress['run:r1']).toBeUndefined();
    expect(s.changes[0]!.added_count).toBe(1);
    expect(s.changes[0]!.binary_count).toBe(1);
    expect(shape(buildTimeline(s))).toEqual(['m:u1', 'run:r1', 'm:a1', 'out:r1[run:r1]']);
    applyChange(s, change('run:r1', 'r1', { changed_count: 2 }));
    expect(s.partial).toEqual([]);
    // A repeated event after the full summary arrived changes nothing.
    expect(applyDiffCompleted(s, payload())).toBe(false);
    expect(s.changes).toHaveLength(1);
  });

  it('message.updated replaces a streamed message in place; created keeps time order', () => {
    const s = state({ messages: [msg('a', 'user', 100), msg('c', 'assistant', 300)] });
    applyMessage(s, msg('b', 'assistant', 200));
    applyMessage(s, { ...msg('b', 'assistant', 200), content: 'longer text' });
    expect(s.messages.map((m) => m.id)).toEqual(['a', 'b', 'c']);
    expect(s.messages[1]!.content).toBe('longer text');
    expect(olderMessagesCursor(s)).toBe(101);
    expect(prependMessages(s, [msg('z', 'user', 50), msg('y', 'user', 100), msg('a', 'user', 100)])).toBe(2);
    expect(s.messages.map((m) => m.id)).toEqual(['z', 'y', 'a', 'b', 'c']);
  });

  it('run and tool terminal events update the marker and clear the live feed', () => {
    const s = state({});
    applyRun(s, run('r1', 100, { status: 'running', finished_at: null }));
    applyToolCall(s, tool('t1', 'r1', 110, { status: 'running', finished_at: null }));
    applyProgress(s, {
      session_id: 's',
      run_id: 'r1',
      change_id: 'run:r1',
      available: true,
      touched: [],
      touched_count: 1,
    });
    applyProgress(s, {
      session_id: 's',
      run_id: 'r1',
      change_id: 'tool:t1',
      available: true,
      touched: [],
      touched_count: 1,
    });
    applyToolCall(s, tool('t1', 'r1', 110));
    applyRun(s, run('r1', 100, { status: 'failed', error: 'boom' }));
    expect(s.runs).toHaveLength(1);
    expect(s.runs[0]!.error).toBe('boom');
    expect(s.toolCalls[0]!.status).toBe('completed');
    expect(s.progress).toEqual({});
  });
});

import type { ChangeSummary, DiffProgressPayload, Message, Review, Run, ToolCall } from '../../../shared/index.ts';
import { isCommandOutcome } from './command-outcome.ts';
import type { SessionState } from './session-state.ts';

export type TimelineItem =
  | { kind: 'message'; key: string; message: Message }
  /** Where a run started; shows its status (running / completed / failed with the error). */
  | { kind: 'run'; key: string; run: Run }
  | {
      kind: 'tool';
      key: string;
      toolCall: ToolCall;
      /** Tool-role messages linked to this call by tool_call_id. */
      results: Message[];
      change: ChangeSummary | null;
      progress: DiffProgressPayload | null;
    }
  /**
   * A run's result: the change block, the live progress, or why it was not tracked. `prompt` is the
   * run's first user message (a wrapped command's command line), which names the block to a reader.
   */
  | {
      kind: 'outcome';
      key: string;
      run: Run;
      prompt: string | null;
      change: ChangeSummary | null;
      progress: DiffProgressPayload | null;
    }
  /** A stored change whose run or tool call is not in the session (shown at its time rather than lost). */
  | { kind: 'change'; key: string; change: ChangeSummary }
  /** Where a review reached the agent (at its `delivered_at`): the prompt that received it follows. */
  | { kind: 'review'; key: string; review: Review };

interface Placed {
  item: TimelineItem;
  time: number;
  /**
   * Same-millisecond order: a review delivered, the user prompt that carried it, then the run it
   * starts, then what the run produced.
   */
  rank: number;
  seq: number;
}

/**
 * Which run a message belongs to: its own `run_id`, or, for an assistant message without one,
 * the latest-started run whose interval contains it (runtimes that do not tag replies).
 */
function runOfMessage(m: Message, runs: readonly Run[]): string | null {
  if (m.run_id !== null) return m.run_id;
  if (m.role !== 'assistant') return null;
  let best: Run | null = null;
  for (const r of runs) {
    if (m.created_at < r.started_at) continue;
    if (r.finished_at !== null && m.created_at > r.finished_at) continue;
    if (best === null || r.started_at >= best.started_at) best = r;
  }
  return best?.run_id ?? null;
}

/** Each run's first user message (its prompt, or a wrapped command's command line), by run id. */
export function runPrompts(messages: readonly Message[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of messages) {
    if (m.role === 'user' && m.run_id !== null && !out.has(m.run_id)) out.set(m.run_id, m.content);
  }
  return out;
}

/**
 * Orders a session's messages, runs and tool calls in time and places each change block:
 * a run's block under its final assistant message (else its last message, else its last tool
 * card, else its marker); a tool call's block inside its tool card. A wrapped command's outcome
 * reply (`exit 3 in 0.5 s`) is left out: its run marker says it, and a reply no one sees must not
 * carry the block away from its run (two overlapping commands would both end up after the second).
 * A delivered review is marked at the time it was delivered (reviews not delivered yet have no
 * place in the timeline).
 */
export function buildTimeline(
  state: Pick<SessionState, 'messages' | 'runs' | 'toolCalls' | 'changes' | 'progress'>,
  reviews: readonly Review[] = [],
): TimelineItem[] {
  const toolIds = new Set(state.toolCalls.map((t) => t.tool_call_id));
  const results = new Map<string, Message[]>();
  for (const m of state.messages) {
    if (m.role === 'tool' && m.tool_call_id !== null && toolIds.has(m.tool_call_id)) {
      const list = results.get(m.tool_call_id) ?? [];
      list.push(m);
      results.set(m.tool_call_id, list);
    }
  }

  const used = new Set<string>();
  const changeOfRun = (run: Run): ChangeSummary | null => {
    const c =
      state.changes.find((c) => c.change_id === run.change_id) ??
      state.changes.find((c) => c.run_id === run.run_id && c.source !== 'tool' && c.tool_call_id === null);
    if (c) used.add(c.change_id);
    return c ?? null;
  };
  const changeOfTool = (call: ToolCall): ChangeSummary | null => {
    const c =
      state.changes.find((c) => c.change_id === call.change_id) ??
      state.changes.find((c) => c.tool_call_id === call.tool_call_id);
    if (c) used.add(c.change_id);
    return c ?? null;
  };

  const runsById = new Map(state.runs.map((r) => [r.run_id, r]));
  const prompts = runPrompts(state.messages);
  const placed: Placed[] = [];
  let seq = 0;
  for (const m of state.messages) {
    if (m.role === 'tool' && m.tool_call_id !== null && toolIds.has(m.tool_call_id)) continue;
    if (isCommandOutcome(m, runsById.get(m.run_id ?? ''))) continue;
    placed.push({
      item: { kind: 'message', key: `message:${m.id}`, message: m },
      time: m.created_at,
      rank: m.role === 'user' ? 0 : 2,
      seq: seq++,
    });
  }
  for (const r of state.runs) {
    placed.push({ item: { kind: 'run', key: `run:${r.run_id}`, run: r }, time: r.started_at, rank: 1, seq: seq++ });
  }
  for (const t of state.toolCalls) {
    placed.push({
      item: {
        kind: 'tool',
        key: `tool:${t.tool_call_id}`,
        toolCall: t,
        results: results.get(t.tool_call_id) ?? [],
        change: changeOfTool(t),
        progress: state.progress[t.change_id] ?? null,
      },
      time: t.started_at,
      rank: 2,
      seq: seq++,
    });
  }
  const outcomes = state.runs.map((run) => ({ run, change: changeOfRun(run) }));
  for (const c of state.changes) {
    if (used.has(c.change_id)) continue;
    placed.push({
      item: { kind: 'change', key: `change:${c.change_id}`, change: c },
      time: c.created_at,
      rank: 3,
      seq: seq++,
    });
  }
  for (const r of reviews) {
    if (r.state !== 'delivered' || r.delivered_at === null) continue;
    placed.push({
      item: { kind: 'review', key: `review:${r.id}`, review: r },
      time: r.delivered_at,
      rank: -1,
      seq: seq++,
    });
  }
  placed.sort((a, b) => a.time - b.time || a.rank - b.rank || a.seq - b.seq);
  const items = placed.map((p) => p.item);

  // Each run's outcome goes right after its anchor (positions refer to `items` before insertion).
  const inserts: { at: number; item: TimelineItem }[] = [];
  for (const { run, change } of outcomes) {
    let finalAssistant = -1;
    let lastMessage = -1;
    let lastTool = -1;
    let marker = -1;
    items.forEach((it, i) => {
      if (it.kind === 'message' && runOfMessage(it.message, state.runs) === run.run_id) {
        lastMessage = i;
        if (it.message.role === 'assistant') finalAssistant = i;
      } else if (it.kind === 'tool' && it.toolCall.run_id === run.run_id) lastTool = i;
      else if (it.kind === 'run' && it.run.run_id === run.run_id) marker = i;
    });
    // Never above the run's own marker (a prompt tagged with the run may precede its start).
    const anchor = Math.max(marker, finalAssistant >= 0 ? finalAssistant : Math.max(lastMessage, lastTool));
    inserts.push({
      at: anchor + 1,
      item: {
        kind: 'outcome',
        key: `outcome:${run.run_id}`,
        run,
        prompt: prompts.get(run.run_id) ?? null,
        change,
        progress: state.progress[run.change_id] ?? null,
      },
    });
  }
  // Runs are oldest first, so outcomes sharing an anchor keep run order.
  const byPosition = new Map<number, TimelineItem[]>();
  for (const ins of inserts) {
    const list = byPosition.get(ins.at) ?? [];
    list.push(ins.item);
    byPosition.set(ins.at, list);
  }
  const out: TimelineItem[] = [];
  for (let i = 0; i <= items.length; i++) {
    out.push(...(byPosition.get(i) ?? []));
    if (i < items.length) out.push(items[i]!);
  }
  return out;
}

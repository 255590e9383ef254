import type { ChangeSummary, Run, RunStatus } from '../../../shared/index.ts';
import { promptExcerpt, shortId } from './change-owner.ts';
import type { TimelineItem } from './timeline.ts';

/** One run in a session's outline. */
export interface OutlineEntry {
  runId: string;
  /** The run's title, else its prompt's first line, else `Run <short id>`. */
  label: string;
  /** The whole title or prompt (a tooltip). */
  full: string;
  startedAt: number;
  status: RunStatus;
  /** Files the run changed (its run-level change), null while it has none stored. */
  files: number | null;
}

/** The outline of a session's runs, in start order. */
export function runOutline(
  runs: readonly Run[],
  changes: readonly ChangeSummary[],
  prompts: ReadonlyMap<string, string>,
): OutlineEntry[] {
  const files = new Map<string, number>();
  for (const c of changes)
    if (c.tool_call_id === null) files.set(c.run_id, (files.get(c.run_id) ?? 0) + c.changed_count);
  return [...runs]
    .sort((a, b) => a.started_at - b.started_at)
    .map((r) => {
      const prompt = prompts.get(r.run_id)?.trim() ?? '';
      const title = r.title?.trim() ?? '';
      const label = title !== '' ? title : prompt !== '' ? promptExcerpt(prompt) : `Run ${shortId(r.run_id)}`;
      return {
        runId: r.run_id,
        label,
        full: title !== '' ? title : prompt !== '' ? prompt.slice(0, 500) : `run ${r.run_id}`,
        startedAt: r.started_at,
        status: r.status,
        files: files.get(r.run_id) ?? null,
      };
    });
}

/** The run a timeline item belongs to (hidden when that run is collapsed); null for the run's own marker and items of no run. */
export function itemRunId(item: TimelineItem): string | null {
  switch (item.kind) {
    case 'message':
      return item.message.run_id;
    case 'tool':
      return item.toolCall.run_id;
    case 'outcome':
      return item.run.run_id;
    case 'change':
      return item.change.run_id;
    default:
      return null;
  }
}

/**
 * The run in view: the last whose marker's top is at or above `line` (px from the viewport's top),
 * else the first. `tops` are the markers' tops in page order.
 */
export function runInView(tops: readonly { runId: string; top: number }[], line: number): string | null {
  let current: string | null = tops[0]?.runId ?? null;
  for (const t of tops) if (t.top <= line) current = t.runId;
  return current;
}

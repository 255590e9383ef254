import type { ChangeSummary, NetFileSummary } from '../../../shared/index.ts';

/** The run-level changes a comparison can start or end at, oldest first (a tool's change is inside its run's). */
export function comparableChanges(changes: readonly ChangeSummary[]): ChangeSummary[] {
  return changes.filter((c) => c.source !== 'tool');
}

/** `Run 2 · 14:03:12 · revert` for a range picker. */
export function runOptionLabel(c: ChangeSummary, index: number, timeText: (ms: number) => string): string {
  const parts = [`Run ${index + 1}`, timeText(c.started_at ?? c.created_at)];
  if (c.source !== 'run') parts.push(c.source.replace('-', ' '));
  return parts.join(' · ');
}

/** Why a net file's figures may not be the whole story, in words; empty when nothing to say. */
export function netFlagsText(f: Pick<NetFileSummary, 'outside_change_ids' | 'interleaved'>): string[] {
  const out: string[] = [];
  const n = f.outside_change_ids.length;
  if (n > 0) out.push(`also changed by ${n === 1 ? 'a run' : `${n} runs`} outside this range`);
  if (f.interleaved) out.push('changed between these runs by something no run recorded');
  return out;
}

import type { ChangeSummary, NetFileSummary } from '../../../shared/index.ts';
import { promptExcerpt } from './change-owner.ts';

/** The run-level changes a comparison can start or end at, oldest first (a tool's change is inside its run's). */
export function comparableChanges(changes: readonly ChangeSummary[]): ChangeSummary[] {
  return changes.filter((c) => c.source !== 'tool');
}

/**
 * A range picker's name for a run: its title, else its prompt's first line, else `Run 2 · 14:03:12`;
 * a revert or other non-plain source is said after it (`Undo the rename · revert`).
 */
export function runOptionLabel(
  c: ChangeSummary,
  index: number,
  timeText: (ms: number) => string,
  named: { title?: string | null; prompt?: string | null } = {},
): string {
  const title = named.title?.trim() ?? '';
  const prompt = named.prompt?.trim() ?? '';
  const parts =
    title !== ''
      ? [promptExcerpt(title)]
      : prompt !== ''
        ? [promptExcerpt(prompt)]
        : [`Run ${index + 1}`, timeText(c.started_at ?? c.created_at)];
  if (c.source !== 'run') parts.push(c.source.replace('-', ' '));
  return parts.join(' · ');
}

/**
 * The range a URL names (`?from=run:a&to=run:b`), held to the runs offered: an end that names no
 * run offered falls back to the first (from) or last (to) run; null ends when no run is offered.
 */
export function rangeFromQuery(
  query: { from?: unknown; to?: unknown },
  changeIds: readonly string[],
): { from: string | null; to: string | null } {
  const pick = (v: unknown, fallback: string | null) => (typeof v === 'string' && changeIds.includes(v) ? v : fallback);
  return {
    from: pick(query.from, changeIds[0] ?? null),
    to: pick(query.to, changeIds[changeIds.length - 1] ?? null),
  };
}

/** Why a net file's figures may not be the whole story, in words; empty when nothing to say. */
export function netFlagsText(f: Pick<NetFileSummary, 'outside_change_ids' | 'interleaved'>): string[] {
  const out: string[] = [];
  const n = f.outside_change_ids.length;
  if (n > 0) out.push(`also changed by ${n === 1 ? 'a run' : `${n} runs`} outside this range`);
  if (f.interleaved) out.push('changed between these runs by something no run recorded');
  return out;
}

/**
 * What may make the net change's figures inexact, said once for the whole view: how many files were
 * also changed outside the range, and how many between its runs by something no run recorded.
 */
export function netBannerText(files: readonly Pick<NetFileSummary, 'outside_change_ids' | 'interleaved'>[]): string[] {
  const outside = files.filter((f) => f.outside_change_ids.length > 0).length;
  const interleaved = files.filter((f) => f.interleaved).length;
  const files_ = (n: number) => (n === 1 ? '1 file was' : `${n} files were`);
  const out: string[] = [];
  if (outside > 0) out.push(`${files_(outside)} also changed by runs outside this range (marked "outside range").`);
  if (interleaved > 0)
    out.push(`${files_(interleaved)} changed between these runs by something no run recorded (marked "unrecorded").`);
  return out;
}

/** A net file row's short marks, the banner's words for it: `outside range`, `unrecorded`. */
export function netRowMarks(f: Pick<NetFileSummary, 'outside_change_ids' | 'interleaved'>): string[] {
  const out: string[] = [];
  if (f.outside_change_ids.length > 0) out.push('outside range');
  if (f.interleaved) out.push('unrecorded');
  return out;
}

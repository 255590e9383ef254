import { diffArrays } from 'diff';

/**
 * The pure core of provenance ("which run wrote this line"): a file's recorded states in order,
 * each with what produced it since the state before, carried forward by line diffs. A line keeps
 * the origin of the state that first held it, until a later state no longer does. Text in,
 * attributions out; no I/O.
 */

/** One recorded state of a file: its lines (empty: absent or empty), or null when not kept. */
export interface Snapshot<O> {
  lines: readonly string[] | null;
  /** What made the file what it is here, from the state before it (the first state's is unused). */
  origin: O;
}

/** Where a line came from: the origin of a state, or one of the places the chain breaks. */
export type Attribution<O> =
  | { kind: 'origin'; origin: O }
  /** The line was there at the first recorded state (before any recorded run). */
  | { kind: 'initial' }
  /** Its state, or one between it and the last known one, was not kept: `origin` made the state that holds it. */
  | { kind: 'not_kept'; origin: O };

export interface Attributed<O> {
  lines: string[];
  attributions: Attribution<O>[];
  /** A line diff gave up on its time bound: the lines of that step are attributed whole. */
  gaveUp: boolean;
}

/**
 * Attributes each line of the last known state. A state after an unkept one gets `not_kept` for
 * the lines it adds (the chain cannot tell what happened in between); lines present before keep
 * theirs. Null when no state was kept at all.
 */
export function attribute<O>(snapshots: readonly Snapshot<O>[], diffTimeoutMs = 0): Attributed<O> | null {
  let lines: string[] | null = null;
  let marks: Attribution<O>[] = [];
  let broken = false;
  let gaveUp = false;
  for (const s of snapshots) {
    if (s.lines === null) {
      broken = true;
      continue;
    }
    const fresh: Attribution<O> = broken
      ? { kind: 'not_kept', origin: s.origin }
      : { kind: 'origin', origin: s.origin };
    if (lines === null) {
      lines = [...s.lines];
      marks = lines.map(() => (broken ? fresh : { kind: 'initial' }));
      broken = false;
      continue;
    }
    const next = [...s.lines];
    const parts = diffTimeoutMs > 0 ? diffArrays(lines, next, { timeout: diffTimeoutMs }) : diffArrays(lines, next);
    const carried: Attribution<O>[] = [];
    if (!parts) {
      gaveUp = true;
      for (let i = 0; i < next.length; i++) carried.push(fresh);
    } else {
      let old = 0;
      for (const p of parts) {
        if (p.removed) old += p.count;
        else if (p.added) for (let k = 0; k < p.count; k++) carried.push(fresh);
        else for (let k = 0; k < p.count; k++) carried.push(marks[old++]!);
      }
    }
    lines = next;
    marks = carried;
    broken = false;
  }
  return lines === null ? null : { lines, attributions: marks, gaveUp };
}

/** A text's lines as blame numbers them: split on `\n`, a final newline ending the last line, not starting one. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

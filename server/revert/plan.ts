import type { FileSummary, RevertAction } from '../../shared/index.ts';
import type { FileSide } from '../delta/index.ts';
import { isBinaryContent } from '../delta/index.ts';
import type { WriteEntry } from '../fs/index.ts';
import type { MergeResult } from '../git/index.ts';
import type { PathKey } from '../paths/index.ts';
import type { Current } from './current.ts';

/**
 * What reverting one file means, decided from three things: the file's two stored sides (the run's
 * start and end), and what stands at its path(s) now. Pure apart from the merge, which is handed in.
 *
 * - The path holds the run's end: the start comes back (an added file goes, a deleted one returns,
 *   a rename moves back, the mode is restored).
 * - The path changed since (someone kept working): a three-way merge (base = the run's end,
 *   current, other = the run's start) folds the undo into those edits; a conflict leaves the file
 *   alone. Binary contents and links cannot be merged: changed since, they conflict.
 * - The path already holds the run's start: nothing to do.
 */

/** A side of the file as kept by the content store, with its bytes loaded. */
export type KeptSide = { exists: false } | { exists: true; mode: string; bytes: Buffer; sha256: string };

export interface FileToRevert {
  row: FileSummary;
  /** Where the run's start was (a rename's old path) and where its end is. */
  beforeKey: PathKey;
  afterKey: PathKey;
  before: KeptSide;
  after: KeptSide;
  /** What stands now at `afterKey`, and at `beforeKey` when that is another path. */
  atAfter: Current;
  atBefore: Current;
}

export type Step = { kind: 'write'; key: PathKey; entry: WriteEntry } | { kind: 'remove'; key: PathKey };

export interface Decision {
  action: RevertAction;
  reason: string | null;
  conflict: string | null;
  steps: Step[];
  /** The patch's input: each touched path from what stands now to what will stand. */
  sides: { key: PathKey; now: FileSide | null; then: FileSide | null }[];
}

export type Merge = (sides: { base: Buffer; current: Buffer; other: Buffer }) => Promise<MergeResult>;

const LINK_MODE = '120000';

const sideOf = (c: { bytes: Buffer; mode: string }): FileSide => ({
  bytes: c.bytes,
  size: c.bytes.length,
  mode: c.mode,
});

/** The entry to write; `like`: what stands there now (or moves back from), whose bits and owner are kept. */
export const entryOf = (bytes: Buffer, mode: string, like?: Current): WriteEntry => {
  if (mode === LINK_MODE) return { kind: 'symlink', target: bytes };
  const keep = like?.kind === 'entry' ? like.keep : undefined;
  return keep ? { kind: 'file', bytes, mode, keep } : { kind: 'file', bytes, mode };
};

const only = (action: RevertAction, reason: string | null, conflict: string | null = null): Decision => ({
  action,
  reason,
  conflict,
  steps: [],
  sides: [],
});

/** A reason when what stands at a path cannot be judged or written; null when it can. */
function blocked(c: Current): Decision | null {
  if (c.kind === 'unreadable') return c.outside ? only('refused', c.why) : only('conflict', `the file is ${c.why} now`);
  if (c.kind === 'too_large')
    return only('conflict', 'the file is now larger than the content bound: it cannot be compared');
  return null;
}

const sameBytes = (c: Current, s: KeptSide): boolean => c.kind === 'entry' && s.exists && c.sha256 === s.sha256;

/** The mode to restore: the start's, unless someone changed the mode since the run (theirs is kept). */
function modeToRestore(current: { mode: string }, after: KeptSide, before: { mode: string }): string {
  if (!after.exists || current.mode === after.mode) return before.mode;
  // A type change (file <-> link) always follows the start: the bytes mean a link's target or not.
  if ((current.mode === LINK_MODE) !== (before.mode === LINK_MODE)) return before.mode;
  return current.mode;
}

const mergeable = (...contents: Buffer[]) => contents.every((b) => !isBinaryContent(b));

export async function decide(f: FileToRevert, merge: Merge): Promise<Decision> {
  const { before, after, atAfter, atBefore, beforeKey, afterKey } = f;
  const moved = beforeKey !== afterKey;

  // Added by the run: it goes, unless someone edited it since.
  if (!before.exists) {
    if (!after.exists) return only('unavailable', 'not_recorded');
    const b = blocked(atAfter);
    if (b) return b;
    if (atAfter.kind === 'absent') return only('unchanged', null);
    if (atAfter.kind !== 'entry') return only('conflict', 'unknown state');
    if (!sameBytes(atAfter, after))
      return only('conflict', 'the file was edited after the run: removing it would lose those edits');
    return {
      action: 'restore',
      reason: null,
      conflict: null,
      steps: [{ kind: 'remove', key: afterKey }],
      sides: [{ key: afterKey, now: sideOf(atAfter), then: null }],
    };
  }

  // Deleted by the run: it comes back, unless something else stands there now.
  if (!after.exists) {
    const b = blocked(atBefore);
    if (b) return b;
    if (atBefore.kind === 'entry') {
      if (sameBytes(atBefore, before)) return only('unchanged', null);
      return only('conflict', 'a file was created at this path after the run');
    }
    return {
      action: 'restore',
      reason: null,
      conflict: null,
      steps: [{ kind: 'write', key: beforeKey, entry: entryOf(before.bytes, before.mode) }],
      sides: [{ key: beforeKey, now: null, then: sideOf(before) }],
    };
  }

  // Modified or renamed.
  const b = blocked(atAfter) ?? (moved ? blocked(atBefore) : null);
  if (b) return b;
  if (atAfter.kind === 'absent') {
    if (moved && sameBytes(atBefore, before)) return only('unchanged', null);
    return only('conflict', 'the file was deleted or moved after the run');
  }
  if (atAfter.kind !== 'entry') return only('conflict', 'unknown state');
  if (moved && atBefore.kind === 'entry') return only('conflict', 'a file now stands at the old path of the rename');
  if (!moved && sameBytes(atAfter, before) && atAfter.mode === before.mode) return only('unchanged', null);

  let bytes: Buffer;
  let action: RevertAction = 'restore';
  if (sameBytes(atAfter, after)) {
    bytes = before.bytes;
  } else {
    const links = [atAfter.mode, after.mode, before.mode].includes(LINK_MODE);
    if (links || !mergeable(atAfter.bytes, after.bytes, before.bytes))
      return only(
        'conflict',
        `the ${links ? 'link' : 'binary file'} changed after the run and cannot be merged: it is left as it is`,
      );
    let m: MergeResult;
    try {
      m = await merge({ base: after.bytes, current: atAfter.bytes, other: before.bytes });
    } catch (err) {
      // Without a merge the later edits cannot be kept: the file is left alone, and says why.
      return only('conflict', `the file changed after the run and the merge could not run: ${(err as Error).message}`);
    }
    if (!m.clean)
      return only(
        'conflict',
        `the file changed after the run and ${m.conflicts} part${m.conflicts === 1 ? '' : 's'} of the undo conflict with those edits`,
        m.merged.toString('utf8'),
      );
    bytes = m.merged;
    action = 'merge';
  }
  const mode = modeToRestore(atAfter, after, before);
  if (!moved) {
    return {
      action,
      reason: null,
      conflict: null,
      steps: [{ kind: 'write', key: afterKey, entry: entryOf(bytes, mode, atAfter) }],
      sides: [{ key: afterKey, now: sideOf(atAfter), then: { bytes, size: bytes.length, mode } }],
    };
  }
  return {
    action,
    reason: null,
    conflict: null,
    steps: [
      { kind: 'write', key: beforeKey, entry: entryOf(bytes, mode, atAfter) },
      { kind: 'remove', key: afterKey },
    ],
    sides: [
      { key: afterKey, now: sideOf(atAfter), then: null },
      { key: beforeKey, now: null, then: { bytes, size: bytes.length, mode } },
    ],
  };
}

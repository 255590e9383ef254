import type { PathKey } from '../paths/index.ts';

/**
 * The pure core of a session's net change: each stored file row of the range's runs, in run order,
 * is a "touch" of one path (a rename touches two: its old path goes, its new path comes); per path,
 * the net is its first touch's start and its last touch's end.
 */

/** One side of a path as a change recorded it: absent, or present with its content id when kept. */
export type SideRef =
  { exists: false } | { exists: true; mode: string; sha256: string | null; reason: string | null; size: number };

/** The stored file row a touch is: a net side's lines are that row's side. */
export interface RowRef {
  changeId: string;
  fileId: string;
}

export interface Touch extends RowRef {
  key: PathKey;
  before: SideRef;
  after: SideRef;
}

export interface NetPath {
  key: PathKey;
  start: SideRef;
  end: SideRef;
  /** The row of the first touch (whose `before` is the start) and of the last (whose `after` is the end). */
  startRow: RowRef;
  endRow: RowRef;
  /** Between two of the range's touches, something no run recorded changed the path. */
  interleaved: boolean;
}

/** Same content and mode, as far as the kept ids tell; null when a content id is missing. */
export function sameSide(a: SideRef, b: SideRef): boolean | null {
  if (!a.exists || !b.exists) return a.exists === b.exists;
  if (a.sha256 === null || b.sha256 === null) return null;
  return a.sha256 === b.sha256 && a.mode === b.mode;
}

/** Folds the touches (in run order) into one net start/end per path; paths that end as they began are left out. */
export function foldTouches(touches: readonly Touch[]): NetPath[] {
  const byKey = new Map<PathKey, NetPath>();
  for (const t of touches) {
    const seen = byKey.get(t.key);
    if (!seen) {
      const row = { changeId: t.changeId, fileId: t.fileId };
      byKey.set(t.key, { key: t.key, start: t.before, end: t.after, startRow: row, endRow: row, interleaved: false });
      continue;
    }
    if (sameSide(seen.end, t.before) === false) seen.interleaved = true;
    seen.end = t.after;
    seen.endRow = { changeId: t.changeId, fileId: t.fileId };
  }
  return [...byKey.values()].filter((p) => sameSide(p.start, p.end) !== true);
}

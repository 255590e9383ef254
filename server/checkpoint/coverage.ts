import type { PathKey } from '../paths/index.ts';

/**
 * Which paths a scan can vouch for. A complete scan covers everything it did not prune; a cut scan
 * (file or time limit) covers a path only when the folder holding it was listed, or when the
 * nearest listed ancestor showed that the path's folder did not exist. A path a scan does not
 * cover is never reported as added or deleted (B17, B18).
 */
export interface Coverage {
  complete: boolean;
  /** Folders whose files were all recorded (only needed when not complete). */
  listed: Set<PathKey>;
  /** Folders met, entered or not. */
  seen: Set<PathKey>;
  /** Folders deliberately not entered (ignored, nested repositories handled elsewhere excluded). */
  pruned: Set<PathKey>;
}

function parentOf(p: PathKey): PathKey | null {
  if (p === '') return null;
  const i = p.lastIndexOf('/');
  return i === -1 ? '' : p.slice(0, i);
}

/** True when `p` lies inside one of `dirs`. */
export function isUnder(p: PathKey, dirs: ReadonlySet<PathKey>): boolean {
  if (dirs.size === 0) return false;
  for (let d = parentOf(p); d !== null; d = parentOf(d)) if (dirs.has(d)) return true;
  return false;
}

/** Whether the scan saw `p`'s folder fully, so `p`'s absence from it is a fact. */
export function covers(cov: Coverage, p: PathKey, opts: { respectPruned: boolean }): boolean {
  if (opts.respectPruned && isUnder(p, cov.pruned)) return false;
  if (cov.complete) return true;
  // Nearest ancestor that was listed; the folder below it on the way to p must not have existed.
  let child: PathKey | null = null;
  for (let d = parentOf(p); d !== null; child = d, d = parentOf(d)) {
    if (cov.listed.has(d)) return child === null || !cov.seen.has(child);
    if (cov.seen.has(d)) return false;
  }
  return false;
}

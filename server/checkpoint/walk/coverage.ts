import type { PathKey } from '../../paths/index.ts';
import type { Coverage } from '../model.ts';

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

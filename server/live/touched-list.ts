/**
 * Pure: a run's touched paths in recency order (a Set iterates in insertion order, so the least
 * recently touched path comes first and the newest last).
 */

/** Paths the watcher saw again or for the first time: each moves to the newest end. */
export function touchAll(list: Set<string>, paths: readonly string[]): void {
  for (const p of paths) {
    list.delete(p);
    list.add(p);
  }
}

/**
 * The list after a periodic check found `paths` changed: paths already listed keep their place,
 * paths gone from the result leave, new ones come after them as the newest (those new in the same
 * check listed in path order). At most `max` paths are kept.
 */
export function afterCheck(list: ReadonlySet<string>, paths: readonly string[], max: number): Set<string> {
  const now = new Set(paths);
  const next = new Set<string>();
  for (const p of list) if (now.has(p)) next.add(p);
  // Added in reverse path order, so that newest-first listing shows them in path order.
  const fresh = paths.filter((p) => !next.has(p)).sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
  for (const p of fresh) {
    if (next.size >= max) break;
    next.add(p);
  }
  return next;
}

/** The `max` most recently touched paths, newest first. */
export function newestFirst(list: ReadonlySet<string>, max: number): string[] {
  const all = [...list];
  return all.slice(Math.max(0, all.length - max)).reverse();
}

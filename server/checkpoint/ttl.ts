import type { Entry } from './entry.ts';

/**
 * Checkpoint expiry: a checkpoint whose run saw no event for the TTL is dropped. The sweep spares
 * only a checkpoint whose completion is in flight; a progress peek does not keep an expired one
 * alive (it holds its own reference to the checkpoint). A checkpoint still being taken is spared
 * too: its run has only just started.
 */
export function sweepExpired(
  entries: ReadonlyMap<string, Entry>,
  nowMs: number,
  ttlMs: number,
  remove: (key: string) => void,
): { sessionId: string; changeId: string }[] {
  const dropped: { sessionId: string; changeId: string }[] = [];
  for (const [key, e] of entries) {
    const completingNow = e.completing !== null && e.busy > 0;
    if (!completingNow && e.taken !== null && nowMs - e.lastEventAt >= ttlMs) {
      remove(key);
      dropped.push({ sessionId: e.sessionId, changeId: e.changeId });
    }
  }
  return dropped;
}

/** How often the TTL sweep runs: a tenth of the TTL, between one second and one minute. */
export function ttlSweepIntervalMs(ttlMs: number): number {
  return Math.min(60_000, Math.max(1_000, Math.floor(ttlMs / 10)));
}

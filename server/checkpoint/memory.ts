import type { Entry } from './entry.ts';

/**
 * One content-memory cap shared by every live checkpoint: bytes held by taken checkpoints plus
 * bytes granted to captures still reading. Room is made by evicting the oldest idle checkpoints;
 * a checkpoint being computed is never evicted.
 */
export interface MemoryBudget {
  /** Frees room for `wanted` bytes by evicting the oldest idle checkpoints, then grants what fits. */
  reserve(self: Entry, wanted: number): number;
  /** Returns a capture's grant once its checkpoint holds (and counts) its own bytes. */
  release(grantedBytes: number): void;
  /** Bytes held by taken checkpoints (grants in flight excluded). */
  heldBytes(): number;
}

export function createMemoryBudget(
  capBytes: number,
  entries: ReadonlyMap<string, Entry>,
  evict: (key: string) => void,
): MemoryBudget {
  let reservedBytes = 0;

  const heldBytes = (): number => {
    let n = 0;
    for (const e of entries.values()) n += e.memoryBytes;
    return n;
  };
  const usedBytes = (): number => reservedBytes + heldBytes();

  return {
    reserve(self, wanted) {
      if (usedBytes() + wanted > capBytes) {
        const idle = [...entries.entries()]
          .filter(([, e]) => e !== self && e.busy === 0 && e.taken !== null && e.memoryBytes > 0)
          .sort((a, b) => a[1].lastEventAt - b[1].lastEventAt);
        for (const [key] of idle) {
          if (usedBytes() + wanted <= capBytes) break;
          evict(key);
        }
      }
      const grant = Math.max(0, Math.min(wanted, capBytes - usedBytes()));
      reservedBytes += grant;
      return grant;
    },
    release(grantedBytes) {
      reservedBytes -= grantedBytes;
    },
    heldBytes,
  };
}

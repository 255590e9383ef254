import fs from 'node:fs';

/**
 * How many folder watches the live feed may hold. inotify watches are a per-user system resource
 * (`fs.inotify.max_user_watches`) shared with editors, build tools and other servers, so the feed
 * takes at most a quarter of it, and never more than the configured cap.
 */

/** The share of the system's per-user watch limit the feed allows itself. */
export const SYSTEM_WATCH_SHARE = 0.25;

/** The per-user inotify watch limit, or null where there is none to read (not Linux). */
export function systemWatchLimit(file = '/proc/sys/fs/inotify/max_user_watches'): number | null {
  try {
    const n = Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10);
    return Number.isFinite(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

/**
 * The inotify watches this process holds now, of every watcher in it (the live feed's folders and
 * anything else), counted from the kernel's own listing: one `inotify wd:` line per watch in
 * `/proc/self/fdinfo/<fd>` of each inotify descriptor. null where there is no such listing (not Linux).
 */
export function heldInotifyWatches(dir = '/proc/self/fdinfo'): number | null {
  let fds: string[];
  try {
    fds = fs.readdirSync(dir);
  } catch {
    return null;
  }
  let held = 0;
  for (const fd of fds) {
    let text: string;
    try {
      text = fs.readFileSync(`${dir}/${fd}`, 'latin1');
    } catch {
      continue; // closed while it was listed
    }
    for (let i = text.indexOf('inotify wd:'); i !== -1; i = text.indexOf('inotify wd:', i + 1))
      if (i === 0 || text[i - 1] === '\n') held++;
  }
  return held;
}

/** The folder watches the feed may hold: the configured cap, lowered to its share of the system limit. */
export function watchBudgetSize(cap: number, systemLimit: number | null): number {
  const share = systemLimit === null ? cap : Math.floor(systemLimit * SYSTEM_WATCH_SHARE);
  return Math.max(0, Math.min(cap, share));
}

/** A counter of watches held against a fixed size, shared by every folder the feed watches. */
export interface WatchBudget {
  /** Takes one watch; false (and nothing taken) when the budget is spent. */
  take(): boolean;
  release(count: number): void;
  held(): number;
  size: number;
}

export function createWatchBudget(size: number): WatchBudget {
  let held = 0;
  return {
    size,
    take() {
      if (held >= size) return false;
      held++;
      return true;
    },
    release(count) {
      held = Math.max(0, held - count);
    },
    held: () => held,
  };
}

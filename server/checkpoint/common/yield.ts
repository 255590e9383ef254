import { performance } from 'node:perf_hooks';

/**
 * Lets a long main-thread loop give the event loop a turn: `due()` is a cheap check (the clock is
 * read once every 256 calls), `pause()` waits one macrotask (setImmediate, so pending I/O and
 * timers run). A completion over 50,000 new files otherwise holds the server for hundreds of ms.
 */
export interface Yielder {
  due(): boolean;
  pause(): Promise<void>;
}

/** Longest stretch (ms) a loop runs before it lets the event loop in. */
export const SLICE_MS = 15;

export function createYielder(sliceMs = SLICE_MS): Yielder {
  let since = performance.now();
  let calls = 0;
  return {
    due: () => (++calls & 255) === 0 && performance.now() - since >= sliceMs,
    pause: () =>
      new Promise<void>((resolve) =>
        setImmediate(() => {
          since = performance.now();
          resolve();
        }),
      ),
  };
}

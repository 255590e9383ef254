/**
 * Serialises use of one synchronous connection between asynchronous flows. A transaction holds the
 * gate from BEGIN to COMMIT/ROLLBACK while its body awaits; a plain call made meanwhile by another
 * flow waits for the gate instead of running inside that transaction (where it would be committed or
 * rolled back with someone else's work, and would see rows not yet committed).
 *
 * Fast path: when the gate is free, a plain call runs at once. That is safe because a synchronous
 * call runs whole before anything else can, and the gate being free means no transaction is open on
 * the connection (the queue is always empty then: releasing drains it until it is held again or
 * empty).
 */
export interface Gate {
  /** Runs `op` now when free, else after everything queued before it; its result or throw as a promise. */
  run<T>(op: () => T): Promise<T>;
  /** Takes the gate when it is free (true); the caller must then `release` it exactly once. */
  tryAcquire(): boolean;
  /** Resolves holding the gate (the caller must `release` it exactly once). */
  acquire(): Promise<void>;
  release(): void;
  readonly held: boolean;
}

export function createGate(): Gate {
  let held = false;
  // A waiting plain call runs and leaves the gate free; a waiting acquire takes it and stops the drain.
  const queue: (() => void)[] = [];

  function drain(): void {
    while (!held && queue.length > 0) queue.shift()!();
  }

  return {
    get held() {
      return held;
    },
    run<T>(op: () => T): Promise<T> {
      if (!held) {
        try {
          return Promise.resolve(op());
        } catch (err) {
          return Promise.reject(err);
        }
      }
      return new Promise<T>((resolve, reject) => {
        queue.push(() => {
          try {
            resolve(op());
          } catch (err) {
            reject(err);
          }
        });
      });
    },
    tryAcquire(): boolean {
      if (held) return false;
      held = true;
      return true;
    },
    acquire(): Promise<void> {
      if (!held) {
        held = true;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        queue.push(() => {
          held = true;
          resolve();
        });
      });
    },
    release(): void {
      if (!held) throw new Error('store gate released while free');
      held = false;
      drain();
    },
  };
}

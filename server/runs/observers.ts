import type { StartResult } from '../checkpoint/types.ts';
import type { ResolvedWorkspace } from '../workspace/index.ts';

/** Told when a checkpoint exists and when its run or tool call closes (the live feed listens). */
export interface RunObserver {
  checkpointTaken?(ctx: {
    sessionId: string;
    runId: string;
    changeId: string;
    toolCallId: string | null;
    workspace: ResolvedWorkspace;
    result: StartResult;
  }): void;
  closing?(ctx: { sessionId: string; runId: string; changeId: string; toolCallId: string | null }): void;
}

/** The observers of the recorder; one failing observer never fails a run or the others (it is logged). */
export function createObservers(initial: RunObserver[], log: (m: string) => void) {
  const observers = [...initial];
  return {
    notify(fn: (o: RunObserver) => void): void {
      for (const o of observers) {
        try {
          fn(o);
        } catch (err) {
          log(`observer failed: ${(err as Error).message}`);
        }
      }
    },
    /** Adds observers after construction (they may need the running server, built after the recorder). */
    add(more: RunObserver[]): void {
      observers.push(...more);
    },
  };
}

export type Observers = ReturnType<typeof createObservers>;

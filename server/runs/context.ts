import type { StartResponse, CompleteResponse } from '../../shared/index.ts';
import type { CheckpointEngine } from '../checkpoint/types.ts';
import type { Config } from '../config.ts';
import type { Store } from '../store/index.ts';
import type { RecorderEmitter } from './emitter.ts';
import { createContentFills, type ContentFills } from './contents.ts';
import { createObservers, type Observers, type RunObserver } from './observers.ts';

export interface RecorderDeps {
  config: Pick<Config, 'workspaceRoots' | 'homeDir' | 'limits'>;
  store: Store;
  engine: CheckpointEngine;
  emitter: RecorderEmitter;
  now?: () => number;
  observers?: RunObserver[];
  /** Problems that never fail a run (an engine error) are reported here. Default: stderr. */
  log?: (message: string) => void;
}

/** What the recorder's modules share: their dependencies and the starts and completions in flight. */
export interface RecorderContext {
  config: RecorderDeps['config'];
  store: Store;
  engine: CheckpointEngine;
  emitter: RecorderEmitter;
  now: () => number;
  log: (message: string) => void;
  observers: Observers;
  /** Keyed by session and change id: a repeat during the first call shares its promise. */
  starting: Map<string, Promise<StartResponse>>;
  completing: Map<string, Promise<CompleteResponse>>;
  /** Contents of answered completions still being written. */
  fills: ContentFills;
}

export function createContext(deps: RecorderDeps): RecorderContext {
  const log = deps.log ?? ((m: string) => void process.stderr.write(`rundiff: ${m}\n`));
  return {
    config: deps.config,
    store: deps.store,
    engine: deps.engine,
    emitter: deps.emitter,
    now: deps.now ?? Date.now,
    log,
    observers: createObservers(deps.observers ?? [], log),
    starting: new Map(),
    completing: new Map(),
    fills: createContentFills(log),
  };
}

export const inFlightKey = (sessionId: string, changeId: string) => `${sessionId}\u0000${changeId}`;

/** Shares the in-flight promise of a key, so a repeat during the first call answers the same. */
export function once<T>(map: Map<string, Promise<T>>, key: string, work: () => Promise<T>): Promise<T> {
  const inflight = map.get(key);
  if (inflight) return inflight;
  const p = work().finally(() => map.delete(key));
  map.set(key, p);
  return p;
}

/**
 * rundiff for Node runtimes: record runs in-process (`createRundiff`) with the same validation and
 * answers as `POST /api/bridge/events`, or start the whole server (`createServer`).
 */
import type {
  BridgeEvent,
  CompleteResponse,
  Limits,
  MessageEvent,
  MessageResponse,
  RunFinishedEvent,
  RunStartedEvent,
  SessionUpsertEvent,
  SessionUpsertResponse,
  StartResponse,
  ToolCompletedEvent,
  ToolStartedEvent,
} from '../shared/index.ts';
import { createEngine } from './checkpoint/index.ts';
import { closeGitHelper } from './git/index.ts';
import { resolveConfig, type Config } from './config.ts';
import { backgroundJobs, startJobs } from './jobs/index.ts';
import { createRecorder, parseBridgeEvent, silentEmitter, type RecorderEmitter } from './runs/index.ts';
import { openStore, type SqliteStore } from './store/index.ts';

export { createServer, type RunningServer, type ServerOptions, type ServerContext } from './main.ts';
export { resolveConfig, type Config } from './config.ts';
export { AppError } from './errors.ts';
export type * from '../shared/index.ts';

type Fields<E> = Omit<E, 'type'>;

export interface RundiffOptions {
  /** SQLite file. Default: RUNDIFF_DB, else $XDG_DATA_HOME/rundiff/rundiff.db. */
  db?: string;
  /** Bounds to override (docs/contract.md section 7); the rest come from the environment or defaults. */
  limits?: Partial<Limits>;
  /** Environment to read RUNDIFF_* settings from. Default process.env. */
  env?: Record<string, string | undefined>;
  /** Receives the socket events a server would send (none by default). */
  emitter?: RecorderEmitter;
  /** Clock (ms). Default Date.now. */
  now?: () => number;
}

/** One function per bridge event type; each validates like the HTTP bridge (throws AppError `invalid_input`). */
export interface Rundiff {
  sessionUpsert(e: Fields<SessionUpsertEvent>): Promise<SessionUpsertResponse>;
  message(e: Fields<MessageEvent>): Promise<MessageResponse>;
  runStarted(e: Fields<RunStartedEvent>): Promise<StartResponse>;
  toolStarted(e: Fields<ToolStartedEvent>): Promise<StartResponse>;
  toolCompleted(e: Fields<ToolCompletedEvent>): Promise<CompleteResponse>;
  runCompleted(e: Fields<RunFinishedEvent>): Promise<CompleteResponse>;
  runFailed(e: Fields<RunFinishedEvent>): Promise<CompleteResponse>;
  /** Any event with its `type`, as the HTTP bridge takes it; answers what the HTTP bridge answers. */
  handle(event: unknown): Promise<unknown>;
  readonly config: Readonly<Config>;
  readonly store: SqliteStore;
  /** Stops timers, drops live checkpoints, stops the git helper process and closes the database. */
  close(): Promise<void>;
}

/** Records runs straight into the database, without a server (also `rundiff run`'s offline mode). */
export function createRundiff(opts: RundiffOptions = {}): Rundiff {
  const config = resolveConfig(
    { ...(opts.db !== undefined ? { db: opts.db } : {}), ...(opts.limits ? { limits: opts.limits } : {}) },
    opts.env ?? process.env,
  );
  const store = openStore(config.dbPath);
  const engine = createEngine({
    limits: config.limits,
    dbPath: config.dbPath,
    watchCheckpoints: config.watchCheckpoints,
    ...(opts.now ? { now: opts.now } : {}),
  });
  const recorder = createRecorder({
    config,
    store,
    engine,
    emitter: opts.emitter ?? silentEmitter,
    ...(opts.now ? { now: opts.now } : {}),
  });
  const jobs = startJobs(
    backgroundJobs({
      engine,
      checkpointTtlMs: config.limits.checkpointTtlMs,
      liveFeed: null,
      sweepOld: () => recorder.sweepOld(),
    }),
    { log: (m) => void process.stderr.write(`rundiff: ${m}\n`) },
  );
  const run = async <T>(type: BridgeEvent['type'], e: object): Promise<T> =>
    (await recorder.handle(parseBridgeEvent({ ...e, type }))) as T;
  let closing: Promise<void> | null = null;
  return {
    sessionUpsert: (e) => run('session.upsert', e),
    message: (e) => run('message', e),
    runStarted: (e) => run('run.started', e),
    toolStarted: (e) => run('tool.started', e),
    toolCompleted: (e) => run('tool.completed', e),
    runCompleted: (e) => run('run.completed', e),
    runFailed: (e) => run('run.failed', e),
    handle: async (event) => recorder.handle(parseBridgeEvent(event)),
    config,
    store,
    close: () =>
      (closing ??= (async () => {
        jobs.stop();
        await engine.close();
        await closeGitHelper();
        await store.close();
      })()),
  };
}

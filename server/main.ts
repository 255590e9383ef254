import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Router } from 'express';
import type { AgentSetupNotice } from '../shared/index.ts';
import type { Config, HttpTimeouts } from './config.ts';
import {
  createLiveFeedObserver,
  heldInotifyWatches,
  systemWatchLimit,
  type FeedBudget,
  type LiveFeed,
} from './live/index.ts';
import { AppError } from './errors.ts';
import { createApp, toolsRouter } from './api/index.ts';
import { isLoopbackHost, type SecurityPolicy } from './security/index.ts';
import { createApprovals, type Approvals } from './approvals/index.ts';
import { createEngine } from './checkpoint/index.ts';
import { closeGitHelper } from './git/index.ts';
import type { CheckpointEngine } from './checkpoint/types.ts';
import { backgroundJobs, startJobs, type JobTimers, type RunningJobs } from './jobs/index.ts';
import { createRecorder, createHistory, type Recorder, type History, type RunObserver } from './runs/index.ts';
import { createReverter, type Reverter } from './revert/index.ts';
import { createReviews, type Reviews } from './review/index.ts';
import { createSocketServer, shareEventsThroughPostgres, type Replicas, type SocketServer } from './socket/index.ts';
import { openStoreFrom, sqliteDbOf, startWalCheckpointer, type Store } from './store/index.ts';
import { createCallLog, type CallLog } from './tools-log/index.ts';
import { createEdgeIngest, createShipper, edgeTokens, type Shipper, type ShipperDeps } from './edge/index.ts';

/** What `createServer` needs besides the config; everything optional. */
export interface ServerOptions {
  /** Clock (ms) for the recorder and retention; tests pass a fake. Default Date.now. */
  now?: () => number;
  /** The built web UI folder. Default `dist/web`. */
  webDir?: string;
  /** Builds the git tools' routes, mounted at `/api/tools` behind the same guards. Default: `toolsRouter`. */
  toolsRouter?: (ctx: ServerContext) => Router;
  /** Told when checkpoints are taken and runs close (the live feed). */
  observers?: (ctx: ServerContext) => RunObserver[];
  /** When a watched run is checked periodically instead (events per window, tracked paths) and the pace of the checks. Defaults in server/live. */
  liveFeedBudget?: FeedBudget;
  /** How often the age sweep runs (ms). Default hourly. */
  retentionIntervalMs?: number;
  /** Timers of the background jobs; tests pass a fake clock. Default Node's (unref'd). */
  jobTimers?: JobTimers;
  log?: (message: string) => void;
  /** The scan worker module (tests use one whose walks really block). Default the real one. */
  scanWorkerUrl?: URL;
  /** Tests: idle scan workers outlive this server for the next one in the process (`ScannerOptions.reuseWorkers`). */
  reuseScanWorkers?: boolean;
  /** The shipper's pace with `--upstream` (tests shorten the waits). Defaults in server/edge. */
  shipper?: Pick<ShipperDeps, 'idleMs' | 'minBackoffMs' | 'maxBackoffMs' | 'bounds' | 'parallel'>;
  /** The most agent sessions whose hook state is followed at once (tests pass a tiny one). Default 1,000. */
  hookMaxSessions?: number;
  /** What keeps agents' runs from being recorded on this machine (`rundiff serve` looks at Codex's hook trust). Default none. */
  agentNotices?: () => AgentSetupNotice[];
}

/** The parts of a running server that other modules (and tests) reach. */
export interface ServerContext {
  config: Readonly<Config>;
  store: Store;
  engine: CheckpointEngine;
  recorder: Recorder;
  history: History;
  socket: SocketServer;
  /** The git tools' call log. */
  callLog: CallLog;
  /** Commit plans waiting for a person (`--require-commit-approval`). */
  approvals: Approvals;
  /** Undoing stored changes. */
  reverter: Reverter;
  /** Review comments and their delivery to the agent. */
  reviews: Reviews;
}

export interface RunningServer extends ServerContext {
  /** `http://host:port` as a client reaches it. */
  url: string;
  port: number;
  /** The live socket.io server (approval and progress events use `socket.emitToSession` / `emitToSessionsList`). */
  io: SocketServer['io'];
  /** The background jobs (checkpoint TTL, live feed, retention), started after listen, stopped on close. */
  jobs: RunningJobs;
  /** The live touched-files feed (its `handles()` say what it holds open). */
  liveFeed: LiveFeed;
  /** Sends stored results to the centre (`--upstream`); null on a server of its own. */
  shipper: Shipper | null;
  close(): Promise<void>;
}

/** Refuses a bind a stranger could reach unless a token guards it (docs/contract.md section 6). */
export function assertSafeBind(config: Pick<Config, 'host' | 'token'>): void {
  if (!isLoopbackHost(config.host) && !config.token) {
    throw new AppError('invalid_input', `refusing to listen on ${config.host} without a token`, {
      hint: 'set RUNDIFF_TOKEN to a secret (every client then sends it), or bind 127.0.0.1',
    });
  }
}

/**
 * Node's slow-client bounds from the config. Node looks for overdue requests only every
 * `connectionsCheckingInterval` (30 s by default), so the interval follows the shortest timeout.
 */
export function httpServerOptions(t: Readonly<HttpTimeouts>): http.ServerOptions {
  return {
    requestTimeout: t.requestTimeoutMs,
    headersTimeout: t.headersTimeoutMs,
    keepAliveTimeout: t.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(t.headersTimeoutMs / 4))),
  };
}

/** How long shutdown waits for answered completions' contents to be written (ms). */
const CONTENT_FILL_CLOSE_MS = 2_000;

/** Resolves when `p` settles or after `ms`, whichever is first. */
function waitAtMost(ms: number, p: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.then(
      () => undefined,
      () => undefined,
    ),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
  ]).finally(() => clearTimeout(timer));
}

const urlHost = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

/**
 * What a start opened, closed in reverse: each resource pushes its close as it opens, and a start
 * that fails part way and `close()` run the same stack. Each close runs once; one that fails does
 * not keep the others from running.
 */
export interface CloserStack {
  push(name: string, close: () => unknown): void;
  /**
   * Runs every close, the last pushed first, and logs each failure; rejects afterwards naming all
   * that failed. A second call returns the first call's promise.
   */
  close(): Promise<void>;
}

export function createCloserStack(log: (message: string) => void): CloserStack {
  const stack: { name: string; close: () => unknown }[] = [];
  let closing: Promise<void> | null = null;
  return {
    push(name, close) {
      if (closing) throw new Error(`${name} opened while the server closes`);
      stack.push({ name, close });
    },
    close: () =>
      (closing ??= (async () => {
        const failed: Error[] = [];
        for (const { name, close } of stack.splice(0).reverse()) {
          try {
            await close();
          } catch (err) {
            const message = err instanceof Error ? err.message : String(err);
            log(`${name} close failed: ${message}`);
            failed.push(new Error(`${name}: ${message}`, { cause: err }));
          }
        }
        if (failed.length > 0)
          throw new AggregateError(failed, `closing failed: ${failed.map((e) => e.message).join('; ')}`);
      })()),
  };
}

/** Composition root: config -> store -> engine -> recorder -> http/socket. Resolves once listening. */
export async function createServer(config: Readonly<Config>, opts: ServerOptions = {}): Promise<RunningServer> {
  assertSafeBind(config);
  const log = opts.log ?? ((m: string) => void process.stderr.write(`rundiff: ${m}\n`));
  const closers = createCloserStack(log);
  try {
    return await startServer(config, opts, log, closers);
  } catch (err) {
    // What opened before the failure closes in the order `close()` would close it.
    await closers.close().catch(() => undefined /* each failure is logged */);
    throw err;
  }
}

async function startServer(
  config: Readonly<Config>,
  opts: ServerOptions,
  log: (message: string) => void,
  closers: CloserStack,
): Promise<RunningServer> {
  const store = await openStoreFrom(config);
  closers.push('store', () => store.close());
  // File rows stored from now on index this much of their patch (docs/contract.md, "Search").
  await store.search.setPatchChars(config.limits.searchPatchChars);
  // SQLite's WAL checkpoints run in a thread of their own, not inside a completion's commit.
  const sqlite = sqliteDbOf(store);
  const checkpointer = sqlite ? startWalCheckpointer(sqlite, { log }) : null;
  if (checkpointer) closers.push('WAL checkpointer', () => checkpointer.close());
  // Contents of answered completions still being written get a bounded wait before the database
  // closes (what is not written stays `pending`, and says so). Pushed here so that it runs once the
  // HTTP server has drained and before the store closes.
  let recorder: Recorder | null = null;
  closers.push('answered contents', () => recorder && waitAtMost(CONTENT_FILL_CLOSE_MS, recorder.contentsIdle()));

  // The request handler exists before socket.io attaches: socket.io wraps the listeners present at
  // attach time and keeps its own /socket.io/ requests (long-polling) away from them. A listener
  // added later would also answer those requests (ERR_HTTP_HEADERS_SENT).
  let handler: http.RequestListener = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const httpServer = http.createServer(httpServerOptions(config.http), (req, res) => handler(req, res));
  let port = config.port;
  const policy: SecurityPolicy = {
    bindHost: config.host,
    allowedHosts: config.allowedHosts,
    token: config.token,
    port: () => port,
  };
  const socket = createSocketServer(httpServer, policy);
  // On PostgreSQL the server may be one of several replicas: events reach the subscribers of all.
  // Their pool closes after socket.io, whose adapter stops listening on it when it closes.
  let replicas: Replicas | null = null;
  closers.push('HTTP and socket.io server', async () => {
    httpServer.closeAllConnections();
    // The git helper process: running calls get up to 1 s, then it is told to stop (up to 1 s
    // more, then killed), well inside the serve command's 5 s close budget.
    await Promise.all([socket.close() /* also closes the HTTP server */, closeGitHelper()]);
    await replicas?.close();
    httpServer.closeAllConnections(); // keep-alive connections that arrived meanwhile
  });
  if (store.engine === 'postgres' && config.databaseUrl !== null)
    replicas = await shareEventsThroughPostgres(socket.io, config.databaseUrl, log);

  const engine = createEngine({
    limits: config.limits,
    dbPath: config.dbPath,
    log,
    watchCheckpoints: config.watchCheckpoints,
    ...(opts.now ? { now: opts.now } : {}),
    scanner: {
      log,
      ...(opts.scanWorkerUrl ? { workerUrl: opts.scanWorkerUrl } : {}),
      ...(opts.reuseScanWorkers ? { reuseWorkers: true } : {}),
    },
  });
  // Scans close before the HTTP server drains: their workers are terminated (bounded wait), so no
  // request waits on them.
  closers.push('checkpoint engine', () => engine.close());
  recorder = createRecorder({
    config,
    store,
    engine,
    emitter: socket.emitter,
    log,
    ...(opts.now ? { now: opts.now } : {}),
  });
  const approvals = createApprovals({
    timeoutMs: config.approvalTimeoutMs,
    requested: (p) => socket.emitToSessionsList('tool.approval.requested', p),
    resolved: (p) => socket.emitToSessionsList('tool.approval.resolved', p),
    ...(opts.now ? { now: opts.now } : {}),
  });
  closers.push('commit approvals', () => approvals.close());
  const ctx: ServerContext = {
    config,
    store,
    engine,
    recorder,
    history: createHistory(store, config.limits),
    socket,
    callLog: createCallLog(store),
    approvals,
    reverter: createReverter({ store, recorder, engine, config, log }),
    reviews: createReviews({ store, emitter: socket.emitter, ...(opts.now ? { now: opts.now } : {}) }),
  };
  const shipper = await startingShipper(config, store, log, opts.shipper);
  if (shipper) closers.push('shipper', () => shipper.stop());
  // The live touched-files feed of open runs (provisional: the stored delta comes from the scan).
  const live = createLiveFeedObserver({
    maxWatches: config.limits.liveFeedMaxWatches,
    dbPath: config.dbPath,
    emit: (p) => socket.emitToSession(p.session_id, 'workspace.diff.progress', p),
    hasCheckpoint: (sessionId, changeId) => engine.has(sessionId, changeId),
    ...(opts.liveFeedBudget ? { budget: opts.liveFeedBudget } : {}),
    changedSoFar: async (sessionId, changeId) => {
      const d = await engine.peek(sessionId, changeId);
      return d ? d.files.flatMap((f) => (f.old_path !== null ? [f.path, f.old_path] : [f.path])) : null;
    },
    log,
  });
  closers.push('live feed', () => live.close());
  recorder.addObservers([live.observer]);
  // Observers are built with the whole context (they may emit through the socket).
  if (opts.observers) recorder.addObservers(opts.observers(ctx));
  handler = createApp({
    recorder,
    history: ctx.history,
    policy,
    maxBodyBytes: config.limits.maxBodyBytes,
    reverter: ctx.reverter,
    reviews: ctx.reviews,
    netChange: { store, limits: config.limits },
    contentStats: () => store.contents.stats(config.limits.contentStoreMaxBytes),
    inotifyStats: () => {
      const watches = heldInotifyWatches();
      return watches === null ? null : { watches, limit: systemWatchLimit() };
    },
    edgeCentre: {
      tokens: edgeTokens(config.edge.acceptedEdges),
      maxBatchBytes: config.edge.maxBatchBytes,
      ingest: createEdgeIngest({
        store,
        emitter: socket.emitter,
        now: opts.now ?? Date.now,
        maxContentBytes: config.limits.maxContentFileBytes,
        contentMaxBytes: config.limits.contentStoreMaxBytes,
        log,
      }),
    },
    ...(shipper ? { edgeStatus: () => shipper.status() } : {}),
    log,
    ...(opts.webDir ? { webDir: opts.webDir } : {}),
    ...(opts.hookMaxSessions !== undefined ? { hookMaxSessions: opts.hookMaxSessions } : {}),
    ...(opts.agentNotices ? { agentNotices: opts.agentNotices } : {}),
    toolsRouter: opts.toolsRouter ? opts.toolsRouter(ctx) : toolsRouter({ ...ctx, log, now: opts.now ?? Date.now }),
  });

  try {
    await new Promise<void>((resolve, reject) => {
      httpServer.once('error', reject);
      httpServer.listen(config.port, config.host, () => {
        httpServer.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE')
      throw new AppError('invalid_input', `port ${config.port} on ${config.host} is in use`, {
        hint: 'pick another with --port',
      });
    throw err;
  }
  port = (httpServer.address() as AddressInfo).port;
  const sweeping = recorder;
  const jobs = startJobs(
    backgroundJobs({
      engine,
      checkpointTtlMs: config.limits.checkpointTtlMs,
      liveFeed: live,
      sweepOld: () => sweeping.sweepOld(),
      ...(opts.retentionIntervalMs ? { retentionIntervalMs: opts.retentionIntervalMs } : {}),
    }),
    { log, ...(opts.jobTimers ? { timers: opts.jobTimers } : {}) },
  );
  closers.push('background jobs', () => jobs.stop());
  shipper?.start();

  return {
    ...ctx,
    url: `http://${urlHost(config.host)}:${port}`,
    port,
    io: socket.io,
    jobs,
    liveFeed: live.feed,
    shipper,
    close: () => closers.close(),
  };
}

/**
 * With `--upstream`: attaches the database to its centre (from now on every stored result is noted
 * in the outbox, and the history stored before is noted once) and builds the shipper, started
 * after listen. Without it, a database attached before keeps noting (a later `--upstream` sends
 * it all), and the log says what waits.
 */
async function startingShipper(
  config: Readonly<Config>,
  store: Store,
  log: (m: string) => void,
  pace: ServerOptions['shipper'],
): Promise<Shipper | null> {
  const { upstream, upstreamToken } = config.edge;
  const outbox = store.outbox;
  if (upstream === null || upstreamToken === null) {
    if (outbox && (await outbox.attached())) {
      const s = await outbox.status();
      if (s.pending_entries > 0)
        log(`${s.pending_entries} stored results wait for an upstream; start with --upstream URL to send them`);
    }
    return null;
  }
  if (!outbox)
    throw new AppError(
      'invalid_input',
      '--upstream needs the SQLite store: an edge keeps its outbox in its own database',
      {
        hint: 'run the edge on its local SQLite file (RUNDIFF_DB) and point --upstream at the centre',
      },
    );
  if (!(await outbox.attached())) {
    await outbox.attach();
    log(`database attached to ${upstream}: every stored result (and the history stored before) goes there`);
  }
  if (upstream.startsWith('http:') && !/^http:\/\/(127\.|localhost[:/]|\[::1\])/.test(`${upstream}/`))
    log(`warning: ${upstream} is plain http; the edge token and the results travel unencrypted`);
  return createShipper({
    outbox,
    upstream,
    token: upstreamToken,
    log,
    maxBackoffMs: config.edge.retryMaxMs,
    minBackoffMs: Math.min(500, config.edge.retryMaxMs),
    ...pace,
  });
}

import type { EdgeBatchRequest, EdgeBatchResponse, EdgeOutboxStatus } from '../../shared/index.ts';
import type { BatchBounds, OutboxApi, OutboxBatch } from '../store/index.ts';
import { REMIND_MS, saidOnce } from './said-once.ts';

/**
 * The edge's shipper: sends the outbox to the centre, each session's entries in order (sessions in
 * parallel), in bounded batches, and removes entries only once the centre acknowledged them. While
 * the centre is unreachable it waits longer after each failure (up to `maxBackoffMs`); a session the
 * centre refuses (its id taken by another edge, a batch it will not accept) is held back alone, so
 * the others go on. It keeps no state of its own: after a restart it goes on from the outbox (which
 * also keeps when the centre last acknowledged a batch).
 */

export interface ShipperTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface ShipperDeps {
  outbox: OutboxApi;
  /** The centre's base URL (`http(s)://host:port`). */
  upstream: string;
  token: string;
  log: (message: string) => void;
  now?: () => number;
  bounds?: BatchBounds;
  /** Sessions sent at the same time. Default 2. */
  parallel?: number;
  /** Pause between looks at an empty outbox (ms). Default 500. */
  idleMs?: number;
  /** First and longest wait after a failure (ms). Defaults 500 and 30,000. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** One request's time limit (ms). Default 60,000. */
  requestTimeoutMs?: number;
  timers?: ShipperTimers;
}

export const DEFAULT_BOUNDS: Readonly<BatchBounds> = Object.freeze({ maxEntries: 500, maxBytes: 4 * 1024 * 1024 });

/** A failure the whole shipper waits out (the centre down, the token refused) or one session's. */
class SendFailure extends Error {
  constructor(
    message: string,
    readonly scope: 'all' | 'session',
    /** What kind of refusal this is, for the log: the same kind told in other words is no news. */
    readonly kind: string = message,
  ) {
    super(message);
  }
}

/** The centre lacks contents the batch refers to (the edge's record of what it sent was wrong). */
class MissingBlobs extends Error {
  constructor(readonly missing: string[]) {
    super('missing blobs');
  }
}

/** A connection cut under a request once made (not a centre that cannot be reached at all). */
const CUT: ReadonlySet<string> = new Set(['EPIPE', 'ECONNRESET', 'UND_ERR_SOCKET']);

interface ErrorAnswer {
  error?: { code?: string; message?: string; hint?: string; details?: { missing_blobs?: unknown } };
}

export function createShipper(deps: ShipperDeps) {
  const now = deps.now ?? Date.now;
  const bounds = deps.bounds ?? DEFAULT_BOUNDS;
  const parallel = deps.parallel ?? 2;
  const idleMs = deps.idleMs ?? 500;
  const minBackoff = deps.minBackoffMs ?? 500;
  const maxBackoff = deps.maxBackoffMs ?? 30_000;
  const timers: ShipperTimers = deps.timers ?? {
    setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
    clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
  };
  const url = `${deps.upstream}/api/edge/batches`;

  let stopped = true;
  let timer: unknown = null;
  let running: Promise<void> | null = null;
  let failures = 0;
  let lastError: string | null = null;
  /** Sessions the centre refused, with when to try them again. */
  const held = new Map<string, { until: number; failures: number }>();
  /** What the log said of each held session (said when it starts, changes or ends; reminded hourly). */
  const heldSaid = saidOnce(now, REMIND_MS);
  const inFlight = new Set<AbortController>();

  const backoff = (n: number) => Math.min(maxBackoff, minBackoff * 2 ** Math.max(0, n - 1));

  async function post(request: EdgeBatchRequest): Promise<EdgeBatchResponse> {
    const body = JSON.stringify(request);
    const bytes = Buffer.byteLength(body);
    const abort = new AbortController();
    inFlight.add(abort);
    const limit = timers.setTimeout(() => abort.abort(), deps.requestTimeoutMs ?? 60_000);
    try {
      let res: Response;
      try {
        res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${deps.token}` },
          body,
          signal: abort.signal,
        });
      } catch (err) {
        const cause = (err as { cause?: { code?: string } }).cause?.code;
        // Connected, then cut while the batch was on its way and no answer read: a centre refusing
        // the body's size answers 413 and closes while the edge still writes (the answer can be
        // lost with the connection). The centre is up, so this session waits alone.
        if (cause !== undefined && CUT.has(cause) && !abort.signal.aborted)
          throw new SendFailure(
            `the centre closed the connection while a batch of ${bytes} bytes was being sent (${cause}), ` +
              'without an answer: the body was refused or cut (a centre refuses a batch over its ' +
              'RUNDIFF_EDGE_MAX_BATCH_BYTES)',
            'session',
            // The same refusal as a 413 whose answer was read: one condition, one log line.
            'payload_too_large',
          );
        throw new SendFailure(`centre unreachable (${cause ?? (err as Error).message})`, 'all');
      }
      const text = await res.text().catch(() => '');
      if (res.ok) return JSON.parse(text) as EdgeBatchResponse;
      let answer: ErrorAnswer = {};
      try {
        answer = JSON.parse(text) as ErrorAnswer;
      } catch {
        // Not one of ours (a proxy's page): the status says enough.
      }
      const code = answer.error?.code ?? `http_${res.status}`;
      const missing = answer.error?.details?.missing_blobs;
      if (code === 'missing_blobs' && Array.isArray(missing)) throw new MissingBlobs(missing.map(String));
      const hint = answer.error?.hint ? ` (${answer.error.hint})` : '';
      const what = `centre answered ${res.status} ${code}: ${answer.error?.message ?? ''}${hint}`.trim();
      // A refused token or a centre failing as a whole stops everything; the rest is this batch's.
      const scope =
        res.status === 401 || res.status === 403 || res.status >= 500 || res.status === 404 ? 'all' : 'session';
      throw new SendFailure(what, scope, code);
    } finally {
      timers.clearTimeout(limit);
      inFlight.delete(abort);
    }
  }

  async function sendOne(batch: OutboxBatch): Promise<void> {
    const body: EdgeBatchRequest = {
      database_id: await deps.outbox.databaseId(),
      session_id: batch.sessionId,
      read_seq: batch.readSeq,
      entries: batch.entries,
      blobs: batch.blobs,
    };
    await post(body);
    await deps.outbox.acknowledge(
      batch.seqs,
      batch.blobs.map((b) => b.sha256),
      now(),
    );
  }

  /** Sends the session's oldest batch; true when something was acknowledged. */
  async function sendSession(sessionId: string): Promise<boolean> {
    const batch = await deps.outbox.read(sessionId, bounds);
    // A part of a large contents entry acknowledges contents, not entries: progress all the same.
    if (batch.entries.length === 0) return false;
    try {
      await sendOne(batch);
    } catch (err) {
      if (!(err instanceof MissingBlobs)) throw err;
      // The hint was wrong (the centre lost or never kept them): read again, now with the contents.
      await deps.outbox.forgetBlobs(err.missing);
      await sendOne(await deps.outbox.read(sessionId, bounds));
    }
    held.delete(sessionId);
    if (heldSaid.clear(sessionId)) deps.log(`upstream: session ${JSON.stringify(sessionId)} accepted again`);
    return true;
  }

  async function round(): Promise<'sent' | 'idle' | 'failed'> {
    const t = now();
    const candidates = await deps.outbox.pendingSessions(parallel + held.size);
    const ready = candidates.filter((s) => (held.get(s)?.until ?? 0) <= t).slice(0, parallel);
    if (ready.length === 0) return 'idle';
    const results = await Promise.allSettled(ready.map(sendSession));
    // Stopped meanwhile: the requests were abandoned on purpose, which is no failure to report.
    if (stopped) return 'idle';
    let failedAll: SendFailure | null = null;
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') return;
      const err = r.reason as Error;
      if (err instanceof SendFailure && err.scope === 'session') {
        const h = held.get(ready[i]!) ?? { until: 0, failures: 0 };
        h.failures++;
        h.until = t + backoff(h.failures + 4);
        held.set(ready[i]!, h);
        if (heldSaid.says(ready[i]!, err.kind))
          deps.log(`upstream: session ${JSON.stringify(ready[i])} held back (${h.failures} tries): ${err.message}`);
        lastError = err.message;
      } else failedAll = err instanceof SendFailure ? err : new SendFailure(err.message, 'all');
    });
    if (failedAll !== null) {
      const msg = (failedAll as SendFailure).message;
      if (failures === 0 || msg !== lastError) deps.log(`upstream: ${msg}; outbox kept, retrying`);
      lastError = msg;
      return 'failed';
    }
    if (results.some((r) => r.status === 'fulfilled')) {
      if (failures > 0) deps.log('upstream: reachable again, sending the outbox');
      failures = 0;
      if (held.size === 0) lastError = null;
    }
    return 'sent';
  }

  function schedule(ms: number): void {
    if (stopped) return;
    timer = timers.setTimeout(() => {
      timer = null;
      running = (async () => {
        let next: number;
        try {
          const r = await round();
          if (r === 'failed') next = backoff(++failures);
          else next = r === 'sent' ? 0 : idleMs;
        } catch (err) {
          // The local database failed: logged, and tried again like an unreachable centre.
          lastError = `outbox read failed: ${(err as Error).message}`;
          deps.log(`upstream: ${lastError}`);
          next = backoff(++failures);
        }
        running = null;
        schedule(next);
      })();
    }, ms);
  }

  return {
    start(): void {
      if (!stopped) return;
      stopped = false;
      schedule(0);
    },
    /** Stops sending (a request in flight is abandoned: its entries stay and go again next time). */
    async stop(): Promise<void> {
      stopped = true;
      if (timer !== null) timers.clearTimeout(timer);
      timer = null;
      for (const a of inFlight) a.abort();
      await running;
    },
    async status(): Promise<EdgeOutboxStatus> {
      const s = await deps.outbox.status();
      // last_sent_at is kept in the edge's database: it survives a restart.
      return { upstream: deps.upstream, ...s, last_error: lastError };
    },
  };
}

export type Shipper = ReturnType<typeof createShipper>;

import type { EdgeBatchResponse, Run, ToolCall } from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import { diffCompletedPayload, type RecorderEmitter } from '../runs/index.ts';
import type { IngestEffect, Store } from '../store/index.ts';
import { parseEdgeBatch } from './batch-schema.ts';
import { REMIND_MS, saidOnce } from './said-once.ts';

/**
 * The centre's handling of one edge batch: validated whole, applied in one transaction, then told
 * to the centre's subscribers with the events a local run would have sent, so a page open on the
 * centre follows an edge's runs live.
 */
export interface EdgeIngestDeps {
  store: Store;
  emitter: RecorderEmitter;
  now: () => number;
  /** Largest content accepted (each side of a file, raw bytes). */
  maxContentBytes: number;
  /** The centre's content budget (`RUNDIFF_CONTENT_STORE_MAX_BYTES`). */
  contentMaxBytes: number;
  log: (message: string) => void;
}

export function createEdgeIngest(deps: EdgeIngestDeps) {
  const { store, emitter } = deps;
  const refusals = saidOnce(deps.now, REMIND_MS);

  /** The terminal event of a finished run or tool call. */
  function emitTerminal(sessionId: string, kind: 'run' | 'tool_call', record: Run | ToolCall): void {
    if (kind === 'tool_call')
      emitter.toSession(sessionId, 'tool.completed', { session_id: sessionId, tool_call: record as ToolCall });
    else
      emitter.toSession(sessionId, record.status === 'failed' ? 'run.failed' : 'run.completed', {
        session_id: sessionId,
        run: record as Run,
      });
  }

  /**
   * Events in the order the contract gives (started, then its change's `workspace.diff.completed`,
   * then the terminal event), whatever order the entries came in: the outbox sends a row once, at its
   * first note, so a run's entry (started and finished) may precede its change, in this batch or one
   * before. A terminal event whose change the edge holds (`change_stored`) waits for that change and
   * follows its diff event; the database is the only state, so this holds across batches and restarts.
   */
  async function emitEffects(
    sessionId: string,
    effects: readonly IngestEffect[],
    changeStored: ReadonlySet<number>,
  ): Promise<void> {
    let sessionTouched = false;
    let viewedCause: 'marked' | 'unmarked' | null = null;
    const changeCreatedAt = new Map<string, number>();
    effects.forEach((e, i) => {
      if (e.kind === 'change' && e.action === 'created') changeCreatedAt.set(e.item, i);
    });
    const told = (e: IngestEffect) => e.action === 'created' || e.action === 'updated';
    /** The run or tool call a change belongs to (its id names it), unless its own entry follows in this batch. */
    async function waitingOn(changeId: string, at: number): Promise<void> {
      const m = /^(run|tool):(.+)$/s.exec(changeId);
      if (!m) return;
      const kind = m[1] === 'run' ? 'run' : 'tool_call';
      const id = m[2]!;
      if (effects.some((e, i) => i > at && e.kind === kind && e.item === id && told(e))) return;
      const rec = await store.runs.get(kind === 'run' ? 'run' : 'tool', sessionId, id);
      if (rec && rec.record.status !== 'running' && rec.record.change_id === changeId)
        emitTerminal(sessionId, kind, rec.record);
    }
    /** A finished record's terminal event is told now unless its change is still to come. */
    async function changeToCome(e: IngestEffect, at: number, changeId: string): Promise<boolean> {
      if (!changeStored.has(e.id)) return false;
      const created = changeCreatedAt.get(changeId);
      if (created !== undefined) return created > at;
      return (await store.changes.get(sessionId, changeId)) === null;
    }
    for (const [i, e] of effects.entries()) {
      if (e.action === 'unchanged' && e.kind === 'change') {
        // Gone on the edge before it was sent: a terminal event waiting on it is told now.
        if ((await store.changes.get(sessionId, e.item)) === null) await waitingOn(e.item, i);
        continue;
      }
      if (e.action === 'unchanged' || e.action === 'skipped') continue;
      switch (e.kind) {
        case 'session':
        case 'session_deleted':
          if (e.action === 'deleted') {
            emitter.toSessionsList('session.deleted', { session_id: sessionId });
            sessionTouched = false;
          } else sessionTouched = true;
          break;
        case 'message': {
          const message = await store.messages.get(sessionId, e.item);
          if (message)
            emitter.toSession(sessionId, e.action === 'created' ? 'message.created' : 'message.updated', {
              session_id: sessionId,
              message,
            });
          sessionTouched = true;
          break;
        }
        case 'run':
        case 'tool_call': {
          const rec = await store.runs.get(e.kind === 'run' ? 'run' : 'tool', sessionId, e.item);
          if (!rec) break;
          const record = rec.record;
          const started = e.kind === 'run' ? 'run.started' : 'tool.started';
          const payload =
            e.kind === 'run'
              ? { session_id: sessionId, run: record as Run }
              : { session_id: sessionId, tool_call: record as ToolCall };
          // Told once, when the record first arrives (a later update of a running record, its
          // checkpoint taken, is no second start).
          if (e.action === 'created') emitter.toSession(sessionId, started, payload);
          if (record.status !== 'running' && !(await changeToCome(e, i, record.change_id)))
            emitTerminal(sessionId, e.kind, record);
          sessionTouched = true;
          break;
        }
        case 'change': {
          if (e.action !== 'created') break;
          const change = await store.changes.get(sessionId, e.item);
          if (change) emitter.toSession(sessionId, 'workspace.diff.completed', diffCompletedPayload(change));
          await waitingOn(e.item, i);
          sessionTouched = true;
          break;
        }
        case 'viewed':
          viewedCause = e.action === 'deleted' ? (viewedCause ?? 'unmarked') : 'marked';
          break;
        case 'contents':
          break;
      }
    }
    if (viewedCause !== null && (await store.sessions.exists(sessionId))) {
      const state = await store.viewed.list(sessionId);
      emitter.toSession(sessionId, 'viewed.updated', { session_id: sessionId, cause: viewedCause, ...state });
    }
    if (sessionTouched) {
      const session = await store.sessions.get(sessionId);
      if (session) emitter.toSessionsList('session.updated', { session });
    }
  }

  return {
    /** Applies a batch from `edge`; throws an AppError for a refusal (nothing stored then). */
    async handle(edge: string, body: unknown): Promise<EdgeBatchResponse> {
      const batch = parseEdgeBatch(body, { maxContentBytes: deps.maxContentBytes });
      const outcome = await store.ingest.apply({
        edge,
        sessionId: batch.sessionId,
        databaseId: batch.databaseId,
        readSeq: batch.readSeq,
        entries: batch.entries,
        blobs: batch.blobs,
        now: deps.now(),
        contentMaxBytes: deps.contentMaxBytes,
      });
      if (!outcome.ok && outcome.reason === 'missing_blobs')
        throw new AppError(
          'missing_blobs',
          `the batch refers to ${outcome.missing.length} contents this server does not hold`,
          {
            hint: 'send them with the same entries',
            details: { missing_blobs: outcome.missing },
          },
        );
      const key = `${edge}\u0000${batch.sessionId}`;
      if (!outcome.ok) {
        // An edge retries a refused session for ever: said once, then hourly, and when it ends.
        if (refusals.says(key, outcome.owner))
          deps.log(`edge ${edge}: session ${JSON.stringify(batch.sessionId)} refused, it belongs to ${outcome.owner}`);
        throw new AppError(
          'session_conflict',
          `session ${JSON.stringify(batch.sessionId)} belongs to another edge (${outcome.owner})`,
          {
            hint: 'session ids must be unique across edges (agents use UUIDs); this session stays on its edge',
            details: { reason: 'session_owned_elsewhere' },
          },
        );
      }
      if (refusals.clear(key)) deps.log(`edge ${edge}: session ${JSON.stringify(batch.sessionId)} accepted again`);
      await emitEffects(batch.sessionId, outcome.effects, batch.changeStored);
      return {
        applied: outcome.effects.filter((e) => e.action !== 'skipped').map((e) => e.id),
        skipped: outcome.effects.filter((e) => e.action === 'skipped').map((e) => e.id),
      };
    },
  };
}

export type EdgeIngest = ReturnType<typeof createEdgeIngest>;

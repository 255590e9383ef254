import type { EdgeBatchResponse } from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import { diffCompletedPayload, type BridgeEmitter } from '../runs/index.ts';
import type { IngestEffect, Store } from '../store/index.ts';
import { parseEdgeBatch } from './batch-schema.ts';

/**
 * The centre's handling of one edge batch: validated whole, applied in one transaction, then told
 * to the centre's subscribers with the events a local run would have sent, so a page open on the
 * centre follows an edge's runs live.
 */
export interface EdgeIngestDeps {
  store: Store;
  emitter: BridgeEmitter;
  now: () => number;
  /** Largest content accepted (each side of a file, raw bytes). */
  maxContentBytes: number;
  /** The centre's content budget (`RUNDIFF_CONTENT_STORE_MAX_BYTES`). */
  contentMaxBytes: number;
  log: (message: string) => void;
}

export function createEdgeIngest(deps: EdgeIngestDeps) {
  const { store, emitter } = deps;

  async function emitEffects(sessionId: string, effects: readonly IngestEffect[]): Promise<void> {
    let sessionTouched = false;
    let viewedCause: 'marked' | 'unmarked' | null = null;
    for (const e of effects) {
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
        case 'run': {
          const rec = await store.runs.get('run', sessionId, e.item);
          if (!rec) break;
          const run = rec.record;
          if (e.action === 'created' || run.status === 'running')
            emitter.toSession(sessionId, 'run.started', { session_id: sessionId, run });
          if (run.status !== 'running')
            emitter.toSession(sessionId, run.status === 'failed' ? 'run.failed' : 'run.completed', {
              session_id: sessionId,
              run,
            });
          sessionTouched = true;
          break;
        }
        case 'tool_call': {
          const rec = await store.runs.get('tool', sessionId, e.item);
          if (!rec) break;
          const tool_call = rec.record;
          if (e.action === 'created' || tool_call.status === 'running')
            emitter.toSession(sessionId, 'tool.started', { session_id: sessionId, tool_call });
          if (tool_call.status !== 'running')
            emitter.toSession(sessionId, 'tool.completed', { session_id: sessionId, tool_call });
          sessionTouched = true;
          break;
        }
        case 'change': {
          if (e.action !== 'created') break;
          const change = await store.changes.get(sessionId, e.item);
          if (change) emitter.toSession(sessionId, 'workspace.diff.completed', diffCompletedPayload(change));
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
      if (!outcome.ok) {
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
      await emitEffects(batch.sessionId, outcome.effects);
      return {
        applied: outcome.effects.filter((e) => e.action !== 'skipped').map((e) => e.id),
        skipped: outcome.effects.filter((e) => e.action === 'skipped').map((e) => e.id),
      };
    },
  };
}

export type EdgeIngest = ReturnType<typeof createEdgeIngest>;

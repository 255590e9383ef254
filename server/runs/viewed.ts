import type { ViewedCause, ViewedResponse } from '../../shared/index.ts';
import type { MarkOutcome } from '../store/index.ts';
import type { BridgeContext } from './context.ts';

/**
 * Viewed marks from the REST routes: each mark or unmark is stored, then the session's marks go to
 * its subscribers (`viewed.updated`), so every open page shows the same. A mark only exists on a
 * stored file row, so there is nothing to do for an unknown session, change or file but to say so.
 */

/** The session's marks, or null when there is no such session. */
export function listViewed(ctx: BridgeContext, sessionId: string): ViewedResponse | null {
  if (!ctx.store.sessions.exists(sessionId)) return null;
  return ctx.store.viewed.list(sessionId);
}

/** Tells the session's subscribers its marks after `cause`; returns what it sent. */
export function emitViewed(ctx: BridgeContext, sessionId: string, cause: ViewedCause): ViewedResponse {
  const state = ctx.store.viewed.list(sessionId);
  ctx.emitter.toSession(sessionId, 'viewed.updated', { session_id: sessionId, cause, ...state });
  return state;
}

/** Marks (or unmarks) the path of one stored file row; null when the row is not in the session. */
export function setViewed(
  ctx: BridgeContext,
  sessionId: string,
  target: { change_id: string; file_id: string },
  viewed: boolean,
): ViewedResponse | null {
  const { viewed: marks } = ctx.store;
  const outcome: MarkOutcome = viewed
    ? marks.mark(sessionId, target.change_id, target.file_id, ctx.now())
    : marks.unmark(sessionId, target.change_id, target.file_id);
  if (outcome === 'no_such_file') return null;
  if (outcome === 'unchanged') return marks.list(sessionId);
  return emitViewed(ctx, sessionId, viewed ? 'marked' : 'unmarked');
}

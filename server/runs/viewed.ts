import type { ViewedCause, ViewedResponse } from '../../shared/index.ts';
import type { MarkOutcome } from '../store/index.ts';
import type { RecorderContext } from './context.ts';

/**
 * Viewed marks from the REST routes: each mark or unmark is stored, then the session's marks go to
 * its subscribers (`viewed.updated`), so every open page shows the same. A mark only exists on a
 * stored file row, so there is nothing to do for an unknown session, change or file but to say so.
 */

/** The session's marks, or null when there is no such session. */
export async function listViewed(ctx: RecorderContext, sessionId: string): Promise<ViewedResponse | null> {
  if (!(await ctx.store.sessions.exists(sessionId))) return null;
  return ctx.store.viewed.list(sessionId);
}

/** Tells the session's subscribers its marks after `cause`; returns what it sent. */
export async function emitViewed(ctx: RecorderContext, sessionId: string, cause: ViewedCause): Promise<ViewedResponse> {
  const state = await ctx.store.viewed.list(sessionId);
  ctx.emitter.toSession(sessionId, 'viewed.updated', { session_id: sessionId, cause, ...state });
  return state;
}

/** Marks (or unmarks) the path of one stored file row; null when the row is not in the session. */
export async function setViewed(
  ctx: RecorderContext,
  sessionId: string,
  target: { change_id: string; file_id: string },
  viewed: boolean,
): Promise<ViewedResponse | null> {
  const { viewed: marks } = ctx.store;
  const outcome: MarkOutcome = viewed
    ? await marks.mark(sessionId, target.change_id, target.file_id, ctx.now())
    : await marks.unmark(sessionId, target.change_id, target.file_id);
  if (outcome === 'no_such_file') return null;
  if (outcome === 'unchanged') return marks.list(sessionId);
  return emitViewed(ctx, sessionId, viewed ? 'marked' : 'unmarked');
}

import type { SessionUpsertEvent, SessionUpsertResponse } from '../../shared/index.ts';
import type { RecorderContext } from './context.ts';

/** `session.updated` to the sessions list, with the session as stored now (nothing when it is gone). */
export async function emitSession(ctx: RecorderContext, sessionId: string): Promise<void> {
  const session = await ctx.store.sessions.get(sessionId);
  if (session) ctx.emitter.toSessionsList('session.updated', { session });
}

/** `session.upsert`: creates the session or changes only the fields given. */
export async function sessionUpsert(
  ctx: RecorderContext,
  e: Omit<SessionUpsertEvent, 'type'>,
): Promise<SessionUpsertResponse> {
  const fields: { title?: string; workspace?: string } = {};
  if (e.title !== undefined) fields.title = e.title;
  if (e.workspace !== undefined) fields.workspace = e.workspace;
  const session = await ctx.store.transaction(async (tx) => {
    await tx.sessions.upsert(e.session_id, fields, ctx.now());
    return (await tx.sessions.get(e.session_id))!;
  });
  ctx.emitter.toSessionsList('session.updated', { session });
  return { session };
}

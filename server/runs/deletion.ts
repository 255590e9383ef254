import type { RecorderContext } from './context.ts';

/**
 * Deletes a session and everything of it in one transaction, dropping the checkpoints of its open
 * runs and tool calls first; emits `session.deleted`. False when there was no such session.
 */
export async function deleteSession(ctx: RecorderContext, sessionId: string): Promise<boolean> {
  const { store, engine } = ctx;
  for (const changeId of await store.runs.openChangeIds(sessionId)) engine.drop(sessionId, changeId);
  const deleted = await store.transaction((tx) => tx.sessions.delete(sessionId));
  if (deleted) ctx.emitter.toSessionsList('session.deleted', { session_id: sessionId });
  return deleted;
}

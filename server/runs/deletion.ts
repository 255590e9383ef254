import type { BridgeContext } from './context.ts';

/**
 * Deletes a session and everything of it in one transaction, dropping the checkpoints of its open
 * runs and tool calls first; emits `session.deleted`. False when there was no such session.
 */
export function deleteSession(ctx: BridgeContext, sessionId: string): boolean {
  const { store, engine } = ctx;
  for (const changeId of store.runs.openChangeIds(sessionId)) engine.drop(sessionId, changeId);
  const deleted = store.transaction(() => store.sessions.delete(sessionId));
  if (deleted) ctx.emitter.toSessionsList('session.deleted', { session_id: sessionId });
  return deleted;
}

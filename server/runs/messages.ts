import { randomUUID } from 'node:crypto';
import type { MessageEvent, MessageResponse } from '../../shared/index.ts';
import type { RecorderContext } from './context.ts';
import { emitSession } from './sessions.ts';

/**
 * `message`: stores a new message or updates the one with the same id (fields not given are kept),
 * then emits `message.created` or `message.updated`.
 */
export async function message(ctx: RecorderContext, e: Omit<MessageEvent, 'type'>): Promise<MessageResponse> {
  const { store, engine } = ctx;
  const t = ctx.now();
  const sessionId = e.session_id;
  if (e.run_id !== undefined) engine.touch(sessionId, e.run_id);
  const id = e.message_id ?? randomUUID();
  const msg = await store.transaction(async (tx) => {
    await tx.sessions.touch(sessionId, t);
    const existing = await tx.messages.get(sessionId, id);
    const m = {
      id,
      session_id: sessionId,
      role: e.role,
      content: e.content,
      run_id: e.run_id ?? existing?.run_id ?? null,
      tool_call_id: e.tool_call_id ?? existing?.tool_call_id ?? null,
      created_at: e.created_at ?? existing?.created_at ?? t,
    };
    if (existing) await tx.messages.update(m);
    else await tx.messages.insert(m);
    return { message: m, created: !existing };
  });
  ctx.emitter.toSession(sessionId, msg.created ? 'message.created' : 'message.updated', {
    session_id: sessionId,
    message: msg.message,
  });
  await emitSession(ctx, sessionId);
  return { message: msg.message };
}

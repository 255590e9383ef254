import { Router, type RequestHandler } from 'express';
import { bridgeBodyOverLimit } from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import type { OversizeFields } from '../hooks/oversize.ts';
import { parseBridgeEvent, type Recorder } from '../runs/index.ts';
import { tapBody } from './tap-body.ts';

/**
 * `POST /api/bridge/events`: one event per request, validated here, answered by the recorder. A
 * `tool.completed` over the body limit is still refused (413), but the tool call it names is closed
 * without its answer, its ids read as the body streams past (`oversize.ts`): else its checkpoint
 * would keep the workspace busy until the run ends. Nothing else is taken from such a body.
 */
export function bridgeRouter(deps: {
  recorder: Recorder;
  parseBody: RequestHandler;
  log: (m: string) => void;
}): Router {
  const router = Router();
  router.post('/bridge/events', (req, res, next) => {
    const tap = tapBody(req);
    deps.parseBody(req, res, (err?: unknown) => {
      if (err === undefined) {
        Promise.resolve()
          .then(async () => res.json(await deps.recorder.handle(parseBridgeEvent(req.body))))
          .catch(next);
        return;
      }
      if (!(err instanceof AppError && err.code === 'payload_too_large') || tap === null) {
        next(err);
        return;
      }
      tap
        .read()
        .then(async ({ fields, bytes }) => {
          const closed = await closeOversizedTool(deps, fields, bytes);
          next(
            closed === null
              ? err
              : new AppError(err.code, `${err.message}; the tool call ${closed} was closed without its answer`, {
                  ...(err.hint === undefined ? {} : { hint: err.hint }),
                  details: { ...err.details, closed_tool_call_id: closed },
                }),
          );
        })
        .catch((e: unknown) => {
          deps.log(`bridge: an event over the body limit closed nothing: ${String(e)}`);
          next(err);
        });
    });
  });
  return router;
}

/** Closes the tool call an over-limit `tool.completed` names; its id, or null when it names none. */
async function closeOversizedTool(
  deps: { recorder: Recorder; log: (m: string) => void },
  fields: OversizeFields,
  bytes: number,
): Promise<string | null> {
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const sessionId = text(fields.session_id);
  const toolCallId = text(fields.tool_call_id);
  const runId = text(fields.run_id);
  if (fields.type !== 'tool.completed' || !sessionId || !toolCallId) return null;
  await deps.recorder.handle(
    parseBridgeEvent({
      type: 'tool.completed',
      session_id: sessionId,
      ...(runId ? { run_id: runId } : {}),
      tool_call_id: toolCallId,
      error: bridgeBodyOverLimit(bytes),
    }),
  );
  deps.log(`bridge (${sessionId}): an event over the body limit closed the tool call ${toolCallId}`);
  return toolCallId;
}

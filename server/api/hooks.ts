import { Router, type RequestHandler } from 'express';
import { AppError } from '../errors.ts';
import type { HookOutcome, HookRuntime } from '../hooks/index.ts';
import { tapBody } from './tap-body.ts';
import type { Reviews } from '../review/index.ts';

/**
 * `POST /api/hooks/:agent`: an agent's raw hook payload. A known agent always gets 200, whatever
 * happened: a hook must never fail the agent, so failures (a body that does not parse, a refused
 * event) are logged instead. The answer is `{}` (the neutral answer every supported agent reads as
 * "carry on") unless the session has a review waiting and this payload's answer can carry it (the
 * prompt hook of an agent that can add context to a prompt; with `mode: "now"`, a stop hook that can
 * keep the agent going): then it is the agent's own answer shape with the review's text as one JSON
 * string, at most the agent's bound (`HookReply.bound`): the comments that did not fit stay pending and
 * go with the next answer. What was carried is marked delivered once that answer has been sent. The answer waits until
 * every event is stored, so a tool's checkpoint exists before the agent runs the tool. The body goes
 * through the same parser as every route; its errors are caught here rather than answered.
 *
 * A body over the limit still closes what it refers to: beside the parser, the route reads the
 * payload's identifying fields as the body streams past (`tapBody`: the top-level scalars and the
 * nested fields where the agent puts its ids, `oversize.ts`), and once the parser refuses it hands
 * those to the runtime, which only ever closes a tool call or ends a run from them. The answer
 * then waits for the body to be read (at most `OVERSIZE_READ_BYTES`), so the agent is not cut off
 * while it sends.
 */
export function hooksRouter(deps: {
  runtime: HookRuntime;
  parseBody: RequestHandler;
  log: (m: string) => void;
  /** Pending reviews to hand over; absent, every answer is `{}`. */
  reviews?: Pick<Reviews, 'pendingDelivery' | 'markDelivered'>;
}): Router {
  const router = Router();
  router.post('/hooks/:agent', (req, res, next) => {
    const agent = String(req.params.agent);
    if (!deps.runtime.knows(agent)) {
      next(new AppError('not_found', `no hooks for agent ${JSON.stringify(agent)}`));
      return;
    }
    const send = (body: Record<string, unknown>) => {
      if (!req.complete) res.set('Connection', 'close');
      res.status(200).json(body);
    };
    /** The answer for this payload: a pending review in the agent's answer shape, else `{}`. */
    const answer = async (outcome: HookOutcome) => {
      const reply = deps.runtime.replyOf(agent);
      const sessionId = outcome.sessionId;
      if (!reply || !deps.reviews || sessionId === null) return send({});
      let body: Record<string, unknown> = {};
      let delivered: (() => Promise<unknown>) | null = null;
      try {
        const slot = reply.slot(req.body);
        const pending = slot
          ? await deps.reviews.pendingDelivery(sessionId, { nowOnly: slot === 'stop', bound: reply.bound })
          : null;
        if (slot && pending) {
          body = reply.answer(slot, pending.text);
          const parts = pending.parts;
          delivered = () => deps.reviews!.markDelivered(sessionId, parts, 'hook', agent);
        }
      } catch (err) {
        deps.log(`hook ${agent} (${sessionId}): no review sent: ${err instanceof Error ? err.message : String(err)}`);
        body = {};
        delivered = null;
      }
      if (delivered) {
        const mark = delivered;
        // Delivered only once the answer has gone out whole; an agent that went away gets it next time.
        res.once('finish', () => {
          mark().catch((err: unknown) => {
            deps.log(`hook ${agent} (${sessionId}): review sent but not marked delivered: ${String(err)}`);
          });
        });
      }
      send(body);
    };
    const tap = tapBody(req, deps.runtime.overLimitPathsOf(agent));
    deps.parseBody(req, res, (err?: unknown) => {
      if (err !== undefined) {
        deps.log(`hook ${agent}: payload not read: ${err instanceof Error ? err.message : JSON.stringify(err)}`);
        if (!(err instanceof AppError && err.code === 'payload_too_large') || tap === null) {
          send({});
          return;
        }
        tap
          .read()
          .then(({ fields, bytes }) => deps.runtime.closeOversized(agent, fields, bytes))
          .catch((e: unknown) => deps.log(`hook ${agent}: a payload over the limit closed nothing: ${String(e)}`))
          .finally(() => send({}));
        return;
      }
      deps.runtime
        .handle(agent, req.body)
        .then(answer, (e: unknown) => {
          deps.log(`hook ${agent}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
          send({});
        })
        .catch((e: unknown) => deps.log(`hook ${agent}: answer not sent: ${String(e)}`));
    });
  });
  return router;
}

import { Router, type RequestHandler } from 'express';
import { AppError } from '../errors.ts';
import type { HookRuntime } from '../hooks/index.ts';

/**
 * `POST /api/hooks/:agent`: an agent's raw hook payload. A known agent always gets 200 `{}` (the
 * neutral answer every supported agent reads as "carry on"), whatever happened: a hook must never
 * fail or steer the agent, so failures (a body that does not parse, a refused event) are logged
 * instead. The answer waits until every event is stored, so a tool's checkpoint exists before the
 * agent runs the tool. The body goes through the same parser as every route; its errors are caught
 * here rather than answered.
 */
export function hooksRouter(deps: {
  runtime: HookRuntime;
  parseBody: RequestHandler;
  log: (m: string) => void;
}): Router {
  const router = Router();
  router.post('/hooks/:agent', (req, res, next) => {
    const agent = String(req.params.agent);
    if (!deps.runtime.knows(agent)) {
      next(new AppError('not_found', `no hooks for agent ${JSON.stringify(agent)}`));
      return;
    }
    const neutral = () => {
      if (!req.complete) res.set('Connection', 'close');
      res.status(200).json({});
    };
    deps.parseBody(req, res, (err?: unknown) => {
      if (err !== undefined) {
        deps.log(`hook ${agent}: payload not read: ${err instanceof Error ? err.message : String(err)}`);
        neutral();
        return;
      }
      deps.runtime.handle(agent, req.body).then(neutral, (e: unknown) => {
        deps.log(`hook ${agent}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
        neutral();
      });
    });
  });
  return router;
}

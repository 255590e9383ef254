import { Router, type RequestHandler } from 'express';
import type { EdgeOutboxStatus } from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import type { EdgeIngest, EdgeTokens } from '../edge/index.ts';
import { bearerToken } from '../security/index.ts';

/** What a centre needs to accept edges (absent: it accepts none). */
export interface EdgeCentreDeps {
  tokens: EdgeTokens;
  ingest: EdgeIngest;
  maxBatchBytes: number;
}

/**
 * `POST /api/edge/batches`: an edge's batch, accepted only with one of the centre's edge tokens
 * (its own guard: the server's RUNDIFF_TOKEN is for people and local agents, not edges). The token
 * is checked before a byte of the body is read; the body has its own bound.
 */
export function edgeCentreRouter(
  deps: EdgeCentreDeps | undefined,
  parseBody: (limit: number, setting: string) => RequestHandler,
): Router {
  const router = Router();
  const parse = parseBody(deps?.maxBatchBytes ?? 0, 'RUNDIFF_EDGE_MAX_BATCH_BYTES');
  router.post(
    '/batches',
    (req, res, next) => {
      if (!deps || deps.tokens.size === 0) {
        next(
          new AppError('not_found', 'this server accepts no edges', {
            hint: 'on the centre, set RUNDIFF_EDGE_TOKENS=name=token (docs/deployment.md)',
          }),
        );
        return;
      }
      const edge = deps.tokens.edgeOf(bearerToken(req.headers.authorization));
      if (edge === null) {
        next(
          new AppError('unauthorized', 'missing or wrong edge token', {
            hint: 'send Authorization: Bearer <edge token>',
          }),
        );
        return;
      }
      res.locals.edge = edge;
      next();
    },
    parse,
    async (req, res) => {
      res.json(await deps!.ingest.handle(res.locals.edge as string, req.body));
    },
  );
  return router;
}

/** `GET /api/edge/status` on an edge: its outbox and how sending goes (404 on a server without upstream). */
export function edgeStatusRouter(status: (() => Promise<EdgeOutboxStatus>) | undefined): Router {
  const router = Router();
  router.get('/edge/status', async (_req, res) => {
    if (!status)
      throw new AppError('not_found', 'this server sends to no upstream', { hint: 'start it with --upstream URL' });
    res.json(await status());
  });
  return router;
}

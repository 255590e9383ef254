import zlib from 'node:zlib';
import { Router, type Request, type Response } from 'express';
import { AppError } from '../errors.ts';
import type { Bridge, History } from '../runs/index.ts';
import { idParam, intQuery } from './params.ts';

export const SESSIONS_PAGE = { default: 50, max: 200 } as const;
export const MESSAGES_PAGE = { default: 500, max: 1000 } as const;

/** Bodies below this are sent as they are. */
const GZIP_MIN_BYTES = 8 * 1024;
/** gzip of a cached detail body, computed once per body (the history hands out the same Buffer until the session changes). */
const gzipped = new WeakMap<Buffer, Buffer>();

/** Sends JSON, gzip-compressed for clients that accept it (a long timeline is megabytes of summaries). */
function sendJson(req: Request, res: Response, body: Buffer): void {
  res.type('application/json').vary('Accept-Encoding');
  if (body.length < GZIP_MIN_BYTES || req.acceptsEncodings('gzip', 'identity') !== 'gzip') {
    res.send(body);
    return;
  }
  let zipped = gzipped.get(body);
  if (!zipped) gzipped.set(body, (zipped = zlib.gzipSync(body, { level: 1 })));
  res.set('Content-Encoding', 'gzip').send(zipped);
}

const noSession = (id: string) => new AppError('not_found', `no session ${JSON.stringify(id)}`);

/** The sessions list, one session's timeline, and deleting a session. */
export function sessionsRouter(history: History, bridge: Bridge): Router {
  const router = Router();

  router.get('/hermes/sessions', (req, res) => {
    const limit = intQuery(req.query.limit, 'limit', { min: 1, max: SESSIONS_PAGE.max }) ?? SESSIONS_PAGE.default;
    const before = intQuery(req.query.before, 'before', { min: 0 });
    res.json(history.listSessions(limit, before));
  });

  router.get('/hermes/sessions/:id', (req, res) => {
    const id = idParam(req.params.id, 'id');
    const limit =
      intQuery(req.query.messages_limit, 'messages_limit', { min: 1, max: MESSAGES_PAGE.max }) ?? MESSAGES_PAGE.default;
    const before = intQuery(req.query.messages_before, 'messages_before', { min: 0 });
    const body = history.sessionDetailJson(id, { limit, before });
    if (!body) throw noSession(id);
    sendJson(req, res, body);
  });

  router.delete('/hermes/sessions/:id', (req, res) => {
    const id = idParam(req.params.id, 'id');
    if (!bridge.deleteSession(id)) throw noSession(id);
    res.status(204).end();
  });

  return router;
}

import { Router } from 'express';
import { AppError } from '../errors.ts';
import type { Bridge, History } from '../runs/index.ts';
import { idParam, intQuery } from './params.ts';

export const SESSIONS_PAGE = { default: 50, max: 200 } as const;
export const MESSAGES_PAGE = { default: 500, max: 1000 } as const;

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
    const detail = history.sessionDetail(id, { limit, before });
    if (!detail) throw noSession(id);
    res.json(detail);
  });

  router.delete('/hermes/sessions/:id', (req, res) => {
    const id = idParam(req.params.id, 'id');
    if (!bridge.deleteSession(id)) throw noSession(id);
    res.status(204).end();
  });

  return router;
}

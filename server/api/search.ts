import { Router } from 'express';
import { SEARCH_LIMIT } from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import type { History } from '../runs/index.ts';
import { idParam, intQuery } from './params.ts';

const SEARCH_PARAMS = new Set(['q', 'limit', 'session']);

/** `GET /api/hermes/search`: everything recorded, or one session (`session=`), newest hits first. */
export function searchRouter(history: History): Router {
  const router = Router();
  router.get('/hermes/search', async (req, res) => {
    const unknown = Object.keys(req.query).find((k) => !SEARCH_PARAMS.has(k));
    if (unknown !== undefined)
      throw new AppError(
        'invalid_input',
        `unknown query parameter ${JSON.stringify(unknown)}; search takes ${[...SEARCH_PARAMS].join(', ')}`,
        { details: { field: unknown } },
      );
    const q = req.query.q;
    if (typeof q !== 'string' || q.trim() === '')
      throw new AppError('invalid_input', 'q (the search text) is required, once', { details: { field: 'q' } });
    const limit = intQuery(req.query.limit, 'limit', { min: 1, max: SEARCH_LIMIT.max }) ?? SEARCH_LIMIT.default;
    const session = req.query.session === undefined ? undefined : idParam(req.query.session, 'session');
    res.json(await history.search(q, { limit, ...(session !== undefined ? { sessionId: session } : {}) }));
  });
  return router;
}

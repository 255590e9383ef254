import { Router } from 'express';
import type { History } from '../runs/index.ts';

/** The distinct workspaces of the stored sessions, with how many sessions name each. */
export function workspacesRouter(history: History): Router {
  const router = Router();
  router.get('/hermes/workspaces', async (_req, res) => {
    res.json(await history.workspaces());
  });
  return router;
}

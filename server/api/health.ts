import { Router } from 'express';
import type { HealthResponse } from '../../shared/index.ts';
import { VERSION } from '../version.ts';

export function healthRouter(): Router {
  const router = Router();
  router.get('/health', (_req, res) => {
    const body: HealthResponse = { ok: true, version: VERSION };
    res.json(body);
  });
  return router;
}

import { Router } from 'express';
import type { ContentStoreStats, HealthResponse } from '../../shared/index.ts';
import { VERSION } from '../version.ts';

/** `GET /api/health`; with a content store, its use (bytes kept for undoing runs and the budget). */
export function healthRouter(contentStats?: () => Promise<ContentStoreStats>): Router {
  const router = Router();
  router.get('/health', async (_req, res) => {
    const body: HealthResponse = { ok: true, version: VERSION };
    if (contentStats) body.content_store = await contentStats();
    res.json(body);
  });
  return router;
}

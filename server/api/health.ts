import { Router } from 'express';
import type { ContentStoreStats, HealthResponse, InotifyStats } from '../../shared/index.ts';
import { VERSION } from '../version.ts';

/**
 * `GET /api/health`; with a content store, its use (bytes kept for undoing runs and the budget);
 * with an inotify count, the watches the process holds (absent when there is none to give).
 */
export function healthRouter(
  contentStats?: () => Promise<ContentStoreStats>,
  inotifyStats?: () => InotifyStats | null,
): Router {
  const router = Router();
  router.get('/health', async (_req, res) => {
    const body: HealthResponse = { ok: true, version: VERSION };
    if (contentStats) body.content_store = await contentStats();
    const inotify = inotifyStats?.() ?? null;
    if (inotify) body.inotify = inotify;
    res.json(body);
  });
  return router;
}

import { Router } from 'express';
import type { AgentSetupNotice, AgentSetupNoticesResponse } from '../../shared/index.ts';

/**
 * `GET /api/agents/notices`: what in the agents' setup on this machine keeps runs from being
 * recorded (Codex's untrusted hooks), asked of `notices` on each request; none when the server was
 * started without a way to look (an embedded server, a test app).
 */
export function agentsRouter(notices?: () => AgentSetupNotice[]): Router {
  const router = Router();
  router.get('/agents/notices', (_req, res) => {
    const body: AgentSetupNoticesResponse = { notices: notices?.() ?? [] };
    res.json(body);
  });
  return router;
}

import { Router } from 'express';
import type { Limits } from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import { agentTrace, blameFile, resolveChangeId } from '../runs/index.ts';
import { VERSION } from '../version.ts';
import type { Store } from '../store/index.ts';
import { changeIdIn, idParam } from './params.ts';

/** Longest `path` a blame takes (characters). */
const MAX_PATH_CHARS = 4096;

/**
 * `GET /api/hermes/sessions/:id/blame?path=&at=`: each line of a file at the end of a change
 * (`at`, a change id or its short id; `current` or absent: the session's last change) with the run
 * and tool call that last wrote it, from the kept contents only.
 */
export function blameRouter(
  store: Store,
  limits: Readonly<Limits>,
  settled: (sessionId: string) => Promise<void> = async () => undefined,
): Router {
  const router = Router();
  router.get('/hermes/sessions/:id/blame', async (req, res) => {
    const id = idParam(req.params.id, 'id');
    const path = req.query.path;
    if (typeof path !== 'string' || path === '' || path.length > MAX_PATH_CHARS)
      throw new AppError(
        'invalid_input',
        `path must be one workspace-relative path (1..${MAX_PATH_CHARS} characters)`,
        {
          details: { field: 'path' },
        },
      );
    const atParam = req.query.at;
    if (atParam !== undefined && typeof atParam !== 'string')
      throw new AppError('invalid_input', 'at must be one change id or "current"', { details: { field: 'at' } });
    await settled(id);
    const at =
      atParam === undefined || atParam === '' || atParam === 'current'
        ? null
        : await changeIdIn((s, c) => resolveChangeId(store, s, c), id, atParam);
    res.json({ blame: await blameFile(store, id, path, at, limits) });
  });
  // The session's attributions as one Agent Trace record (docs/api.md, "Agent Trace export").
  router.get('/hermes/sessions/:id/agent-trace', async (req, res) => {
    const id = idParam(req.params.id, 'id');
    await settled(id);
    const record = await agentTrace(store, id, limits, { name: 'rundiff', version: VERSION });
    res.type('application/vnd.agent-trace.record+json').send(JSON.stringify(record));
  });
  return router;
}

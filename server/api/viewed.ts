import { Router } from 'express';
import { AppError } from '../errors.ts';
import type { Recorder } from '../runs/index.ts';
import { isValidId } from '../runs/index.ts';
import { idParam } from './params.ts';

/**
 * Viewed marks of a session's changed files: read them, mark a file row viewed (PUT, JSON body) and
 * unmark it (DELETE, query parameters: a body on DELETE is dropped by some proxies and clients).
 * Every answer is the session's marks after the call; a change is sent to its subscribers too.
 */
export function viewedRouter(recorder: Recorder): Router {
  const router = Router();
  const route = '/hermes/sessions/:id/viewed';

  const noSession = (id: string) => new AppError('not_found', `no session ${JSON.stringify(id)}`);

  router.get(route, async (req, res) => {
    const id = idParam(req.params.id, 'id');
    const state = await recorder.viewed.list(id);
    if (!state) throw noSession(id);
    res.json(state);
  });

  function target(source: unknown, where: 'body' | 'query'): { change_id: string; file_id: string } {
    if (source === null || typeof source !== 'object' || Array.isArray(source))
      throw new AppError('invalid_input', `the ${where} must name change_id and file_id`, {
        hint: 'send {"change_id": "run:<run_id>", "file_id": "<file id>"}',
      });
    const { change_id, file_id } = source as Record<string, unknown>;
    if (change_id === undefined)
      throw new AppError('invalid_input', `change_id is missing from the ${where}`, {
        details: { field: 'change_id' },
      });
    if (file_id === undefined)
      throw new AppError('invalid_input', `file_id is missing from the ${where}`, { details: { field: 'file_id' } });
    if (
      typeof change_id !== 'string' ||
      !/^(run|tool):/.test(change_id) ||
      !isValidId(change_id.slice(change_id.indexOf(':') + 1))
    )
      throw new AppError('invalid_input', 'change_id must be run:<run_id> or tool:<tool_call_id>', {
        details: { field: 'change_id' },
      });
    if (typeof file_id !== 'string' || !isValidId(file_id))
      throw new AppError('invalid_input', 'file_id must be 1-200 printable characters', {
        details: { field: 'file_id' },
      });
    return { change_id, file_id };
  }

  async function answer(id: string, t: { change_id: string; file_id: string }, viewed: boolean) {
    const state = await recorder.viewed.set(id, t, viewed);
    if (state) return state;
    if (!(await recorder.viewed.list(id))) throw noSession(id);
    throw new AppError(
      'not_found',
      `no file ${JSON.stringify(t.file_id)} in change ${JSON.stringify(t.change_id)} of session ${JSON.stringify(id)}`,
    );
  }

  router.put(route, async (req, res) => {
    const id = idParam(req.params.id, 'id');
    res.json(await answer(id, target(req.body, 'body'), true));
  });

  router.delete(route, async (req, res) => {
    const id = idParam(req.params.id, 'id');
    res.json(await answer(id, target(req.query, 'query'), false));
  });

  return router;
}

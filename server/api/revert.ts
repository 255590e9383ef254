import { Router } from 'express';
import type { RevertRequest } from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import { parseHunkHeader, type Reverter } from '../revert/index.ts';

/** Hunks one request may undo. */
const MAX_HUNKS = 1_000;
/** Lines one hunk entry may name. */
const MAX_HUNK_LINES = 100_000;
import type { ChangeIdResolver } from '../runs/index.ts';
import { changeIdIn, idParam } from './params.ts';

/** `{file_ids?: string[], dry_run?: boolean, partial?: boolean, hunks?: [{file_id, hunk}]}`, nothing else. */
function revertBody(body: unknown): RevertRequest {
  const b = (body ?? {}) as Record<string, unknown>;
  if (typeof b !== 'object' || Array.isArray(b))
    throw new AppError(
      'invalid_input',
      'the body must be a JSON object {file_ids?, dry_run?, partial?, hunks?, plan_id?}',
    );
  for (const k of Object.keys(b))
    if (k !== 'file_ids' && k !== 'dry_run' && k !== 'partial' && k !== 'hunks' && k !== 'plan_id')
      throw new AppError('invalid_input', `unknown field ${JSON.stringify(k)}`, { details: { field: k } });
  const out: RevertRequest = {};
  for (const k of ['dry_run', 'partial'] as const) {
    if (b[k] === undefined) continue;
    if (typeof b[k] !== 'boolean')
      throw new AppError('invalid_input', `${k} must be a boolean`, { details: { field: k } });
    out[k] = b[k];
  }
  if (b.file_ids !== undefined) {
    if (!Array.isArray(b.file_ids) || b.file_ids.length === 0 || b.file_ids.some((x) => typeof x !== 'string'))
      throw new AppError('invalid_input', 'file_ids must be a non-empty array of file ids', {
        details: { field: 'file_ids' },
      });
    out.file_ids = (b.file_ids as string[]).map((id) => idParam(id, 'file_ids'));
  }
  if (b.plan_id !== undefined) {
    if (typeof b.plan_id !== 'string' || !/^[0-9a-f]{64}$/.test(b.plan_id))
      throw new AppError('invalid_input', 'plan_id must be the plan_id a dry run answered', {
        details: { field: 'plan_id' },
      });
    out.plan_id = b.plan_id;
  }
  if (b.hunks !== undefined) {
    const bad = () =>
      new AppError(
        'invalid_input',
        'hunks must be a non-empty array of {file_id, hunk: "@@ -a,b +c,d @@", lines?: [index, ...]}',
        {
          details: { field: 'hunks' },
        },
      );
    if (out.file_ids !== undefined)
      throw new AppError('invalid_input', 'give file_ids or hunks, not both', { details: { field: 'hunks' } });
    if (!Array.isArray(b.hunks) || b.hunks.length === 0 || b.hunks.length > MAX_HUNKS) throw bad();
    out.hunks = b.hunks.map((h: unknown) => {
      const o = h as Record<string, unknown>;
      if (typeof o !== 'object' || o === null || Array.isArray(o)) throw bad();
      if (Object.keys(o).some((k) => k !== 'file_id' && k !== 'hunk' && k !== 'lines')) throw bad();
      if (typeof o.file_id !== 'string' || typeof o.hunk !== 'string' || !parseHunkHeader(o.hunk)) throw bad();
      const entry = { file_id: idParam(o.file_id, 'hunks'), hunk: o.hunk };
      if (o.lines === undefined) return entry;
      if (
        !Array.isArray(o.lines) ||
        o.lines.length === 0 ||
        o.lines.length > MAX_HUNK_LINES ||
        o.lines.some((n) => !Number.isSafeInteger(n) || (n as number) < 0)
      )
        throw new AppError(
          'invalid_input',
          `lines must be a non-empty array of at most ${MAX_HUNK_LINES} indexes (0 = the hunk's first body line)`,
          { details: { field: 'hunks' } },
        );
      return { ...entry, lines: o.lines as number[] };
    });
  }
  return out;
}

/** Undoing a stored change (a run's or a tool call's): the plan with `dry_run`, else the revert. */
export function revertRouter(reverter: Reverter, resolve: ChangeIdResolver): Router {
  const router = Router();
  router.post('/hermes/sessions/:id/workspace-run-changes/:changeId/revert', async (req, res) => {
    const id = idParam(req.params.id, 'id');
    const changeId = await changeIdIn(resolve, id, req.params.changeId);
    const body = revertBody(req.body);
    res.json(await reverter.revert(id, changeId, body));
  });
  return router;
}

import { Router, type Request } from 'express';
import type { Limits, NetChange, NetViewedMark, NetViewedResponse } from '../../shared/index.ts';
import { wholeRunPatchParts, type DeltaFile } from '../delta/index.ts';
import { AppError } from '../errors.ts';
import {
  fallsShort,
  netChange,
  patchOfSides,
  type KeptPatch,
  type NetRange,
  type NetResult,
} from '../net-change/index.ts';
import type { Store } from '../store/index.ts';
import { resolveChangeId } from '../runs/index.ts';
import { changeIdIn, idParam } from './params.ts';
import { sendParts } from './send-parts.ts';

/** Net changes kept for repeated requests (a view and its file rows). */
const RECENT_NET_CHANGES = 8;

/** The range asked for, short change ids resolved in the session. */
async function rangeOf(req: Request, store: Store, sessionId: string): Promise<NetRange> {
  const range: NetRange = {};
  for (const name of ['from', 'to'] as const) {
    const v = req.query[name];
    if (v === undefined || v === '') continue;
    if (typeof v !== 'string')
      throw new AppError('invalid_input', `${name} must be one change id`, { details: { field: name } });
    range[name] = await changeIdIn((s, c) => resolveChangeId(store, s, c), sessionId, v);
  }
  return range;
}

/**
 * A session's net change over a range of its runs (`?from=&to=`, run-level change ids; default all),
 * in the shape of a change: the summary with its files, one file with its patch, the whole patch.
 */
export function netChangeRouter(
  store: Store,
  limits: Readonly<Limits>,
  settled: (sessionId: string) => Promise<void> = async () => undefined,
  now: () => number = Date.now,
): Router {
  const router = Router();
  const base = '/hermes/sessions/:id/net-change';

  // The last answers, each valid until its session is written again: expanding the rows of one
  // view one by one does not diff the whole range again for every file.
  const recent = new Map<string, { version: string; result: Promise<NetResult> }>();
  const compute = async (req: Request): Promise<NetResult> => {
    const id = idParam(req.params.id, 'id');
    if (!(await store.sessions.exists(id))) throw new AppError('not_found', `no session ${JSON.stringify(id)}`);
    await settled(id);
    const range = await rangeOf(req, store, id);
    const key = JSON.stringify([id, range.from ?? null, range.to ?? null]);
    const version = await store.clock.version(id);
    const hit = recent.get(key);
    if (hit && hit.version === version) return hit.result;
    const result = netChange(store, id, range, limits);
    recent.delete(key);
    recent.set(key, { version, result });
    result.catch(() => recent.delete(key));
    while (recent.size > RECENT_NET_CHANGES) recent.delete(recent.keys().next().value!);
    return result;
  };

  // A net file's sides are in memory with its row: a patch that fell short is computed from them.
  const whole = (f: DeltaFile, binary: boolean): Promise<KeptPatch | null> =>
    patchOfSides(
      f,
      f.sides.before,
      f.sides.after,
      { maxBytes: limits.maxOpenedPatchBytes, diffTimeoutMs: limits.diffTimeoutMs },
      { binary },
    );

  router.get(base, async (req, res) => {
    res.json({ change: (await compute(req)).change });
  });

  router.get(`${base}/files/:fileId`, async (req, res) => {
    const fileId = idParam(req.params.fileId, 'fileId');
    const { change, patches } = await compute(req);
    const file = change.files.find((f) => f.id === fileId);
    if (!file) throw new AppError('not_found', `no file ${JSON.stringify(fileId)} in the net change`);
    const delta = patches.get(fileId);
    const kept = delta && fallsShort(delta, false) ? await whole(delta, false) : null;
    if (kept) {
      res.json({
        file: { ...file, patch: kept.patch, truncated: kept.truncated, omitted_reason: null },
        patch_from_contents: true,
        ...(kept.raw ? { patch_base64: kept.raw.toString('base64') } : {}),
      });
      return;
    }
    res.json({ file: { ...file, patch: delta?.patch ?? null } });
  });

  router.get(`${base}/patch`, async (req, res) => {
    const { change, patches } = await compute(req);
    const parts = wholeRunPatchParts([...patches.values()], change.omitted_count, async (f) => {
      const kept = fallsShort(f, true) ? await whole(f, true) : null;
      return kept && !kept.truncated ? (kept.raw ?? kept.patch) : null;
    });
    res
      .status(200)
      .type('text/x-diff; charset=utf-8')
      .set('Content-Disposition', `attachment; filename="net-change.diff"`);
    await sendParts(res, parts);
  });

  // Viewed marks of the range's start, each told current (its hash is the net file's now) or stale.
  const pathOf = (f: { path: string; path_base64?: string | null }) => `${f.path}\0${f.path_base64 ?? ''}`;
  async function marksOf(sessionId: string, change: NetChange): Promise<NetViewedResponse> {
    const from = change.from_change_id;
    if (from === null) return { from_change_id: null, viewed: [] };
    const files = new Map(change.files.map((f) => [pathOf(f), f]));
    const viewed: NetViewedMark[] = [];
    for (const m of await store.netViewed.list(sessionId, from)) {
      const f = files.get(pathOf(m));
      if (!f) continue;
      const mark: NetViewedMark = {
        file_id: f.id,
        path: m.path,
        net_hash: m.net_hash,
        to_change_id: m.to_change_id,
        viewed_at: m.viewed_at,
        current: m.net_hash === f.net_hash,
      };
      if (m.path_base64 !== '') mark.path_base64 = m.path_base64;
      viewed.push(mark);
    }
    return { from_change_id: from, viewed };
  }

  /** The net file a mark names (`file_id`), in the range asked for. */
  function fileNamed(change: NetChange, source: unknown, where: 'body' | 'query') {
    const fileId = (source as Record<string, unknown> | null | undefined)?.file_id;
    if (typeof fileId !== 'string')
      throw new AppError('invalid_input', `file_id is missing from the ${where}`, { details: { field: 'file_id' } });
    const file = change.files.find((f) => f.id === fileId);
    if (!file || change.from_change_id === null || change.to_change_id === null)
      throw new AppError('not_found', `no file ${JSON.stringify(fileId)} in the net change`);
    return { file, from: change.from_change_id, to: change.to_change_id };
  }

  router.get(`${base}/viewed`, async (req, res) => {
    const { change } = await compute(req);
    res.json(await marksOf(change.session_id, change));
  });

  router.put(`${base}/viewed`, async (req, res) => {
    const { change } = await compute(req);
    const body: unknown = req.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      throw new AppError('invalid_input', 'the body must name file_id and net_hash', {
        hint: 'send {"file_id": "net-…", "net_hash": "<the net file\'s net_hash>"}',
      });
    const { file, from, to } = fileNamed(change, body, 'body');
    const hash = (body as Record<string, unknown>).net_hash;
    if (typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash))
      throw new AppError('invalid_input', "net_hash must be the net file's net_hash (64 hex digits)", {
        details: { field: 'net_hash' },
      });
    // The hash the reader saw is kept, even when the file changed meanwhile: the mark is then stale at once.
    await store.netViewed.mark(change.session_id, from, {
      path: file.path,
      path_base64: file.path_base64 ?? '',
      net_hash: hash,
      to_change_id: to,
      viewed_at: now(),
    });
    res.json(await marksOf(change.session_id, change));
  });

  router.delete(`${base}/viewed`, async (req, res) => {
    const { change } = await compute(req);
    const { file, from } = fileNamed(change, req.query, 'query');
    await store.netViewed.unmark(change.session_id, from, file.path, file.path_base64 ?? '');
    res.json(await marksOf(change.session_id, change));
  });

  return router;
}

import { Router } from 'express';
import { FILES_PAGE_DEFAULT, FILES_PAGE_MAX } from '../../shared/index.ts';
import { wholeRunPatchParts } from '../delta/index.ts';
import { AppError } from '../errors.ts';
import { fallsShort, type KeptPatches } from '../net-change/index.ts';
import type { History } from '../runs/index.ts';
import type { FileResponse, FileWithPatch, Limits } from '../../shared/index.ts';
import type { ContentsApi } from '../store/index.ts';
import { fileIgnoringWhitespace } from './file-whitespace.ts';
import { changeIdIn, idParam, intQuery } from './params.ts';
import { sendParts } from './send-parts.ts';

/** What reads kept contents: `?whitespace=ignore`, and the patches of rows whose stored patch falls short. */
export interface WhitespaceDeps {
  contents: ContentsApi | null;
  limits: Pick<Limits, 'diffTimeoutMs' | 'maxFilePatchBytes'>;
  log: (message: string) => void;
  /** Patches computed from kept contents; none: a row's stored patch is all there is. */
  kept?: KeptPatches;
  /** Resolves once a change's kept contents are written (they are written just after its answer). */
  settled?: (sessionId: string, changeId: string) => Promise<void>;
}

/** A session's stored changes: summaries, one file with its patch, and the whole-run patch. */
export function changesRouter(history: History, whitespace?: WhitespaceDeps): Router {
  /** The row with its whole patch from the kept contents, where its stored one falls short and they were kept. */
  async function opened(ids: { sessionId: string; changeId: string }, file: FileWithPatch): Promise<FileResponse> {
    const kept = whitespace?.kept;
    if (!kept || !fallsShort(file, false)) return { file };
    await whitespace.settled?.(ids.sessionId, ids.changeId);
    const patch = await kept.forRow(ids, file, { binary: false });
    if (!patch) return { file };
    return {
      file: { ...file, patch: patch.patch, truncated: patch.truncated, omitted_reason: null },
      patch_from_contents: true,
      ...(patch.raw ? { patch_base64: patch.raw.toString('base64') } : {}),
    };
  }

  const router = Router();
  const base = '/hermes/sessions/:id/workspace-run-changes';
  const resolve = (sessionId: string, changeId: string) => history.resolveChangeId(sessionId, changeId);

  router.get(base, async (req, res) => {
    const id = idParam(req.params.id, 'id');
    const changes = await history.changes(id);
    if (!changes) throw new AppError('not_found', `no session ${JSON.stringify(id)}`);
    res.json({ changes });
  });

  router.get(`${base}/:changeId`, async (req, res) => {
    const id = idParam(req.params.id, 'id');
    const changeId = await changeIdIn(resolve, id, req.params.changeId);
    const change = await history.change(id, changeId);
    if (!change)
      throw new AppError('not_found', `no change ${JSON.stringify(changeId)} in session ${JSON.stringify(id)}`);
    res.json({ change });
  });

  // Every stored row, a page at a time in path order; `after` is the previous page's next_file_cursor.
  router.get(`${base}/:changeId/files`, async (req, res) => {
    const id = idParam(req.params.id, 'id');
    const changeId = await changeIdIn(resolve, id, req.params.changeId);
    const after = intQuery(req.query.after, 'after', { min: 0 });
    const limit = intQuery(req.query.limit, 'limit', { min: 1, max: FILES_PAGE_MAX }) ?? FILES_PAGE_DEFAULT;
    const page = await history.filesPage(id, changeId, after ?? -1, limit);
    if (!page)
      throw new AppError('not_found', `no change ${JSON.stringify(changeId)} in session ${JSON.stringify(id)}`);
    // A position past the last row is no cursor any page gave out: refused, not an empty page.
    if (after !== null && after >= page.files_total) {
      throw new AppError(
        'invalid_input',
        page.files_total === 0
          ? 'after must be left out: the change has no stored rows (files_total 0)'
          : `after must be below files_total (${page.files_total}): the change has rows 0 to ${page.files_total - 1}`,
        { details: { field: 'after', files_total: page.files_total } },
      );
    }
    res.json(page);
  });

  router.get(`${base}/:changeId/files/:fileId`, async (req, res) => {
    const id = idParam(req.params.id, 'id');
    const changeId = await changeIdIn(resolve, id, req.params.changeId);
    const fileId = idParam(req.params.fileId, 'fileId');
    const mode = req.query.whitespace;
    if (mode !== undefined && mode !== 'ignore')
      throw new AppError('invalid_input', 'whitespace must be "ignore" (or left out for the stored patch)', {
        details: { field: 'whitespace' },
      });
    const stored = await history.file(id, changeId, fileId);
    if (!stored)
      throw new AppError('not_found', `no file ${JSON.stringify(fileId)} in change ${JSON.stringify(changeId)}`);
    const open = await opened({ sessionId: id, changeId }, stored);
    if (mode !== 'ignore') {
      res.json(open);
      return;
    }
    const deps = whitespace ?? { contents: null, limits: { diffTimeoutMs: 0, maxFilePatchBytes: 0 }, log: () => {} };
    const shown = await fileIgnoringWhitespace(
      open.file,
      { sessionId: id, changeId },
      deps.contents,
      deps.limits,
      deps.log,
    );
    res.json(open.patch_from_contents ? { ...open, ...shown } : shown);
  });

  router.get(`${base}/:changeId/patch`, async (req, res) => {
    const id = idParam(req.params.id, 'id');
    const changeId = await changeIdIn(resolve, id, req.params.changeId);
    const files = await history.changeFiles(id, changeId);
    if (!files)
      throw new AppError('not_found', `no change ${JSON.stringify(changeId)} in session ${JSON.stringify(id)}`);
    const name = changeId.replace(/[^A-Za-z0-9._-]+/g, '_');
    const unstored = (await history.change(id, changeId))?.omitted_count ?? 0;
    const kept = whitespace?.kept;
    if (kept && files.some((f) => fallsShort(f, true))) await whitespace.settled?.(id, changeId);
    // A row whose stored patch falls short goes whole from the kept contents (a binary file as git's
    // binary patch), so that applying the patch to the start tree gives the end tree.
    const parts = wholeRunPatchParts(files, unstored, async (row) => {
      if (!kept || !fallsShort(row, true)) return null;
      const patch = await kept.forRow({ sessionId: id, changeId }, row, { binary: true });
      return patch && !patch.truncated ? (patch.raw ?? patch.patch) : null;
    });
    res
      .status(200)
      .type('text/x-diff; charset=utf-8')
      .set('Content-Disposition', `attachment; filename="${name}.diff"`);
    await sendParts(res, parts);
  });

  return router;
}

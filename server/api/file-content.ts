import { Router } from 'express';
import { AppError } from '../errors.ts';
import type { History } from '../runs/index.ts';
import type { ContentsApi } from '../store/index.ts';
import { changeIdIn, idParam } from './params.ts';

/**
 * One side of a stored file's content, for the review views (context around a hunk, the whole
 * file, image previews): as text in JSON, or with `encoding=raw` as bytes whose type is named from
 * their magic bytes (an image, else `application/octet-stream`; never anything a browser renders
 * as a page). Content comes only from the content store, never from the workspace.
 */

export type ContentOmitted = 'binary' | 'too_large' | 'not_stored' | 'absent';

const IMAGE_MAGIC: readonly [string, (b: Buffer) => boolean][] = [
  ['image/png', (b) => b.length >= 8 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a],
  ['image/jpeg', (b) => b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
  ['image/gif', (b) => b.length >= 6 && /^GIF8[79]a$/.test(b.toString('latin1', 0, 6))],
  [
    'image/webp',
    (b) => b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP',
  ],
];

export function contentTypeOf(bytes: Buffer): string {
  for (const [type, is] of IMAGE_MAGIC) if (is(bytes)) return type;
  return 'application/octet-stream';
}

/** Like git: a NUL byte in the first 8,000 bytes means binary. */
function isBinary(bytes: Buffer): boolean {
  return bytes.subarray(0, 8000).indexOf(0) !== -1;
}

export function fileContentRouter(
  history: History,
  contents: ContentsApi,
  settled: (sessionId: string, changeId: string) => Promise<void> = async () => undefined,
): Router {
  const router = Router();
  router.get('/hermes/sessions/:id/workspace-run-changes/:changeId/files/:fileId/content', async (req, res) => {
    const id = idParam(req.params.id, 'id');
    const changeId = await changeIdIn((s, c) => history.resolveChangeId(s, c), id, req.params.changeId);
    const fileId = idParam(req.params.fileId, 'fileId');
    const side = req.query.side;
    if (side !== 'before' && side !== 'after')
      throw new AppError('invalid_input', 'side must be "before" or "after"', { details: { field: 'side' } });
    const encoding = req.query.encoding ?? 'text';
    if (encoding !== 'text' && encoding !== 'raw')
      throw new AppError('invalid_input', 'encoding must be "text" or "raw"', { details: { field: 'encoding' } });
    if (!(await history.file(id, changeId, fileId)))
      throw new AppError('not_found', `no file ${JSON.stringify(fileId)} in change ${JSON.stringify(changeId)}`);
    // Contents of a change answered a moment ago may still be being written.
    await settled(id, changeId);

    const kept = (await contents.get(id, changeId, fileId))?.[side] ?? null;
    let omitted: ContentOmitted | null = null;
    let bytes: Buffer | null = null;
    if (!kept) omitted = 'not_stored';
    else if (kept.mode === null) omitted = 'absent';
    else if (kept.sha256 === null) omitted = kept.reason === 'too_large' ? 'too_large' : 'not_stored';
    else {
      bytes = await contents.blob(kept.sha256);
      if (bytes === null) omitted = 'not_stored';
    }
    if (encoding === 'raw') {
      if (bytes === null)
        throw new AppError('not_found', `no stored ${side} content for file ${JSON.stringify(fileId)}: ${omitted}`, {
          details: { omitted_reason: omitted },
        });
      res
        .status(200)
        .type(contentTypeOf(bytes))
        .set('Content-Disposition', 'attachment')
        .set('Cache-Control', 'private, max-age=3600')
        .send(bytes);
      return;
    }
    const binary = bytes !== null && isBinary(bytes);
    res.json({
      content: {
        file_id: fileId,
        side,
        text: bytes !== null && !binary ? bytes.toString('utf8') : null,
        size: bytes?.length ?? null,
        omitted_reason: binary ? 'binary' : omitted,
      },
    });
  });
  return router;
}

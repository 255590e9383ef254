import { isUtf8 } from 'node:buffer';
import type { FileResponse, FileWithPatch, Limits, WhitespaceFallback } from '../../shared/index.ts';
import { cutToBytes, ignoreWhitespaceHunks, isBinaryContent } from '../delta/index.ts';
import type { ContentsApi, StoredSide } from '../store/index.ts';

/**
 * `?whitespace=ignore`: a file's patch computed again from the before and after bytes the content
 * store kept, with all whitespace ignored (git's `-w`). The stored patch's header lines are kept
 * (they do not depend on whitespace); only the hunks are new. Whenever that cannot be done the
 * stored patch is answered with `whitespace_ignored: false` and the reason, and the cause is logged.
 */

type Side = { bytes: Buffer } | { fallback: WhitespaceFallback };

async function sideBytes(side: StoredSide, contents: ContentsApi): Promise<Side> {
  if (side.mode === null) return { bytes: Buffer.alloc(0) }; // the path did not exist on that side
  if (side.sha256 === null) return { fallback: 'not_stored' };
  const bytes = await contents.blob(side.sha256);
  if (bytes === null) return { fallback: 'not_stored' };
  if (isBinaryContent(bytes)) return { fallback: 'binary' };
  if (!isUtf8(bytes)) return { fallback: 'not_utf8' };
  return { bytes };
}

/** The stored patch up to its first hunk: git's header lines. */
function headerOf(patch: string): string {
  if (patch.startsWith('@@')) return '';
  const at = patch.indexOf('\n@@');
  return at === -1 ? patch : patch.slice(0, at + 1);
}

export async function fileIgnoringWhitespace(
  file: FileWithPatch,
  ids: { sessionId: string; changeId: string },
  contents: ContentsApi | null,
  limits: Pick<Limits, 'diffTimeoutMs' | 'maxFilePatchBytes'>,
  log: (message: string) => void,
): Promise<FileResponse> {
  const stored = (reason: WhitespaceFallback): FileResponse => {
    if (reason !== 'no_patch')
      log(`whitespace=ignore for ${file.id} of ${ids.changeId} in ${ids.sessionId}: stored patch sent (${reason})`);
    return { file, whitespace_ignored: false, whitespace_reason: reason };
  };
  if (file.patch === null) return stored('no_patch');
  const kept = (await contents?.get(ids.sessionId, ids.changeId, file.id)) ?? null;
  if (kept === null || contents === null) return stored('not_stored');
  const before = await sideBytes(kept.before, contents);
  if ('fallback' in before) return stored(before.fallback);
  const after = await sideBytes(kept.after, contents);
  if ('fallback' in after) return stored(after.fallback);

  const diff = ignoreWhitespaceHunks(before.bytes.toString('utf8'), after.bytes.toString('utf8'), limits.diffTimeoutMs);
  if (diff === null) return stored('too_complex');
  const full = Buffer.from(headerOf(file.patch) + diff.hunks, 'utf8');
  const cut = cutToBytes(full, limits.maxFilePatchBytes);
  const truncated = cut.length < full.length;
  // Only the patch text and whether it was cut are new: every other field (counts, sizes,
  // `patch_bytes`) stays the stored row's, as the listing shows it.
  return {
    file: {
      ...file,
      patch: cut.toString('utf8'),
      truncated,
    },
    whitespace_ignored: true,
    whitespace_reason: null,
  };
}

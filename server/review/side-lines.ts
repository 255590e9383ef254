import type { CommentSide } from '../../shared/index.ts';
import type { StoreTx } from '../store/index.ts';
import { patchSideLines, splitLines, type SideLines } from './anchor.ts';

/** Like git: a NUL byte in the first 8,000 bytes means binary. */
const isBinary = (bytes: Buffer) => bytes.subarray(0, 8000).indexOf(0) !== -1;

export type SideRead =
  /** `provisional`: the contents are still being written, so only the patch's lines are known yet. */
  | { ok: true; side: SideLines; provisional: boolean }
  | { ok: false; reason: 'absent' | 'binary' | 'no_lines'; message: string };

/**
 * One side of a stored file's lines: the whole file from the content store when its bytes were
 * kept, else the lines its stored patch shows. Reads only the store, never the workspace.
 */
export async function readSideLines(
  store: Pick<StoreTx, 'changes' | 'contents'>,
  sessionId: string,
  changeId: string,
  fileId: string,
  side: CommentSide,
): Promise<SideRead | null> {
  const file = await store.changes.getFile(sessionId, changeId, fileId);
  if (!file) return null;
  if ((side === 'before' && file.change_type === 'added') || (side === 'after' && file.change_type === 'deleted'))
    return {
      ok: false,
      reason: 'absent',
      message: `the file did not exist ${side === 'before' ? 'before' : 'after'} the change`,
    };
  if (file.binary) return { ok: false, reason: 'binary', message: 'the file is binary: it has no lines' };
  const kept = (await store.contents.get(sessionId, changeId, fileId))?.[side];
  if (kept && kept.mode !== null && kept.sha256 !== null) {
    const bytes = await store.contents.blob(kept.sha256);
    if (bytes !== null) {
      if (isBinary(bytes)) return { ok: false, reason: 'binary', message: 'the file is binary: it has no lines' };
      return { ok: true, side: { kind: 'whole', lines: splitLines(bytes.toString('utf8')) }, provisional: false };
    }
  }
  if (file.patch === null || file.patch === '')
    return {
      ok: false,
      reason: 'no_lines',
      message: `neither the file's contents nor its patch were kept (${file.omitted_reason ?? 'not stored'}), so it has no lines to comment on`,
    };
  const provisional = kept !== undefined && kept.sha256 === null && kept.reason === 'pending';
  return { ok: true, side: { kind: 'hunks', lines: patchSideLines(file.patch, side) }, provisional };
}

import { createHash } from 'node:crypto';
import type { FileSide } from './types.ts';

/** git looks for a NUL in this many leading bytes to call content binary. */
export const BINARY_SNIFF_BYTES = 8_000;

export const GITLINK_MODE = '160000';

/** Binary like git: a NUL in the first 8,000 bytes. A gitlink's text is never binary. */
export function isBinaryContent(bytes: Buffer): boolean {
  const n = Math.min(bytes.length, BINARY_SNIFF_BYTES);
  return bytes.subarray(0, n).includes(0);
}

export function isBinarySide(side: FileSide | null): boolean {
  if (!side) return false;
  if (side.binaryAttr) return true;
  if (side.mode === GITLINK_MODE || !side.bytes) return false;
  return isBinaryContent(side.bytes);
}

/** git's blob id (SHA-1) of some content: what an `index` line shows and what exact renames match. */
export function blobId(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/** The object id an `index` line names: a gitlink's commit, else the content's blob id. */
export function indexOid(side: FileSide): string | null {
  if (side.mode === GITLINK_MODE) {
    const m = side.bytes ? /^Subproject commit ([0-9a-f]{40,64})/.exec(side.bytes.toString('latin1')) : null;
    return m?.[1] ?? side.oid ?? null;
  }
  return side.bytes ? blobId(side.bytes) : null;
}

/** Content identity for rename pairing and "unchanged" checks: blob id of the bytes, else the given oid. */
export function contentIdentity(side: FileSide): string | null {
  return side.bytes ? blobId(side.bytes) : (side.oid ?? null);
}

/** True when both sides are known to hold the same content (bytes, or equal oids when bytes are missing). */
export function sameContent(a: FileSide, b: FileSide): boolean {
  if (a.bytes && b.bytes) return a.bytes.equals(b.bytes);
  if (!a.bytes && !b.bytes) return a.oid !== undefined && a.oid === b.oid;
  const ia = contentIdentity(a);
  return ia !== null && ia === contentIdentity(b);
}

/** Regular file (`100644`/`100755`), as opposed to a symlink or gitlink. */
export function isRegularMode(mode: string): boolean {
  return mode.startsWith('100');
}

/** File-type part of a mode: a change of it is git's "type change" (shown as delete + create). */
export function modeType(mode: string): string {
  return isRegularMode(mode) ? '100' : mode;
}

/** Lines as git counts them: every `\n` ends one, and a final line without `\n` counts too. */
export function countLines(bytes: Buffer): number {
  if (bytes.length === 0) return 0;
  let n = 0;
  let at = bytes.indexOf(0x0a);
  while (at !== -1) {
    n++;
    at = bytes.indexOf(0x0a, at + 1);
  }
  return bytes[bytes.length - 1] === 0x0a ? n : n + 1;
}

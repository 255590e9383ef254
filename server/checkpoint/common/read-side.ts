import type { TruncatedReason } from '../../../shared/index.ts';
import type { FileSide } from '../../delta/types.ts';
import type { ReadResult } from '../../workspace/index.ts';
import { MAX_DIFF_READ_BYTES } from '../model.ts';
import { addReason } from './reasons.ts';

/** Slot `i` of 20-byte blob ids as hex. */
export function oidHex(oids: Uint8Array, i: number): string {
  return Buffer.from(oids.buffer, oids.byteOffset + i * 20, 20).toString('hex');
}

/**
 * The end side of a file read at completion (slot `j` of a read): null when it is gone; without
 * bytes (and why) when it could not be read or kept. `reasons` learns of a memory cap.
 */
export function sideFromRead(r: ReadResult, j: number, mode: string, reasons: TruncatedReason[]): FileSide | null {
  if (r.missing[j]) return null;
  // There but not readable: a side without content, never taken for a deleted file.
  if (r.unreadable[j]) return { bytes: null, unavailable: 'unreadable', size: r.size[j]!, mode };
  const oid = r.hashed[j] ? oidHex(r.oids, j) : undefined;
  if (r.offset[j]! >= 0) {
    const bytes = Buffer.from(r.block.buffer, r.block.byteOffset + r.offset[j]!, r.length[j]);
    return { bytes, size: r.length[j]!, mode, ...(oid ? { oid } : {}) };
  }
  const side: FileSide = {
    bytes: null,
    unavailable: r.size[j]! > MAX_DIFF_READ_BYTES ? 'too_large' : 'no_snapshot',
    size: r.size[j]!,
    mode,
  };
  if (side.unavailable === 'no_snapshot') addReason(reasons, 'memory_cap');
  if (oid) side.oid = oid;
  if (r.binary[j]) side.binaryAttr = true;
  return side;
}

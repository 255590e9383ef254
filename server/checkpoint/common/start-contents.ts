import type { Limits } from '../../../shared/index.ts';
import { MODE_LINK, ScanDeadlineError, type ReadResult, type Scanner } from '../../workspace/index.ts';
import {
  HASH_READ_BUDGET_BYTES,
  LACK_MEMORY_CAP,
  LACK_TOO_LARGE,
  LACK_UNREADABLE,
  ORIGIN_HASH,
  ORIGIN_NONE,
  ORIGIN_SNAPSHOT,
  type FileTable,
} from '../model.ts';
import { traced } from './trace.ts';

export interface StartReadInput {
  root: string;
  limits: Readonly<Limits>;
  scanner: Scanner;
  /** Asks the registry for up to `wanted` bytes of snapshot memory; returns the grant. */
  reserveMemory(wanted: number): number;
  reportFailure?: (what: string, err: unknown) => void;
}

export interface StartRead {
  block: Buffer;
  granted: number;
  memoryCapHit: boolean;
  readFailure: 'scan_time' | 'degraded' | null;
}

/**
 * Reads the start content of the files `toRead` (indexes into `files`) once, in the scan worker:
 * text within the snapshot cap and the memory grant is kept in one block, the rest keeps its blob
 * id (sha1) only; `files` gets each one's origin, and why it has no bytes when it has none.
 */
export async function readStartContents(
  files: FileTable,
  toRead: readonly number[],
  input: StartReadInput,
): Promise<StartRead> {
  let wanted = 0;
  for (const fi of toRead) if (files.size[fi]! <= input.limits.maxSnapshotBytes) wanted += Math.max(0, files.size[fi]!);
  const granted = toRead.length > 0 ? input.reserveMemory(wanted) : 0;
  let block: Buffer = Buffer.alloc(0);
  let memoryCapHit = false;
  let readFailure: StartRead['readFailure'] = null;
  if (toRead.length === 0) return { block, granted, memoryCapHit, readFailure };
  const links = new Uint8Array(toRead.length);
  toRead.forEach((fi, j) => (links[j] = files.mode[fi] === MODE_LINK ? 1 : 0));
  let got: ReadResult | null = null;
  try {
    got = await traced(
      `read ${toRead.length}`,
      input.scanner.read({
        root: input.root,
        paths: toRead.map((fi) => files.paths[fi]!),
        links,
        sizes: Float64Array.from(toRead.map((fi) => files.size[fi]!)),
        keepMaxBytes: input.limits.maxSnapshotBytes,
        keepBudgetBytes: granted,
        // Binary start content is kept too (within the same caps): a run that changed it can be undone.
        keepBinary: true,
        hashBudgetBytes: HASH_READ_BUDGET_BYTES,
        hashKept: false,
      }),
    );
  } catch (err) {
    // The read missed its deadline or lost its worker: these files keep no start content (a
    // changed stat is then reported without a before side), and the checkpoint says why.
    readFailure = err instanceof ScanDeadlineError ? 'scan_time' : 'degraded';
    if (readFailure === 'degraded') input.reportFailure?.('read', err);
  }
  if (got !== null) {
    const r = got;
    block = Buffer.from(r.block.buffer, r.block.byteOffset, r.block.byteLength);
    memoryCapHit = r.skippedForBudget > 0 || r.skippedForHashBudget > 0;
    toRead.forEach((fi, j) => {
      if (r.unreadable[j]) {
        // There but not readable: its scanned stat stays, so an unreadable file nobody touched is
        // no change at completion, and one that changed is reported as unreadable, never deleted.
        files.origin[fi] = ORIGIN_NONE;
        files.lack[fi] = LACK_UNREADABLE;
        return;
      }
      if (r.missing[j]) {
        files.origin[fi] = ORIGIN_NONE;
        files.lack[fi] = 0;
        files.size[fi] = -1; // gone before it could be read: compared as changed if it reappears
        return;
      }
      if (r.binary[j]) files.binary[fi] = 1;
      if (r.offset[j]! >= 0) {
        files.origin[fi] = ORIGIN_SNAPSHOT;
        files.snapOffset[fi] = r.offset[j]!;
        files.snapLength[fi] = r.length[j]!;
        return;
      }
      const tooLarge = r.size[j]! > input.limits.maxSnapshotBytes;
      if (r.hashed[j]) {
        files.origin[fi] = ORIGIN_HASH;
        r.oids.subarray(j * 20, j * 20 + 20).forEach((b, k) => (files.oids[fi * 20 + k] = b));
        files.lack[fi] = tooLarge ? LACK_TOO_LARGE : r.binary[j] ? 0 : LACK_MEMORY_CAP;
      } else {
        files.origin[fi] = ORIGIN_NONE;
        files.lack[fi] = tooLarge ? LACK_TOO_LARGE : LACK_MEMORY_CAP;
      }
    });
  }
  return { block, granted, memoryCapHit, readFailure };
}

import type { IncomingMessage } from 'node:http';
import { createOversizeScanner, OVERSIZE_READ_BYTES, type OversizeFields } from '../hooks/oversize.ts';

/**
 * Reads the identifying fields of a request body (`oversize.ts`: the top-level scalars and the
 * nested `paths`) as it streams past the body parser (which reads, and on a body over the limit
 * drains, the same stream), in bounded memory: the bytes go through the scanner and are not kept.
 * Null when there is nothing to read: a compressed body (its bytes are not the JSON) or one
 * announced longer than `OVERSIZE_READ_BYTES`. `read` settles once the body has ended (`whole`), or
 * was cut off or went past `OVERSIZE_READ_BYTES` (not `whole`: only the fields before were read).
 */
export function tapBody(req: IncomingMessage, paths: readonly string[] = []) {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return null;
  const announced = Number(req.headers['content-length']);
  if (Number.isFinite(announced) && announced > OVERSIZE_READ_BYTES) return null;
  const scanner = createOversizeScanner(paths);
  let bytes = 0;
  let settle: (whole: boolean) => void = () => {};
  const settled = new Promise<boolean>((resolve) => (settle = resolve));
  const onData = (chunk: Buffer) => {
    const room = OVERSIZE_READ_BYTES - bytes;
    bytes += chunk.length;
    scanner.push(room < chunk.length ? chunk.subarray(0, Math.max(0, room)) : chunk);
    if (bytes > OVERSIZE_READ_BYTES) stop(false);
  };
  const stop = (whole: boolean) => {
    req.off('data', onData);
    settle(whole);
  };
  req.on('data', onData);
  req.once('end', () => stop(true));
  req.once('close', () => stop(req.complete));
  req.once('error', () => stop(false));
  return {
    read: async (): Promise<{ fields: OversizeFields; bytes: number; whole: boolean }> => {
      const whole = await settled;
      return { fields: scanner.fields(), bytes, whole };
    },
  };
}

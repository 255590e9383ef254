import type { IncomingMessage } from 'node:http';
import { OVERSIZE_HEAD_BYTES, OVERSIZE_READ_BYTES, OVERSIZE_TAIL_BYTES } from '../hooks/oversize.ts';

/**
 * Keeps the first `OVERSIZE_HEAD_BYTES` and the last `OVERSIZE_TAIL_BYTES` of a request body as it
 * streams past the body parser (which reads, and on a body over the limit drains, the same stream),
 * in bounded memory. Null when there is nothing to keep: a compressed body (its bytes are not the
 * JSON) or one announced longer than `OVERSIZE_READ_BYTES`. `read` settles once the body has ended
 * (`whole`), or was cut off or went past `OVERSIZE_READ_BYTES` (not `whole`: its end is not known).
 */
export function tapBody(req: IncomingMessage) {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return null;
  const announced = Number(req.headers['content-length']);
  if (Number.isFinite(announced) && announced > OVERSIZE_READ_BYTES) return null;
  const head: Buffer[] = [];
  let headBytes = 0;
  let tail: Buffer[] = [];
  let tailBytes = 0;
  let bytes = 0;
  let settle: (whole: boolean) => void = () => {};
  const settled = new Promise<boolean>((resolve) => (settle = resolve));
  const onData = (chunk: Buffer) => {
    bytes += chunk.length;
    if (headBytes < OVERSIZE_HEAD_BYTES) {
      const part = chunk.subarray(0, OVERSIZE_HEAD_BYTES - headBytes);
      head.push(part);
      headBytes += part.length;
    }
    tail.push(chunk);
    tailBytes += chunk.length;
    while (tail.length > 1 && tailBytes - tail[0]!.length >= OVERSIZE_TAIL_BYTES) tailBytes -= tail.shift()!.length;
    if (bytes > OVERSIZE_READ_BYTES) {
      tail = [];
      stop(false);
    }
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
    read: async () => {
      const whole = await settled;
      const end = Buffer.concat(tail);
      return {
        head: Buffer.concat(head),
        tail: end.subarray(Math.max(0, end.length - OVERSIZE_TAIL_BYTES)),
        bytes,
        whole,
      };
    },
  };
}

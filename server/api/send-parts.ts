import { once } from 'node:events';
import type { Response } from 'express';

/**
 * Sends an answer (text, or bytes where text cannot carry them) a part at a time, waiting for the client whenever its buffer is full, so a big
 * answer is never whole in memory. The status and headers are set by the caller. A failure after
 * the first part can no longer become an error answer: the connection is cut, so the client sees an
 * incomplete answer rather than a complete-looking one.
 */
export async function sendParts(res: Response, parts: AsyncIterable<string | Buffer>): Promise<void> {
  let started = false;
  try {
    for await (const part of parts) {
      if (res.destroyed) return;
      started = true;
      if (!res.write(part)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
    }
    res.end();
  } catch (err) {
    if (!started) {
      // Nothing sent yet: the error is answered as usual, not as the attachment it would have been.
      res.removeHeader('Content-Disposition');
      throw err;
    }
    res.destroy(err as Error);
  }
}

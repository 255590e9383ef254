import { AppError } from '../../errors.ts';
import { hunkStarts } from './diff-parse.ts';

/**
 * Pure: where one page of a patch ends. A page is the exact byte slice `[offset, end)` of the whole
 * patch text, so the pages of a diff concatenate to the whole patch. It fills the byte budget up to
 * the last file or hunk start that fits; when not even one hunk fits, it cuts after the last whole
 * line, and when a single line is longer than the budget, at the last UTF-8 character boundary.
 */

export interface PageCut {
  start: number;
  end: number;
  /** Where the next page starts, or null when this page reaches the end. */
  next: number | null;
}

/** True when `pos` does not fall inside a multi-byte UTF-8 character. */
function isCharBoundary(text: Buffer, pos: number): boolean {
  if (pos <= 0 || pos >= text.length) return true;
  return (text[pos]! & 0xc0) !== 0x80;
}

export function cutPage(text: Buffer, stanzaStarts: readonly number[], offset: number, maxBytes: number): PageCut {
  if (!Number.isSafeInteger(offset) || offset < 0 || offset > text.length || !isCharBoundary(text, offset)) {
    throw new AppError('invalid_input', `offset ${offset} is not a page start of this diff`, {
      hint:
        'Pass the next_offset of a previous page with the same arguments (the diff is 0..' + text.length + ' bytes).',
      details: { offset, total_bytes: text.length },
    });
  }
  const limit = offset + maxBytes;
  if (limit >= text.length) return { start: offset, end: text.length, next: null };

  // File and hunk boundaries inside (offset, limit].
  let best = -1;
  for (const s of stanzaStarts) if (s > offset && s <= limit && s > best) best = s;
  // Hunks of the stanza that contains `limit` (earlier hunks lose to a later boundary anyway).
  let stanzaStart = 0;
  for (const s of stanzaStarts) if (s <= limit) stanzaStart = Math.max(stanzaStart, s);
  const from = Math.max(stanzaStart, offset);
  for (const h of hunkStarts(text, from, limit + 1)) if (h > offset && h <= limit && h > best) best = h;
  if (best === -1) {
    // No boundary fits: the last whole line, then the last character boundary.
    const nl = text.lastIndexOf(10, limit - 1);
    if (nl >= offset) best = nl + 1;
  }
  if (best === -1 || best <= offset) {
    best = limit;
    while (best > offset && !isCharBoundary(text, best)) best--;
    if (best === offset) best = limit; // cannot happen with maxBytes >= 4; never return an empty page
  }
  return { start: offset, end: best, next: best };
}

import { shallowRef, type ShallowRef } from 'vue';
import type { ContentSide } from '../../../shared/index.ts';
import { api, toApiError } from '../api/index.ts';
import { textLines } from '../patch/context.ts';

/** One recorded side of a file as lines, for context around the hunks and the whole-file view. */
export interface SideText {
  side: ContentSide;
  lines: string[];
}

// One answer per file for the page's lifetime (a recorded side never changes); null = this server
// keeps no contents for it, and the actions that need them stay hidden.
const cache = new Map<string, ShallowRef<SideText | null>>();

/**
 * One recorded side of a file, fetched once: by default the side that holds its unchanged lines
 * (after, or before for a deleted file). Stays null when the server has no stored contents
 * (404/501) or the side has no text.
 */
export function useFileContent(
  sessionId: string,
  changeId: string,
  file: { id: string; change_type: string },
  side: ContentSide = file.change_type === 'deleted' ? 'before' : 'after',
): ShallowRef<SideText | null> {
  const key = JSON.stringify([sessionId, changeId, file.id, side]);
  const known = cache.get(key);
  if (known) return known;
  const out = shallowRef<SideText | null>(null);
  cache.set(key, out);
  api
    .getFileContent(sessionId, changeId, file.id, side)
    .then((content) => {
      if (content?.text != null) out.value = { side, lines: textLines(content.text) };
    })
    .catch((err: unknown) => {
      const e = toApiError(err);
      console.warn(`rundiff: contents of ${file.id} (${side}): ${e.code} ${e.message}`);
      cache.delete(key); // asked again on the next open
    });
  return out;
}

/** Drops the cached contents of a session (it was deleted or left). */
export function forgetFileContents(sessionId: string): void {
  for (const key of [...cache.keys()]) if ((JSON.parse(key) as string[])[0] === sessionId) cache.delete(key);
}

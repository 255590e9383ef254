import { ref, type Ref } from 'vue';
import type { FileResponse, FileWithPatch } from '../../../shared/index.ts';
import { api, toApiError, type ApiError } from '../api/index.ts';

export interface PatchState {
  data: Ref<FileWithPatch | null>;
  error: Ref<ApiError | null>;
  loading: Ref<boolean>;
  /** The file's text is not UTF-8: `data.patch` shows git's bytes with U+FFFD where a character could not be read. */
  notUtf8: Ref<boolean>;
}

// One entry per file for the page's lifetime: a file's stored patch never changes, so a second
// expand reuses it without a request. A failed fetch is retried on the next call.
const cache = new Map<string, PatchState>();

/** One file's patch, fetched on first use (`GET .../files/:fileId`) and cached. */
export function usePatch(sessionId: string, changeId: string, fileId: string): PatchState {
  const key = JSON.stringify([sessionId, changeId, fileId]);
  const cached = cache.get(key);
  if (cached && cached.error.value === null) return cached;
  const entry: PatchState = cached ?? { data: ref(null), error: ref(null), loading: ref(false), notUtf8: ref(false) };
  cache.set(key, entry);
  entry.error.value = null;
  entry.loading.value = true;
  api
    .getFile(sessionId, changeId, fileId)
    .then((answer) => {
      entry.notUtf8.value = answer.patch_base64 !== undefined;
      entry.data.value = answer.file;
    })
    .catch((err: unknown) => {
      entry.error.value = toApiError(err);
    })
    .finally(() => {
      entry.loading.value = false;
    });
  return entry;
}

export interface WhitespacePatchState {
  /** The server's answer: `whitespace_ignored` says whether its patch ignores whitespace. */
  data: Ref<FileResponse | null>;
  loading: Ref<boolean>;
}

const whitespaceCache = new Map<string, WhitespacePatchState>();

/**
 * One file's patch with whitespace ignored by the server (`?whitespace=ignore`), fetched once and
 * cached like the stored patch. A failure leaves `data` null: the caller keeps hiding whitespace
 * itself within the stored hunks.
 */
export function useWhitespacePatch(sessionId: string, changeId: string, fileId: string): WhitespacePatchState {
  const key = JSON.stringify([sessionId, changeId, fileId]);
  const cached = whitespaceCache.get(key);
  if (cached && (cached.data.value !== null || cached.loading.value)) return cached;
  const entry: WhitespacePatchState = cached ?? { data: ref(null), loading: ref(false) };
  whitespaceCache.set(key, entry);
  entry.loading.value = true;
  api
    .getFileIgnoringWhitespace(sessionId, changeId, fileId)
    .then((answer) => {
      entry.data.value = answer;
    })
    .catch((err: unknown) => {
      console.warn(`rundiff: whitespace=ignore for ${fileId}: ${toApiError(err).message}`);
    })
    .finally(() => {
      entry.loading.value = false;
    });
  return entry;
}

/** Drops the cached patches of a session (it was deleted or left). */
export function forgetPatches(sessionId: string): void {
  for (const map of [cache, whitespaceCache])
    for (const key of [...map.keys()]) if ((JSON.parse(key) as string[])[0] === sessionId) map.delete(key);
}

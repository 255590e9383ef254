import type { IgnoreState } from '../model.ts';

/** Workspace folders whose last ignore listing is kept, and the largest listing kept. */
const MAX_REMEMBERED_FOLDERS = 64;
const MAX_REMEMBERED_IGNORES = 50_000;

/**
 * The last git ignore listing per workspace folder: the next scan walks with it while git lists
 * again, and keeps its walk only if git's new answer agrees (scan-phase.ts). A few folders,
 * small listings only: this is a guess, never a source of truth.
 */
export interface IgnoreCache {
  get(root: string): IgnoreState | null;
  /** Keeps `ig` as the folder's latest listing; null (or a listing too large) forgets the folder. */
  remember(root: string, ig: IgnoreState | null): void;
  clear(): void;
}

export function createIgnoreCache(): IgnoreCache {
  const lastIgnore = new Map<string, IgnoreState>();
  return {
    get: (root) => lastIgnore.get(root) ?? null,
    remember(root, ig) {
      lastIgnore.delete(root);
      if (!ig || ig.pruneDirs.length + ig.skipFiles.length > MAX_REMEMBERED_IGNORES) return;
      lastIgnore.set(root, ig);
      if (lastIgnore.size > MAX_REMEMBERED_FOLDERS) lastIgnore.delete(lastIgnore.keys().next().value!);
    },
    clear: () => lastIgnore.clear(),
  };
}

import { reactive, shallowRef } from 'vue';
import type { NetFileSummary, NetViewedMark, NetViewedResponse } from '../../../shared/index.ts';
import { api, toApiError } from '../api/index.ts';
import type { NetRangeQuery } from '../api/urls.ts';

/** A net file's mark as the row shows it: viewed, viewed before its net patch changed, or not. */
export type NetViewedState = 'viewed' | 'stale' | null;

/**
 * The viewed marks of the Session changes view's range, kept on the server per range start: read
 * with each net change shown, replaced by every mark or unmark's answer. A mark whose net patch is
 * no longer the one marked comes back `stale` (unchecked, and the row says why).
 */
export function useNetViewed(sessionId: () => string, range: () => NetRangeQuery) {
  const marks = shallowRef<ReadonlyMap<string, NetViewedMark>>(new Map());
  /** Net files whose mark or unmark is on its way (their toggle waits). */
  const pending = reactive(new Set<string>());
  /** The last failed mark or unmark, per net file, as a sentence. */
  const errors = reactive(new Map<string, string>());
  let generation = 0;

  const apply = (r: NetViewedResponse) => (marks.value = new Map(r.viewed.map((m) => [m.file_id, m])));

  /** Reads the marks of the range shown now (after the net change itself was read). */
  async function load(): Promise<void> {
    const gen = ++generation;
    pending.clear();
    errors.clear();
    try {
      const r = await api.getNetViewed(sessionId(), range());
      if (gen === generation) apply(r);
    } catch (err) {
      if (gen === generation) marks.value = new Map();
      console.warn(`rundiff: net viewed marks of ${sessionId()}: ${toApiError(err).message}`);
    }
  }

  function stateOf(file: NetFileSummary): NetViewedState {
    const m = marks.value.get(file.id);
    if (!m) return null;
    return m.current && m.net_hash === file.net_hash ? 'viewed' : 'stale';
  }

  /** Marks the file viewed as its net patch is shown (its `net_hash`), or unmarks it. */
  async function set(file: NetFileSummary, viewed: boolean): Promise<void> {
    const gen = ++generation;
    pending.add(file.id);
    errors.delete(file.id);
    try {
      const r = await api.setNetViewed(sessionId(), range(), { file_id: file.id, net_hash: file.net_hash }, viewed);
      if (gen === generation) apply(r);
    } catch (err) {
      errors.set(file.id, toApiError(err).message);
    } finally {
      pending.delete(file.id);
    }
  }

  return { marks, pending, errors, load, stateOf, set };
}

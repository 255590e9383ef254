import { defineStore } from 'pinia';
import { computed, reactive, ref, shallowRef } from 'vue';
import type { ViewedMark, ViewedResponse } from '../../../shared/index.ts';
import { api, toApiError } from '../api/index.ts';
import { getSocket, onResync } from '../socket/index.ts';
import { viewedByChange, viewedOf, type ChangeViewed } from '../timeline/index.ts';

/**
 * The open session's viewed marks: read when the session opens (next to its detail, so the first
 * render waits for neither), replaced by every answer and by `viewed.updated`, which also carries
 * the marks a later change reset. The server says which rows each mark covers; nothing is guessed.
 */
export const useViewedStore = defineStore('viewed', () => {
  const sessionId = ref<string | null>(null);
  const marks = shallowRef<ViewedMark[]>([]);
  const byChange = shallowRef(new Map<string, ChangeViewed>());
  /** File rows whose mark or unmark is on its way (their toggle waits). */
  const pending = reactive(new Set<string>());
  /** The last failed mark or unmark, per file row, as a sentence. */
  const errors = reactive(new Map<string, string>());
  let listening = false;
  let generation = 0;

  function apply(state: ViewedResponse): void {
    marks.value = state.viewed;
    byChange.value = viewedByChange(state.rows);
  }

  async function load(id: string): Promise<void> {
    const gen = ++generation;
    try {
      const state = await api.getViewed(id);
      if (gen === generation && sessionId.value === id) apply(state);
    } catch (err) {
      // The marks stay as they were (none on a first load); the page itself reports a missing session.
      console.warn(`rundiff: viewed marks of ${id}: ${toApiError(err).message}`);
    }
  }

  function listen(): void {
    if (listening) return;
    listening = true;
    getSocket().on('viewed.updated', (p) => {
      if (p.session_id !== sessionId.value) return;
      generation++; // an older answer still on its way must not replace this
      apply(p);
    });
    onResync(() => {
      if (sessionId.value !== null) void load(sessionId.value);
    });
  }

  function open(id: string): void {
    listen();
    sessionId.value = id;
    apply({ viewed: [], rows: [] });
    pending.clear();
    errors.clear();
    void load(id);
  }

  function close(): void {
    sessionId.value = null;
    generation++;
    apply({ viewed: [], rows: [] });
  }

  function of(changeId: string): ChangeViewed {
    return viewedOf(byChange.value, changeId);
  }

  /** Marks (or unmarks) one file row; resolves once the server answered (or failed, kept in `errors`). */
  async function set(changeId: string, fileId: string, viewed: boolean): Promise<void> {
    const id = sessionId.value;
    if (id === null || pending.has(fileId)) return;
    pending.add(fileId);
    errors.delete(fileId);
    const gen = ++generation;
    try {
      const state = await api.setViewed(id, { change_id: changeId, file_id: fileId }, viewed);
      if (gen === generation && sessionId.value === id) apply(state);
    } catch (err) {
      const e = toApiError(err);
      console.warn(`rundiff: marking ${fileId} of ${changeId} ${viewed ? 'viewed' : 'not viewed'}: ${e.message}`);
      errors.set(fileId, e.message);
    } finally {
      pending.delete(fileId);
    }
  }

  const count = computed(() => marks.value.length);

  return { sessionId, marks, count, pending, errors, open, close, of, set };
});

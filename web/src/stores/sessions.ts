import { defineStore } from 'pinia';
import { ref } from 'vue';
import type { Session } from '../../../shared/index.ts';
import { api, toApiError, type ApiError } from '../api/index.ts';
import { getSocket, onResync, subscribeSessions } from '../socket/index.ts';
import { appendPage, removeSession, sortSessions, upsertSession } from '../timeline/index.ts';

const PAGE_SIZE = 50;

/** The sessions list, newest activity first, kept live by `session.updated` / `session.deleted`. */
export const useSessionsStore = defineStore('sessions', () => {
  const sessions = ref<Session[]>([]);
  const loaded = ref(false);
  const loading = ref(false);
  const error = ref<ApiError | null>(null);
  const nextBefore = ref<number | null>(null);
  /** True once the server acknowledged the list subscription. */
  const live = ref(false);
  let started = false;

  async function load(): Promise<void> {
    loading.value = true;
    try {
      const res = await api.listSessions({ limit: PAGE_SIZE });
      sessions.value = sortSessions([...res.sessions]);
      nextBefore.value = res.next_before;
      error.value = null;
      loaded.value = true;
    } catch (err) {
      error.value = toApiError(err);
    } finally {
      loading.value = false;
    }
  }

  async function loadMore(): Promise<void> {
    if (nextBefore.value === null || loading.value) return;
    loading.value = true;
    try {
      const res = await api.listSessions({ limit: PAGE_SIZE, before: nextBefore.value });
      sessions.value = appendPage(sessions.value, res.sessions);
      nextBefore.value = res.next_before;
      error.value = null;
    } catch (err) {
      error.value = toApiError(err);
    } finally {
      loading.value = false;
    }
  }

  /** Deletes on the server; the row goes at once (the `session.deleted` event confirms it). */
  async function remove(id: string): Promise<void> {
    await api.deleteSession(id);
    sessions.value = removeSession(sessions.value, id);
  }

  function byId(id: string): Session | undefined {
    return sessions.value.find((s) => s.id === id);
  }

  /** Subscribes once for the app's lifetime, then loads the first page. */
  function start(): void {
    if (started) return;
    started = true;
    const socket = getSocket();
    socket.on('session.updated', ({ session }) => {
      // Only sessions within the loaded window are shown: a session older than the last loaded
      // page appears when its page is loaded, unless its new activity moves it into the window.
      const last = sessions.value[sessions.value.length - 1];
      if (nextBefore.value !== null && last && session.updated_at < last.updated_at && !byId(session.id)) return;
      sessions.value = upsertSession(sessions.value, session);
    });
    socket.on('session.deleted', ({ session_id }) => {
      sessions.value = removeSession(sessions.value, session_id);
    });
    onResync(() => void load());
    void subscribeSessions().then(() => {
      live.value = true;
    });
    void load();
  }

  return { sessions, loaded, loading, error, nextBefore, live, load, loadMore, remove, byId, start };
});

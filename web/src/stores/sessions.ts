import { defineStore } from 'pinia';
import { ref } from 'vue';
import type { Session, SessionFilter, WorkspaceCount } from '../../../shared/index.ts';
import { api, toApiError, type ApiError } from '../api/index.ts';
import { getSocket, onResync, subscribeSessions } from '../socket/index.ts';
import { appendPage, matchesFilter, removeSession, sortSessions, upsertSession } from '../timeline/index.ts';

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
  /** The server-side filter the list shows (empty: every session). */
  const filter = ref<SessionFilter>({});
  /** Every workspace the stored sessions name (not only the loaded ones), for the workspace filter. */
  const workspaces = ref<WorkspaceCount[]>([]);
  let started = false;
  // A slower answer for an older filter must not replace the newer one's.
  let loadSeq = 0;

  async function load(): Promise<void> {
    loading.value = true;
    const seq = ++loadSeq;
    try {
      const res = await api.listSessions({ limit: PAGE_SIZE, filter: filter.value });
      if (seq !== loadSeq) return;
      sessions.value = sortSessions([...res.sessions]);
      nextBefore.value = res.next_before;
      error.value = null;
      loaded.value = true;
    } catch (err) {
      if (seq === loadSeq) error.value = toApiError(err);
    } finally {
      if (seq === loadSeq) loading.value = false;
    }
  }

  let workspacesSeq = 0;
  async function loadWorkspaces(): Promise<void> {
    const seq = ++workspacesSeq;
    try {
      const res = await api.workspaces();
      if (seq === workspacesSeq) workspaces.value = res.workspaces;
    } catch (err) {
      // The filter then offers the workspaces of the loaded sessions only.
      console.warn(`rundiff: workspaces: ${toApiError(err).message}`);
    }
  }

  /** Shows only sessions matching `next`; reloads from the first page when it differs. */
  function setFilter(next: SessionFilter): void {
    if (JSON.stringify(next) === JSON.stringify(filter.value) && (loaded.value || loading.value)) return;
    filter.value = next;
    if (started) void load();
  }

  async function loadMore(): Promise<void> {
    if (nextBefore.value === null || loading.value) return;
    loading.value = true;
    const seq = loadSeq;
    try {
      const res = await api.listSessions({ limit: PAGE_SIZE, before: nextBefore.value, filter: filter.value });
      if (seq !== loadSeq) return;
      sessions.value = appendPage(sessions.value, res.sessions);
      nextBefore.value = res.next_before;
      error.value = null;
    } catch (err) {
      if (seq === loadSeq) error.value = toApiError(err);
    } finally {
      if (seq === loadSeq) loading.value = false;
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
      // A session that stops (or starts) matching the filter leaves (or joins) the list live.
      if (session.workspace !== null && !workspaces.value.some((w) => w.workspace === session.workspace))
        void loadWorkspaces();
      if (!matchesFilter(session, filter.value)) sessions.value = removeSession(sessions.value, session.id);
      else sessions.value = upsertSession(sessions.value, session);
    });
    socket.on('session.deleted', ({ session_id }) => {
      sessions.value = removeSession(sessions.value, session_id);
      void loadWorkspaces();
    });
    onResync(() => {
      void load();
      void loadWorkspaces();
    });
    void subscribeSessions().then(() => {
      live.value = true;
    });
    void load();
    void loadWorkspaces();
  }

  return {
    workspaces,
    sessions,
    loaded,
    loading,
    error,
    nextBefore,
    live,
    filter,
    load,
    loadMore,
    setFilter,
    remove,
    byId,
    start,
  };
});

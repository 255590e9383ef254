import { defineStore } from 'pinia';
import { computed, reactive, ref } from 'vue';
import { api, toApiError, type ApiError } from '../api/index.ts';
import { useReview } from '../composables/useReview.ts';
import { getSocket, onResync, subscribeSession, unsubscribeSession } from '../socket/index.ts';
import {
  applyChange,
  applyDiffCompleted,
  applyMessage,
  applyProgress,
  applyRun,
  applyToolCall,
  buildTimeline,
  emptySessionState,
  loadDetail,
  olderMessagesCursor,
  prependMessages,
} from '../timeline/index.ts';

/** The server's default and our page size for messages (the contract: newest 500 by default). */
const MESSAGES_PAGE = 500;

/** The open session page: detail from REST, then kept live by the session's socket events. */
export const useSessionStore = defineStore('session', () => {
  const state = reactive(emptySessionState());
  const sessionId = ref<string | null>(null);
  const loading = ref(false);
  const error = ref<ApiError | null>(null);
  /** True once the server acknowledged the subscription for the open session. */
  const subscribed = ref(false);
  const hasOlder = ref(false);
  const loadingOlder = ref(false);
  // The session's reviews (kept by the review composable): each delivered one is marked in the timeline.
  const reviews = useReview().state;
  const timeline = computed(() => buildTimeline(state, reviews.reviews));
  // Events that arrive while the detail is loading are replayed after it, so none is lost.
  let buffered: (() => void)[] | null = null;
  let listening = false;
  let generation = 0;

  function handle(id: string, apply: () => void): void {
    if (id !== sessionId.value) return;
    if (buffered) buffered.push(apply);
    else apply();
  }

  function refetchChange(changeId: string): void {
    const id = sessionId.value;
    if (id === null) return;
    api
      .getChange(id, changeId)
      .then((change) => {
        if (sessionId.value === id) applyChange(state, change);
      })
      // The socket summary stays on screen; only sizes are missing.
      .catch(() => undefined);
  }

  function listen(): void {
    if (listening) return;
    listening = true;
    const s = getSocket();
    s.on('message.created', (p) => handle(p.session_id, () => applyMessage(state, p.message)));
    s.on('message.updated', (p) => handle(p.session_id, () => applyMessage(state, p.message)));
    s.on('run.started', (p) => handle(p.session_id, () => applyRun(state, p.run)));
    s.on('run.completed', (p) => handle(p.session_id, () => applyRun(state, p.run)));
    s.on('run.failed', (p) => handle(p.session_id, () => applyRun(state, p.run)));
    s.on('tool.started', (p) => handle(p.session_id, () => applyToolCall(state, p.tool_call)));
    s.on('tool.completed', (p) => handle(p.session_id, () => applyToolCall(state, p.tool_call)));
    s.on('workspace.diff.progress', (p) => handle(p.session_id, () => applyProgress(state, p)));
    s.on('workspace.diff.completed', (p) =>
      handle(p.session_id, () => {
        if (applyDiffCompleted(state, p)) refetchChange(p.change_id);
      }),
    );
    s.on('session.updated', ({ session }) => handle(session.id, () => (state.session = session)));
    s.on('session.deleted', ({ session_id }) =>
      handle(session_id, () => {
        state.deleted = true;
      }),
    );
    onResync(() => {
      if (sessionId.value !== null) void fetchDetail(sessionId.value);
    });
  }

  async function fetchDetail(id: string): Promise<void> {
    const gen = ++generation;
    buffered = [];
    loading.value = true;
    try {
      const detail = await api.getSession(id);
      if (gen !== generation) return;
      loadDetail(state, detail);
      hasOlder.value = detail.messages.length >= MESSAGES_PAGE;
      error.value = null;
    } catch (err) {
      if (gen !== generation) return;
      error.value = toApiError(err);
    } finally {
      if (gen === generation) {
        const replay = buffered ?? [];
        buffered = null;
        loading.value = false;
        if (error.value === null) for (const apply of replay) apply();
      }
    }
  }

  async function open(id: string): Promise<void> {
    listen();
    if (sessionId.value !== null && sessionId.value !== id) unsubscribeSession(sessionId.value);
    sessionId.value = id;
    Object.assign(state, emptySessionState());
    subscribed.value = false;
    error.value = null;
    void subscribeSession(id).then(() => {
      if (sessionId.value === id) subscribed.value = true;
    });
    await fetchDetail(id);
  }

  function close(): void {
    if (sessionId.value !== null) unsubscribeSession(sessionId.value);
    sessionId.value = null;
    generation++;
    buffered = null;
    subscribed.value = false;
    Object.assign(state, emptySessionState());
  }

  async function loadOlder(): Promise<void> {
    const id = sessionId.value;
    const cursor = olderMessagesCursor(state);
    if (id === null || cursor === null || loadingOlder.value) return;
    loadingOlder.value = true;
    try {
      let page = await api.getSession(id, { messagesBefore: cursor, messagesLimit: MESSAGES_PAGE });
      let added = sessionId.value === id ? prependMessages(state, page.messages) : 0;
      // A full page of messages all sharing the oldest millisecond: step past that millisecond.
      if (added === 0 && page.messages.length >= MESSAGES_PAGE && sessionId.value === id) {
        page = await api.getSession(id, { messagesBefore: cursor - 1, messagesLimit: MESSAGES_PAGE });
        added = sessionId.value === id ? prependMessages(state, page.messages) : 0;
      }
      if (sessionId.value === id) hasOlder.value = page.messages.length >= MESSAGES_PAGE && added > 0;
    } catch (err) {
      error.value = toApiError(err);
    } finally {
      loadingOlder.value = false;
    }
  }

  return { state, sessionId, loading, error, subscribed, hasOlder, loadingOlder, timeline, open, close, loadOlder };
});

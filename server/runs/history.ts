import type { ChangeSummary, FileWithPatch, SessionDetailResponse, SessionListResponse } from '../../shared/index.ts';
import type { Store } from '../store/index.ts';

/** Read side of the REST history. Nothing here reads a patch body except `file` and `changeFiles`. */
export function createHistory(store: Store) {
  return {
    listSessions(limit: number, before: number | null): SessionListResponse {
      return store.sessions.page(limit, before);
    },
    /** null when the session does not exist. */
    sessionDetail(sessionId: string, messages: { limit: number; before: number | null }): SessionDetailResponse | null {
      // One read transaction: a run completing meanwhile is either wholly in the answer or not at all.
      return store.db.transaction(() => {
        const session = store.sessions.get(sessionId);
        if (!session) return null;
        return {
          session,
          messages: store.messages.page(sessionId, messages.limit, messages.before),
          runs: store.runs.listRuns(sessionId),
          tool_calls: store.runs.listToolCalls(sessionId),
          changes: store.changes.listForSession(sessionId),
        };
      })();
    },
    changes(sessionId: string): ChangeSummary[] | null {
      if (!store.sessions.exists(sessionId)) return null;
      return store.changes.listForSession(sessionId);
    },
    change(sessionId: string, changeId: string): ChangeSummary | null {
      return store.changes.get(sessionId, changeId);
    },
    file(sessionId: string, changeId: string, fileId: string): FileWithPatch | null {
      return store.changes.getFile(sessionId, changeId, fileId);
    },
    /** Every file of a change with its patch (for the whole-run patch); null for an unknown change. */
    changeFiles(sessionId: string, changeId: string): FileWithPatch[] | null {
      if (!store.changes.exists(sessionId, changeId)) return null;
      return store.changes.filesWithPatches(sessionId, changeId);
    },
  };
}

export type History = ReturnType<typeof createHistory>;

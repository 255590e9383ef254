import type { ChangeSummary, FileWithPatch, SessionDetailResponse, SessionListResponse } from '../../shared/index.ts';
import type { Store } from '../store/index.ts';

/** Serialized summaries of stored changes kept for session details (they never change once stored). */
const MAX_FRAGMENT_BYTES = 64 * 1024 * 1024;
/** Whole session-detail answers kept, each valid until its session is written again. */
const MAX_DETAILS = 16;
/** Above this many uncached changes one query for the whole session beats one per change. */
const BULK_MISSES = 16;

/**
 * Read side of the REST history. Nothing here reads a patch body except `file` and `changeFiles`.
 * The session detail is served from serialized pieces: a stored change's JSON is cached by its
 * never-reused seq, and the whole answer until the store's write clock says the session changed, so
 * a timeline of 200 changes x 50 files costs a string join, not 10,000 rows, per request.
 */
export function createHistory(store: Store) {
  const fragments = new Map<number, string>();
  let fragmentBytes = 0;
  const details = new Map<string, { version: string; body: Buffer }>();

  function keepFragment(seq: number, json: string): void {
    fragments.set(seq, json);
    fragmentBytes += json.length;
    for (const [old, text] of fragments) {
      if (fragmentBytes <= MAX_FRAGMENT_BYTES) break;
      fragments.delete(old);
      fragmentBytes -= text.length;
    }
  }

  function changeFragments(sessionId: string): string[] {
    const seqs = store.changes.seqs(sessionId);
    const missing = seqs.filter((s) => !fragments.has(s));
    const out = new Map<number, string>();
    if (missing.length > BULK_MISSES) {
      for (const { seq, change } of store.changes.listKeyed(sessionId)) out.set(seq, JSON.stringify(change));
    } else {
      for (const seq of missing) {
        const change = store.changes.bySeq(seq);
        if (change) out.set(seq, JSON.stringify(change));
      }
    }
    return seqs.map((seq) => {
      let json = out.get(seq);
      if (json !== undefined) keepFragment(seq, json);
      else {
        json = fragments.get(seq)!;
        fragments.delete(seq); // refresh its place in the LRU order
        fragments.set(seq, json);
      }
      return json;
    });
  }

  /** The session detail as the UTF-8 JSON served by `GET /api/hermes/sessions/:id`; null when unknown. */
  function sessionDetailJson(sessionId: string, messages: { limit: number; before: number | null }): Buffer | null {
    const key = `${sessionId}\u0000${messages.limit}\u0000${messages.before ?? ''}`;
    const version = store.clock.version(sessionId);
    const hit = details.get(key);
    if (hit && hit.version === version) return hit.body;
    // One read transaction: a run completing meanwhile is either wholly in the answer or not at all.
    const body = store.db.transaction(() => {
      const session = store.sessions.get(sessionId);
      if (!session) return null;
      return Buffer.from(
        `{"session":${JSON.stringify(session)}` +
          `,"messages":${JSON.stringify(store.messages.page(sessionId, messages.limit, messages.before))}` +
          `,"runs":${JSON.stringify(store.runs.listRuns(sessionId))}` +
          `,"tool_calls":${JSON.stringify(store.runs.listToolCalls(sessionId))}` +
          `,"changes":[${changeFragments(sessionId).join(',')}]}`,
        'utf8',
      );
    })();
    details.delete(key);
    if (body) {
      details.set(key, { version, body });
      for (const old of details.keys()) {
        if (details.size <= MAX_DETAILS) break;
        details.delete(old);
      }
    }
    return body;
  }

  return {
    listSessions(limit: number, before: number | null): SessionListResponse {
      return store.sessions.page(limit, before);
    },
    /** The session detail as an object; null when the session does not exist. */
    sessionDetail(sessionId: string, messages: { limit: number; before: number | null }): SessionDetailResponse | null {
      const body = sessionDetailJson(sessionId, messages);
      return body ? (JSON.parse(body.toString('utf8')) as SessionDetailResponse) : null;
    },
    sessionDetailJson,
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

import {
  WORKSPACES_MAX,
  type ChangeFilesPage,
  type ChangeSummary,
  type FileWithPatch,
  type SessionDetailResponse,
  type SessionFilter,
  type SessionListResponse,
  type SearchResponse,
  type WorkspacesResponse,
} from '../../shared/index.ts';
import type { Store, StoreTx, WritePart } from '../store/index.ts';
import { DEFAULT_LIMITS } from '../config.ts';
import { searchHistory, type SearchLimits, type SearchOptions } from './search.ts';
import { resolveChangeId } from './change-ids.ts';

/** Serialized summaries of stored changes kept for session details (they never change once stored). */
const MAX_FRAGMENT_BYTES = 64 * 1024 * 1024;
/** Whole session-detail answers kept, each valid until its session is written again. */
const MAX_DETAILS = 16;
/** Above this many uncached changes one query for the whole session beats one per change. */
const BULK_MISSES = 16;

const COMMA = Buffer.from(',');
const TAIL = Buffer.from(']}');
const MESSAGES_KEY = Buffer.from(',"messages":');
const RUNS_KEY = Buffer.from(',"runs":');
const TOOL_CALLS_KEY = Buffer.from(',"tool_calls":');
const CHANGES_KEY = Buffer.from(',"changes":[');
/** Sessions whose serialized messages, runs and tool calls are kept between answers. */
const MAX_HEAD_SESSIONS = 64;

/**
 * A session detail as UTF-8 JSON in parts whose concatenation is the document. The parts of stored
 * changes, the separators, and the messages, runs and tool calls while no write touched them, are
 * the same Buffer objects from one answer to the next, so a consumer may cache work per part (the
 * API compresses each part once).
 */
export interface DetailDocument {
  parts: readonly Buffer[];
}

/**
 * Read side of the REST history. Nothing here reads a patch body except `file` and `changeFiles`.
 * The session detail is served from serialized pieces: a stored change's JSON is cached by its
 * never-reused seq, and the whole answer until the store's write clock says the session changed, so
 * a timeline of 200 changes x 50 files costs a join of cached parts, not 10,000 rows, per request.
 */
export function createHistory(store: Store, searchLimits: SearchLimits = DEFAULT_LIMITS) {
  const fragments = new Map<number, Buffer>();
  let fragmentBytes = 0;
  const details = new Map<string, { version: string; doc: DetailDocument }>();
  // A session's messages, runs and tool calls serialized, each kept until a write touches its rows:
  // a run's events rewrite its own row, so an answer rebuilt after one reuses the other lists.
  const lists = new Map<string, { version: string; json: Buffer }>();

  async function keptList(
    tx: StoreTx,
    sessionId: string,
    part: WritePart,
    key: string,
    read: () => Promise<unknown>,
  ): Promise<Buffer> {
    const id = `${sessionId}\u0000${key}`;
    const version = await tx.clock.partVersion(sessionId, part);
    const kept = lists.get(id);
    const json = kept?.version === version ? kept.json : Buffer.from(JSON.stringify(await read()), 'utf8');
    lists.delete(id); // refresh its place in the LRU order
    lists.set(id, { version, json });
    for (const old of lists.keys()) {
      if (lists.size <= MAX_HEAD_SESSIONS * 3) break;
      lists.delete(old);
    }
    return json;
  }

  function keepFragment(seq: number, json: Buffer): void {
    fragments.set(seq, json);
    fragmentBytes += json.length;
    for (const [old, bytes] of fragments) {
      if (fragmentBytes <= MAX_FRAGMENT_BYTES) break;
      fragments.delete(old);
      fragmentBytes -= bytes.length;
    }
  }

  async function changeFragments(tx: StoreTx, sessionId: string): Promise<Buffer[]> {
    const seqs = await tx.changes.seqs(sessionId);
    const missing = seqs.filter((s) => !fragments.has(s));
    const fresh = new Map<number, Buffer>();
    const encode = (c: ChangeSummary) => Buffer.from(JSON.stringify(c), 'utf8');
    if (missing.length > BULK_MISSES) {
      for (const { seq, change } of await tx.changes.listKeyed(sessionId))
        if (!fragments.has(seq)) fresh.set(seq, encode(change));
    } else {
      for (const seq of missing) {
        const change = await tx.changes.bySeq(seq);
        if (change) fresh.set(seq, encode(change));
      }
    }
    return seqs.map((seq) => {
      let json = fresh.get(seq);
      if (json !== undefined) keepFragment(seq, json);
      else {
        json = fragments.get(seq)!;
        fragments.delete(seq); // refresh its place in the LRU order
        fragments.set(seq, json);
      }
      return json;
    });
  }

  /** The session detail served by `GET /api/hermes/sessions/:id`, in parts; null when unknown. */
  async function sessionDetailDocument(
    sessionId: string,
    messages: { limit: number; before: number | null },
  ): Promise<DetailDocument | null> {
    const key = `${sessionId}\u0000${messages.limit}\u0000${messages.before ?? ''}`;
    const version = await store.clock.version(sessionId);
    const hit = details.get(key);
    if (hit && hit.version === version) return hit.doc;
    // One read transaction: a run completing meanwhile is either wholly in the answer or not at all.
    const doc = await store.transaction(async (tx): Promise<DetailDocument | null> => {
      const session = await tx.sessions.get(sessionId);
      if (!session) return null;
      const page = `messages:${messages.limit}:${messages.before ?? ''}`;
      const parts: Buffer[] = [
        Buffer.from(`{"session":${JSON.stringify(session)}`, 'utf8'),
        MESSAGES_KEY,
        await keptList(tx, sessionId, 'messages', page, () =>
          tx.messages.page(sessionId, messages.limit, messages.before),
        ),
        RUNS_KEY,
        await keptList(tx, sessionId, 'runs', 'runs', () => tx.runs.listRuns(sessionId)),
        TOOL_CALLS_KEY,
        await keptList(tx, sessionId, 'tool_calls', 'tool_calls', () => tx.runs.listToolCalls(sessionId)),
        CHANGES_KEY,
      ];
      (await changeFragments(tx, sessionId)).forEach((f, i) => {
        if (i > 0) parts.push(COMMA);
        parts.push(f);
      });
      parts.push(TAIL);
      return { parts };
    });
    details.delete(key);
    if (doc) {
      details.set(key, { version, doc });
      for (const old of details.keys()) {
        if (details.size <= MAX_DETAILS) break;
        details.delete(old);
      }
    }
    return doc;
  }

  return {
    /** Search over everything recorded (docs/contract.md, "Search"); a bad query is `invalid_input`. */
    search(q: string, opts: SearchOptions = {}): Promise<SearchResponse> {
      return searchHistory(store, searchLimits, q, opts);
    },
    listSessions(limit: number, before: number | null, filter: SessionFilter = {}): Promise<SessionListResponse> {
      return store.sessions.page(limit, before, filter);
    },
    /** Distinct workspaces of the stored sessions (the sessions list's workspace filter offers them). */
    workspaces(): Promise<WorkspacesResponse> {
      return store.sessions.workspaces(WORKSPACES_MAX);
    },
    /** The session detail as an object; null when the session does not exist. */
    async sessionDetail(
      sessionId: string,
      messages: { limit: number; before: number | null },
    ): Promise<SessionDetailResponse | null> {
      const doc = await sessionDetailDocument(sessionId, messages);
      return doc ? (JSON.parse(Buffer.concat(doc.parts).toString('utf8')) as SessionDetailResponse) : null;
    },
    sessionDetailDocument,
    async changes(sessionId: string): Promise<ChangeSummary[] | null> {
      if (!(await store.sessions.exists(sessionId))) return null;
      return store.changes.listForSession(sessionId);
    },
    /** The change id a route was given, a short id resolved (`resolveChangeId`). */
    resolveChangeId(sessionId: string, changeId: string): Promise<string> {
      return resolveChangeId(store, sessionId, changeId);
    },
    change(sessionId: string, changeId: string): Promise<ChangeSummary | null> {
      return store.changes.get(sessionId, changeId);
    },
    /** Stored rows after position `after` (-1: from the first), in path order; null for an unknown change. */
    filesPage(sessionId: string, changeId: string, after: number, limit: number): Promise<ChangeFilesPage | null> {
      return store.changes.filesPage(sessionId, changeId, after, limit);
    },
    file(sessionId: string, changeId: string, fileId: string): Promise<FileWithPatch | null> {
      return store.changes.getFile(sessionId, changeId, fileId);
    },
    /** Every file of a change with its patch (for the whole-run patch); null for an unknown change. */
    async changeFiles(sessionId: string, changeId: string): Promise<FileWithPatch[] | null> {
      if (!(await store.changes.exists(sessionId, changeId))) return null;
      return store.changes.filesWithPatches(sessionId, changeId);
    },
  };
}

export type History = ReturnType<typeof createHistory>;

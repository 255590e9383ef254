import type {
  ChangeFilesPage,
  ChangeSummary,
  ContentStoreStats,
  ContentUnavailableReason,
  DeliveryChannel,
  FileWithPatch,
  Message,
  Run,
  RunUsage,
  Session,
  SessionFilter,
  ToolCall,
  ToolCallRecord,
  ViewedResponse,
  WorkspacesResponse,
} from '../../shared/index.ts';
import type { NewChange, NewFile } from './changes.ts';
import type { FileContentInput, PendingContent, PreparedContent, RawContent, StoredContent } from './contents.ts';
import type {
  ActivityKind,
  ActivityRecords,
  Finish,
  NewActivity,
  NewToolCall,
  Recorded,
  StartOutcome,
} from './runs.ts';
import type { SessionPage } from './sessions.ts';
import type { IngestBatch, IngestOutcome } from './ingest.ts';
import type { BatchBounds, OutboxBatch } from './outbox.ts';
import type { MarkOutcome } from './viewed.ts';
import type { StoredNetMark } from './net-viewed.ts';
import type { WritePart } from './sql/clock.ts';
import type { ChangeOrder, PathTouch, StoredComment, StoredReview } from './reviews.ts';
import type { SearchCriteria, SearchFound } from './search.ts';

/**
 * The store as every caller sees it, whatever the engine (SQLite embedded, PostgreSQL shared).
 * Every method answers a Promise; names, arguments and results are those of the SQLite modules, so
 * an implementation is checked against the same suite (`server/test-support/store-engines.ts`).
 *
 * Guarantees every implementation gives:
 * - Atomic writes. Each method is one atomic step: `changes.insert` stores a change's summary, all
 *   its file rows and the newest-N retention together or not at all; `reviews.insertReview` stores
 *   the review and moves the drafts into it together; `reviews.deliver` marks the review and its
 *   comments together; `viewed.mark`/`unmark` read and write their mark together.
 * - `transaction(fn)` runs `fn` with `tx`, the same modules bound to one transaction: everything
 *   written through `tx` commits when `fn`'s promise resolves and is rolled back when it rejects (the
 *   rejection is passed on). Reads through `tx` see one consistent state: the transaction's own
 *   writes and no partial write of anyone else (another writer's transaction is seen wholly or not
 *   at all, for the whole of `fn`). `tx.transaction` nests (a savepoint: an inner rejection undoes
 *   only the inner part). Use only `tx` inside `fn` (the top-level store may wait for `fn` to end),
 *   do not keep `tx` past `fn`, and await nothing but the store inside `fn` (others may wait on it).
 * - Ordering: calls of one flow take effect in the order they are awaited; a call issued while
 *   another flow's transaction is open never runs inside that transaction and sees it committed or
 *   not at all. Lists keep the orders the modules document (oldest first by creation, then by a
 *   never-reused `seq`).
 * - The write clock: `clock.version(s)` changes whenever session `s`'s rows may have changed, by
 *   this process or any other writer of the same database (an offline run, another replica). A
 *   reader that reads `version(s)` and then the rows may keep what it built under that version:
 *   while `version(s)` answers the same value, no write to `s` has committed since. Writers bump
 *   inside the store; `bump(null)` moves every session's version (a write across sessions).
 * - Failures: a database that refuses a write rejects with an error `storageFailure` recognises
 *   (`storage_failed`, nothing of the step stored); other errors pass through unchanged.
 */
export interface Store {
  /** Which implementation answers: `sqlite` or `postgres`. */
  readonly engine: StoreEngine;
  sessions: SessionsApi;
  messages: MessagesApi;
  runs: RunsApi;
  changes: ChangesApi;
  /** Before/after bytes of changed files, for undoing runs. */
  contents: ContentsApi;
  /** Viewed marks on a session's changed files. */
  viewed: ViewedApi;
  /** Viewed marks on the paths of a session's net change (the Session changes view). */
  netViewed: NetViewedApi;
  /** Review comments and the reviews that send them to the agent. */
  reviews: ReviewsApi;
  /** The git tools' call log (global, bounded by `prune`). */
  callLog: CallLogApi;
  /** Workspaces named by stored sessions and runs (the REST git tools' repository catalog). */
  catalog: CatalogApi;
  /** A centre's writes of what its edges send (`POST /api/edge/batches`). */
  ingest: IngestApi;
  /** Search over everything recorded (indexed by the storing transactions themselves). */
  search: SearchApi;
  /** An edge's outbox of stored results its centre has not acknowledged; null on an engine that cannot be an edge. */
  outbox: OutboxApi | null;
  /** Moves on whenever a session's rows may have changed (readers cache by it). */
  clock: StoreClock;
  /** Runs `fn` in one transaction; see the guarantees above. */
  transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  /** Waits for open transactions, then closes the connection(s). A second call does nothing. */
  close(): Promise<void>;
}

export type StoreEngine = 'sqlite' | 'postgres';

/** The modules bound to one open transaction (what `transaction`'s `fn` receives). */
export type StoreTx = Omit<Store, 'close' | 'engine'>;

export interface StoreClock {
  /** Changes whenever the session's rows may have changed. Opaque; compare for equality only. */
  version(sessionId: string): Promise<string>;
  /**
   * Changes whenever the session's rows of `part` may have changed (a write naming no part counts
   * for every part), so a reader keeps the parts of an answer a write left alone.
   */
  partVersion(sessionId: string, part: WritePart): Promise<string>;
  /** Called by writers: the session written (null: a write across sessions) and what (none: anything). */
  bump(sessionId: string | null, part?: WritePart): Promise<void>;
}

export interface SessionsApi {
  get(id: string): Promise<Session | null>;
  exists(id: string): Promise<boolean>;
  /** Creates the session when an event first names it; otherwise moves its `updated_at` forward. */
  touch(id: string, now: number): Promise<void>;
  /** Only the fields given are changed. */
  upsert(id: string, fields: { title?: string; workspace?: string }, now: number): Promise<void>;
  /** A session without a workspace takes this one; one with a workspace keeps it. */
  adoptWorkspace(id: string, workspace: string): Promise<void>;
  /** Newest `updated_at` first; sessions sharing the boundary `updated_at` all go on this page. */
  page(limit: number, before: number | null, filter?: SessionFilter): Promise<SessionPage>;
  /** Distinct workspaces with their session counts, in path order; at most `max` (the most used). */
  workspaces(max: number): Promise<WorkspacesResponse>;
  /** Removes the session and everything of it (messages, runs, tool calls, changes, contents, marks, reviews). */
  delete(id: string): Promise<boolean>;
}

export interface MessagesApi {
  get(sessionId: string, id: string): Promise<Message | null>;
  insert(message: Message): Promise<void>;
  update(message: Message): Promise<void>;
  /** The newest `limit` before `before` (all when null), oldest first, boundary ties included. */
  page(sessionId: string, limit: number, before: number | null): Promise<Message[]>;
}

export interface RunsApi {
  get<K extends ActivityKind>(kind: K, sessionId: string, id: string): Promise<Recorded<ActivityRecords[K]> | null>;
  insert<K extends ActivityKind>(kind: K, a: NewActivity<K>): Promise<void>;
  recordStart(kind: ActivityKind, sessionId: string, id: string, o: StartOutcome): Promise<void>;
  finish(kind: ActivityKind, sessionId: string, id: string, f: Finish): Promise<void>;
  /** Sets a run's token usage, once (a run that has figures keeps them). */
  recordUsage(sessionId: string, runId: string, usage: RunUsage): Promise<void>;
  /** A session's activities of one kind, in start order. */
  list<K extends ActivityKind>(kind: K, sessionId: string): Promise<ActivityRecords[K][]>;
  /** Ids of the session's activities of one kind that start with `prefix` (the id itself included), in start order, at most `limit`. */
  idsStartingWith(kind: ActivityKind, sessionId: string, prefix: string, limit: number): Promise<string[]>;
  /** change_ids of the session's runs and tool calls still open. */
  openChangeIds(sessionId: string): Promise<string[]>;
  /** The ids of a run's tool calls still open, in start order. */
  openToolCalls(sessionId: string, runId: string): Promise<string[]>;
  /** Runs and tool calls still open in any session, with their workspaces. */
  openEverywhere(): Promise<{ session_id: string; change_id: string; workspace: string | null }[]>;
  getRun(sessionId: string, runId: string): Promise<Recorded<Run> | null>;
  insertRun(run: Omit<Run, 'usage'>): Promise<void>;
  insertToolCall(call: NewToolCall): Promise<void>;
  listRuns(sessionId: string): Promise<Run[]>;
  listToolCalls(sessionId: string): Promise<ToolCall[]>;
}

export interface ChangesApi {
  /** Summary, every file row (positions 0..n-1 in the given order) and the newest-N retention, atomically. */
  insert(change: NewChange, files: NewFile[], maxChangesPerSession: number): Promise<ChangeSummary>;
  exists(sessionId: string, changeId: string): Promise<boolean>;
  /** The age sweep: removes changes (and their files) stored before `cutoff`. */
  deleteOlderThan(cutoff: number): Promise<number>;
  /** Every change of a session, oldest first, with the first page of file summaries (never patches). */
  listForSession(sessionId: string): Promise<ChangeSummary[]>;
  /** The same with each change's `seq`: a stored change never changes and a seq is never reused. */
  listKeyed(sessionId: string): Promise<{ seq: number; change: ChangeSummary }[]>;
  /** The seqs of a session's changes, oldest first. */
  seqs(sessionId: string): Promise<number[]>;
  bySeq(seq: number): Promise<ChangeSummary | null>;
  get(sessionId: string, changeId: string): Promise<ChangeSummary | null>;
  /** Rows in path order after position `after` (-1: from the first); null for an unknown change. */
  filesPage(sessionId: string, changeId: string, after: number, limit: number): Promise<ChangeFilesPage | null>;
  getFile(sessionId: string, changeId: string, fileId: string): Promise<FileWithPatch | null>;
  filesWithPatches(sessionId: string, changeId: string): Promise<FileWithPatch[]>;
}

export interface ContentsApi {
  /**
   * Records each side of a stored change's files (`pending` where a content is prepared or still
   * raw); the work for `fill` (raw sides are prepared first).
   */
  record(
    sessionId: string,
    changeId: string,
    files: readonly FileContentInput[],
  ): Promise<PendingContent<PreparedContent | RawContent>[]>;
  /** Writes recorded contents within `maxBytes`, evicting older changes' contents first. */
  fill(items: readonly PendingContent[], maxBytes: number, now: number): Promise<void>;
  settlePending(sessionId: string, changeId: string, reason: ContentUnavailableReason): Promise<void>;
  markUnavailable(
    sessionId: string,
    changeId: string,
    files: readonly FileContentInput[],
    reason: ContentUnavailableReason,
  ): Promise<void>;
  get(sessionId: string, changeId: string, fileId: string): Promise<StoredContent | null>;
  forChange(sessionId: string, changeId: string): Promise<Map<string, StoredContent>>;
  /** The raw bytes of a content; null when it is not (or no longer) kept. */
  blob(sha256: string): Promise<Buffer | null>;
  stats(maxBytes: number): Promise<ContentStoreStats>;
}

export interface ViewedApi {
  list(sessionId: string): Promise<ViewedResponse>;
  mark(sessionId: string, changeId: string, fileId: string, at: number): Promise<MarkOutcome>;
  unmark(sessionId: string, changeId: string, fileId: string): Promise<MarkOutcome>;
  /** Removes the marks of every path the stored change touches; call it where the change is stored. */
  resetByChange(sessionId: string, changeId: string): Promise<number>;
}

export interface NetViewedApi {
  list(sessionId: string, fromChangeId: string): Promise<StoredNetMark[]>;
  mark(sessionId: string, fromChangeId: string, mark: StoredNetMark): Promise<void>;
  unmark(sessionId: string, fromChangeId: string, path: string, pathBase64: string): Promise<boolean>;
}

export interface ReviewsApi {
  comments(sessionId: string): Promise<StoredComment[]>;
  comment(sessionId: string, id: string): Promise<StoredComment | null>;
  commentById(id: string): Promise<StoredComment | null>;
  insertComment(c: StoredComment): Promise<void>;
  editComment(sessionId: string, id: string, body: string, now: number): Promise<void>;
  deleteComment(sessionId: string, id: string): Promise<boolean>;
  addressComment(sessionId: string, id: string, now: number): Promise<void>;
  draftIds(sessionId: string): Promise<string[]>;
  insertReview(r: StoredReview): Promise<void>;
  /**
   * Moves `commentIds` (comments of the pending review `fromId`) into `r`, a new pending review
   * stored here: what a delivery did not carry goes on as its own review.
   */
  splitReview(sessionId: string, fromId: string, r: StoredReview, commentIds: readonly string[]): Promise<void>;
  reviews(sessionId: string): Promise<StoredReview[]>;
  review(sessionId: string, id: string): Promise<StoredReview | null>;
  commentsOf(reviewId: string): Promise<StoredComment[]>;
  /** Pending reviews, oldest first (by when the person sent them, then by storing order). */
  pending(sessionId: string): Promise<StoredReview[]>;
  sessionsWithPending(): Promise<string[]>;
  setText(sessionId: string, id: string, text: string): Promise<void>;
  deliver(sessionId: string, id: string, at: number, via: DeliveryChannel, to: string | null): Promise<boolean>;
  deleteReview(sessionId: string, id: string): Promise<void>;
  changeOrder(sessionId: string, changeId: string): Promise<ChangeOrder | null>;
  touches(sessionId: string, path: string): Promise<PathTouch[]>;
}

export interface SearchApi {
  /** Newest documents first; a tripped bound is said in the answer (`capped`, `timed_out`). */
  search(criteria: SearchCriteria): Promise<SearchFound>;
  /** How much of each file's patch later stores index (characters); rows stored before keep theirs. */
  setPatchChars(chars: number): Promise<void>;
}

export interface CallLogApi {
  insert(record: ToolCallRecord): Promise<void>;
  /** Keeps the newest `keep` rows. */
  prune(keep: number): Promise<void>;
  /** Newest first. */
  page(limit: number): Promise<ToolCallRecord[]>;
}

export interface CatalogApi {
  /** Distinct session workspaces, most recently updated first; at most `max`. */
  sessionWorkspaces(max: number): Promise<string[]>;
  /** Distinct run workspaces, most recently started first; at most `max`. */
  runWorkspaces(max: number): Promise<string[]>;
}

/**
 * Edge to centre, the centre's side: one session's batch from an edge applied in one transaction,
 * by natural keys (applying it again changes nothing); refused whole when the session belongs to
 * another edge or a referenced content is neither held nor sent.
 */
export interface IngestApi {
  apply(batch: IngestBatch): Promise<IngestOutcome>;
  /** The edge that owns a session received from one; null for the server's own sessions. */
  ownerOf(sessionId: string): Promise<string | null>;
}

/** Edge to centre, the edge's side: the outbox the storing transactions fill (SQLite's triggers). */
export interface OutboxApi {
  /** Starts noting stored results, and notes the history stored before; true the first time. */
  attach(): Promise<boolean>;
  attached(): Promise<boolean>;
  databaseId(): Promise<string>;
  /** What waits, and when the centre last acknowledged a batch (kept across restarts; null: never). */
  status(): Promise<{ pending_entries: number; pending_sessions: number; last_sent_at: number | null }>;
  /** Up to `limit` sessions with entries, the one waiting longest first. */
  pendingSessions(limit: number): Promise<string[]>;
  /** The session's oldest entries within the bounds, read in one transaction. */
  read(sessionId: string, bounds: BatchBounds): Promise<OutboxBatch>;
  /** Removes acknowledged entries and remembers the contents the centre now holds (and `at`, when it acknowledged). */
  acknowledge(seqs: readonly number[], blobs: readonly string[], at?: number): Promise<void>;
  /** The centre lacks these contents: they go with the next batch again. */
  forgetBlobs(shas: readonly string[]): Promise<void>;
}

/**
 * Edge to centre (docs/contract.md section 3e): an edge (`rundiff serve --upstream URL`) sends the
 * results it stored to a central server in batches of its outbox entries. Field names snake_case,
 * times epoch ms; rows carry the columns the edge stored, booleans as 0/1.
 */

/** What an entry describes. Its row is sent as it is when sent; `row: null` means it is gone. */
export type EdgeEntryKind =
  'session' | 'session_deleted' | 'message' | 'run' | 'tool_call' | 'change' | 'contents' | 'viewed';

export const EDGE_ENTRY_KINDS: readonly EdgeEntryKind[] = [
  'session',
  'session_deleted',
  'message',
  'run',
  'tool_call',
  'change',
  'contents',
  'viewed',
];

/** A stored file row of a change, as the edge stored it. */
export interface EdgeFileRow {
  id: string;
  ord: number;
  path: string;
  old_path: string | null;
  path_base64: string | null;
  old_path_base64: string | null;
  change_type: 'added' | 'modified' | 'deleted' | 'renamed';
  additions: number;
  deletions: number;
  size_before: number | null;
  size_after: number | null;
  patch: string | null;
  patch_bytes: number;
  truncated: number;
  binary: number;
  omitted_reason: string | null;
  created_at: number;
}

/** One file's kept sides (the revert store's references). */
export interface EdgeContentRow {
  file_id: string;
  before_mode: string | null;
  before_sha256: string | null;
  before_reason: string | null;
  after_mode: string | null;
  after_sha256: string | null;
  after_reason: string | null;
}

/** One outbox entry: `id` is stable for the edge's database (its outbox position). */
export interface EdgeEntry {
  id: number;
  kind: EdgeEntryKind;
  /** The row's key within its session (run_id, message id, change_id, a mark's JSON [path, path_base64]). */
  item: string;
  row: Record<string, unknown> | null;
  /**
   * On a finished run or tool call: the edge holds its change, so the centre tells its terminal
   * event only once that change is applied (`workspace.diff.completed` first, as on the edge).
   */
  change_stored?: true;
}

/** A kept content, sent once per centre: the bytes as stored (`deflate` or `raw`), base64. */
export interface EdgeBlob {
  sha256: string;
  size: number;
  codec: 'raw' | 'deflate';
  data: string;
}

/** `POST /api/edge/batches`: one session's oldest entries, in outbox order. */
export interface EdgeBatchRequest {
  /** The edge database's id (a recreated database is a new one). */
  database_id: string;
  session_id: string;
  /**
   * The edge outbox's highest position ever given when the batch was read: the rows it carries are
   * as of then. The centre skips a batch read before one it already applied for the session.
   * Absent from older edges (their batches are applied in the order they arrive).
   */
  read_seq?: number;
  entries: EdgeEntry[];
  blobs: EdgeBlob[];
}

/** The answer: every entry id of the batch, applied (or found already applied) in one transaction. */
export interface EdgeBatchResponse {
  applied: number[];
  /** Entries that referred to something the centre does not hold (a later entry carries it). */
  skipped: number[];
}

/** `GET /api/edge/status` on an edge: what its outbox still holds and how sending goes. */
export interface EdgeOutboxStatus {
  upstream: string;
  pending_entries: number;
  pending_sessions: number;
  /** The last failure (the centre unreachable, a refusal), null after a batch went through. */
  last_error: string | null;
  last_sent_at: number | null;
}

/**
 * Viewed marks: a reviewer's "I have looked at this file" on a session's changed files
 * (docs/contract.md section 3d). Field names snake_case, times epoch ms.
 */

/**
 * One mark: a path of the session marked viewed on one of its file rows. A mark covers the rows of
 * that path in the change it was made on and in every earlier change of the session; a later change
 * that touches the path (as its path or as a rename's old path) removes it.
 */
export interface ViewedMark {
  path: string;
  /** The raw name in base64 when it is not valid UTF-8 (as on the file row). */
  path_base64?: string;
  /** The change and file row the mark was made on. */
  change_id: string;
  file_id: string;
  viewed_at: number;
}

/** A stored file row covered by a mark; `ord` is its position in its change (the files route's order). */
export interface ViewedRow {
  change_id: string;
  file_id: string;
  ord: number;
}

/** `GET /api/hermes/sessions/:id/viewed`, and the answer of every mark or unmark. */
export interface ViewedResponse {
  /** Oldest mark first. */
  viewed: ViewedMark[];
  /** Every stored row the marks cover, by change and position. */
  rows: ViewedRow[];
}

/** The body of `PUT /api/hermes/sessions/:id/viewed` (DELETE takes the same two as query parameters). */
export interface ViewedRequest {
  change_id: string;
  file_id: string;
}

/** Why the marks of a session changed. */
export type ViewedCause = 'marked' | 'unmarked' | 'reset';

/** `viewed.updated`: a session's marks after a mark, an unmark or a later change that reset some. */
export interface ViewedUpdatedPayload extends ViewedResponse {
  session_id: string;
  cause: ViewedCause;
}

/**
 * A viewed mark on the Session changes view: a path of the session's net change over a range, marked
 * viewed as its net patch then was. Marks are kept per range start (`from_change_id`); a mark counts
 * for the net file of the same path whose `net_hash` it holds, and is stale (the file's net patch has
 * changed since: a later run changed it again, or another range end shows it otherwise) when that
 * file's `net_hash` differs.
 */
export interface NetViewedMark {
  /** The net file's id (`NetFileSummary.id`, stable for its path). */
  file_id: string;
  path: string;
  /** The raw name in base64 when it is not valid UTF-8 (as on the net file). */
  path_base64?: string;
  /** The net file's `net_hash` when it was marked. */
  net_hash: string;
  /** The range end it was marked on (a run-level change id). */
  to_change_id: string;
  viewed_at: number;
  /** false: the net file's patch is no longer the one marked (shown unchecked, said). */
  current: boolean;
}

/**
 * `GET /api/hermes/sessions/:id/net-change/viewed?from=&to=`, and the answer of every mark or unmark:
 * the marks of the range's start on the paths of this range's net change.
 */
export interface NetViewedResponse {
  from_change_id: string | null;
  viewed: NetViewedMark[];
}

/** The body of `PUT .../net-change/viewed?from=&to=` (DELETE takes `file_id` as a query parameter). */
export interface NetViewedRequest {
  file_id: string;
  /** The `net_hash` of the patch the reader looked at: a mark records what was seen, not what came since. */
  net_hash: string;
}

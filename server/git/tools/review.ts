import { randomUUID } from 'node:crypto';
import type { PathKey } from '../../paths/index.ts';

/**
 * The commit gate's memory: per tool session (one MCP connection, or one REST `tool_session`) and
 * repository, the diffs that were shown. A review remembers HEAD, a hash of the index and each
 * covered file's work-tree fingerprint at review time; any later change to one of them makes it stale.
 */

/**
 * What a diff showed: `staged` = HEAD to index, `worktree` = index to work tree (untracked files as
 * new), `head_worktree` = HEAD to work tree (a `spec` naming the current HEAD).
 */
export type ReviewKind = 'staged' | 'worktree' | 'head_worktree';

export interface Review {
  kind: ReviewKind;
  /** The diff's arguments without `offset`/`max_bytes`: pages with the same key form one review. */
  argsKey: string;
  head: string | null;
  indexHash: string;
  /** Hash of the whole diff text and file list: a page only extends a review of the same diff. */
  textHash: string;
  /** Where the next page of the chain must start; null once the end was shown. */
  nextOffset: number | null;
  /** Fully shown files (new and old names) and their work-tree fingerprints at review time. */
  covered: Map<PathKey, string>;
}

/** Reviews kept per repository and session (newest win). */
const MAX_REVIEWS_PER_REPO = 16;

export class ToolSession {
  readonly id: string;
  private readonly reviews = new Map<string, Review[]>();

  constructor(id: string = randomUUID()) {
    this.id = id;
  }

  reviewsFor(repoTop: string): readonly Review[] {
    return this.reviews.get(repoTop) ?? [];
  }

  /** Starts a review (a first page), replacing one with the same arguments. */
  startReview(repoTop: string, review: Review): void {
    const list = (this.reviews.get(repoTop) ?? []).filter((r) => r.argsKey !== review.argsKey);
    list.push(review);
    while (list.length > MAX_REVIEWS_PER_REPO) list.shift();
    this.reviews.set(repoTop, list);
  }

  /** The review a page at `offset` continues, when it is the next page of the same diff in the same state. */
  continuation(repoTop: string, argsKey: string, offset: number, textHash: string): Review | null {
    const r = this.reviewsFor(repoTop).find((x) => x.argsKey === argsKey);
    if (!r || r.nextOffset !== offset || r.textHash !== textHash) return null;
    return r;
  }

  /** A commit consumes every review of its repository. */
  consume(repoTop: string): void {
    this.reviews.delete(repoTop);
  }
}

/** One file a commit would include, and which of its changes it includes. */
export interface GateNeed {
  path: PathKey;
  /** HEAD to index differs (the commit takes the staged content). */
  staged: boolean;
  /** Index to work tree differs, or the file is untracked (a `paths` commit takes the work-tree content). */
  unstaged: boolean;
}

export interface GateNow {
  head: string | null;
  indexHash: string;
  /** Current work-tree fingerprints of the needed paths. */
  fingerprints: ReadonlyMap<PathKey, string>;
}

export interface GateVerdict {
  /** Files shown by a review that no longer matches (index, HEAD or the file changed). */
  stale: PathKey[];
  /** Files no review showed. */
  uncovered: PathKey[];
}

/**
 * Pure: does a fresh review cover every part of every needed file? A staged part needs a `staged`
 * review; an unstaged part a `worktree` review; a `head_worktree` review covers both parts of a
 * `paths` commit. A file some review showed, but only in an older state, is stale; one no review
 * showed is uncovered.
 */
export function evaluateGate(
  reviews: readonly Review[],
  needs: readonly GateNeed[],
  now: GateNow,
  pathCommit: boolean,
): GateVerdict {
  const stale: PathKey[] = [];
  const uncovered: PathKey[] = [];
  const fresh = (r: Review, p: PathKey) =>
    r.head === now.head && r.indexHash === now.indexHash && r.covered.get(p) === now.fingerprints.get(p);
  for (const need of needs) {
    const p = need.path;
    const part = (kind: ReviewKind): 'fresh' | 'stale' | 'none' => {
      const showing = reviews.filter((r) => r.kind === kind && r.covered.has(p));
      if (showing.length === 0) return 'none';
      return showing.some((r) => fresh(r, p)) ? 'fresh' : 'stale';
    };
    const parts = [
      ...(need.staged ? [part('staged')] : []),
      ...(need.unstaged ? [pathCommit ? part('worktree') : ('none' as const)] : []),
    ];
    const whole = pathCommit ? part('head_worktree') : 'none';
    if (whole === 'fresh' || parts.every((x) => x === 'fresh')) continue;
    // Stale when what is missing was seen, only in an older state; uncovered when a part was never shown.
    const neverShown = parts.includes('none') && whole === 'none';
    (neverShown ? uncovered : stale).push(p);
  }
  return { stale, uncovered };
}

export interface ToolSessionStoreOptions {
  /** Sessions kept at most (least recently used dropped first). Default 256. */
  maxSessions?: number;
  /** A session unused this long is dropped (ms). Default 6 h. */
  idleMs?: number;
  now?: () => number;
}

/** Tool sessions by id for REST (`tool_session`): bounded, idle ones expire. */
export class ToolSessionStore {
  private readonly sessions = new Map<string, { session: ToolSession; usedAt: number }>();
  private readonly max: number;
  private readonly idleMs: number;
  private readonly now: () => number;

  constructor(opts: ToolSessionStoreOptions = {}) {
    this.max = opts.maxSessions ?? 256;
    this.idleMs = opts.idleMs ?? 6 * 60 * 60 * 1000;
    this.now = opts.now ?? Date.now;
  }

  get(id: string): ToolSession {
    const t = this.now();
    for (const [key, entry] of this.sessions) if (t - entry.usedAt > this.idleMs) this.sessions.delete(key);
    let entry = this.sessions.get(id);
    if (entry) this.sessions.delete(id);
    else entry = { session: new ToolSession(id), usedAt: t };
    entry.usedAt = t;
    this.sessions.set(id, entry); // re-insert: Map order is recency order
    while (this.sessions.size > this.max) {
      const oldest = this.sessions.keys().next().value;
      if (oldest === undefined) break;
      this.sessions.delete(oldest);
    }
    return entry.session;
  }

  get size(): number {
    return this.sessions.size;
  }
}

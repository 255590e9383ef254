import type { CommentSide, Review, ReviewComment, SessionReviewResponse } from '../../../shared/index.ts';

/**
 * One session's comments and reviews, oldest first, kept up to date by socket reducers. The
 * reducers mutate the state they are given (a `reactive` object in the app, a plain one in tests).
 */
export interface ReviewState {
  comments: ReviewComment[];
  reviews: Review[];
  /** Ids deleted while the page is open: a late `comment.updated` for one does not bring it back. */
  deleted: string[];
}

export function emptyReviewState(): ReviewState {
  return { comments: [], reviews: [], deleted: [] };
}

const byCreated = (a: { created_at: number }, b: { created_at: number }) => a.created_at - b.created_at;

export function loadReview(state: ReviewState, answer: SessionReviewResponse): void {
  state.comments = [...answer.comments].sort(byCreated);
  state.reviews = [...answer.reviews].sort(byCreated);
  state.deleted = [];
}

/**
 * A comment created or changed (an answer of ours or a socket event). A version older than the one
 * held is ignored: an event and a REST answer for the same edit may arrive in either order.
 */
export function applyComment(state: ReviewState, comment: ReviewComment): void {
  if (state.deleted.includes(comment.id)) return;
  const i = state.comments.findIndex((c) => c.id === comment.id);
  if (i < 0) {
    state.comments = [...state.comments, comment].sort(byCreated);
    return;
  }
  if (comment.updated_at < state.comments[i]!.updated_at) return;
  state.comments.splice(i, 1, comment);
}

export function removeComment(state: ReviewState, commentId: string): void {
  if (!state.deleted.includes(commentId)) state.deleted.push(commentId);
  const i = state.comments.findIndex((c) => c.id === commentId);
  if (i >= 0) state.comments.splice(i, 1);
}

/** A review sent or delivered; a delivered one is never taken back to pending by a late event. */
export function applyReview(state: ReviewState, review: Review): void {
  const i = state.reviews.findIndex((r) => r.id === review.id);
  if (i < 0) {
    state.reviews = [...state.reviews, review].sort(byCreated);
    return;
  }
  if (state.reviews[i]!.state === 'delivered' && review.state === 'pending') return;
  state.reviews.splice(i, 1, review);
}

/** A pending review left with no comment and no note was removed by the server. */
export function removeReview(state: ReviewState, reviewId: string): void {
  const i = state.reviews.findIndex((r) => r.id === reviewId);
  if (i >= 0) state.reviews.splice(i, 1);
}

/** The key of one file of one change, for per-file lookups. */
export const fileKey = (changeId: string, fileId: string): string => `${changeId}\n${fileId}`;

/** The comments anchored to one file of one change. */
export function commentsOnFile(state: ReviewState, changeId: string, fileId: string): ReviewComment[] {
  return state.comments.filter((c) => c.anchor.change_id === changeId && c.anchor.file_id === fileId);
}

/**
 * Where a patch's lines are commented on: the stored file row of its new side (`changeId`/`fileId`)
 * and, when its old side is another row's (a net patch: the first run's row), that row in `before`.
 */
export interface CommentOn {
  changeId: string;
  fileId: string;
  before?: { changeId: string; fileId: string } | null;
}

/** The stored row a comment on `side` of a patch is written on. */
export const rowForSide = (on: CommentOn, side: CommentSide): { changeId: string; fileId: string } =>
  side === 'before' && on.before ? on.before : on;

/** The key of a patch's composer and comments: its row's, or both rows' for a patch of two. */
export const commentOnKey = (on: CommentOn): string =>
  on.before
    ? `${fileKey(on.changeId, on.fileId)}\n${fileKey(on.before.changeId, on.before.fileId)}`
    : fileKey(on.changeId, on.fileId);

/** The comments of a patch: its row's, or with two rows the new side's of one and the old side's of the other. */
export function commentsOnPatch(state: ReviewState, on: CommentOn): ReviewComment[] {
  if (!on.before) return commentsOnFile(state, on.changeId, on.fileId);
  const before = on.before;
  return state.comments.filter((c) => {
    const row = c.anchor.side === 'before' ? before : on;
    return c.anchor.change_id === row.changeId && c.anchor.file_id === row.fileId;
  });
}

/** How many comments each file of each change holds (by `fileKey`). */
export function countByFile(comments: readonly ReviewComment[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const c of comments) {
    const key = fileKey(c.anchor.change_id, c.anchor.file_id);
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  return out;
}

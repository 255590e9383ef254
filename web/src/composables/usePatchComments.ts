import type { InjectionKey } from 'vue';
import type { ReviewComment } from '../../../shared/index.ts';
import type { Composer } from './useReview.ts';

/** What is shown under a row of a patch: its comments, then the comment being written there. */
export type ThreadItem = { kind: 'comment'; comment: ReviewComment } | { kind: 'composer'; composer: Composer };

/** What a patch offers the comment threads among its rows (they are rendered by its blocks). */
export interface PatchComments {
  /** Sends the file's composer as a new comment; on a refusal the text stays with the error. */
  submit(): Promise<void>;
  /** Closes the composer; the focus goes back to the gutter of its lines. */
  cancel(): void;
  /** A comment of this patch was deleted: the focus goes back to the gutter of its lines. */
  deleted(comment: ReviewComment): void;
}

export const PATCH_COMMENTS: InjectionKey<PatchComments> = Symbol('patch-comments');

import { computed, reactive, ref, shallowRef } from 'vue';
import {
  MAX_COMMENT_LINES,
  type DeliveryMode,
  type NewCommentBody,
  type Review,
  type ReviewComment,
  type ReviewReader,
} from '../../../shared/index.ts';
import { api, toApiError } from '../api/index.ts';
import type { SideLine, SideRange } from '../patch/index.ts';
import {
  applyComment,
  applyReview,
  countByFile,
  emptyReviewState,
  fileKey,
  loadReview,
  removeComment,
  removeReview,
  type ReviewState,
} from '../review/index.ts';
import { getSocket, onResync } from '../socket/index.ts';

/** The comment being written on one file: its lines, the text typed so far, and how sending it went. */
export interface Composer {
  range: SideRange;
  text: string;
  saving: boolean;
  error: string | null;
}

/** A line to bring into view and focus: a deep link, a link of the review panel. */
export interface LineTarget extends SideLine {
  change: string;
  file: string;
  /** A new object per request, so asking for the same line twice scrolls twice. */
  nonce: number;
}

// One review for the open session page, shared by its patches, its file rows and its panel. Kept
// outside the components: a patch's rows (and the comment being typed in one) are unmounted when
// they scroll out of the window or the file is closed, and must come back as they were.
const state = reactive<ReviewState>(emptyReviewState());
const sessionId = ref<string | null>(null);
const loading = ref(false);
const loadError = ref<string | null>(null);
/** Composers by `fileKey`: one comment is written per file at a time. */
const composers = reactive(new Map<string, Composer>());
/** Text of comments being edited, by comment id. */
const edits = reactive(new Map<string, string>());
const note = ref('');
const mode = ref<DeliveryMode>('next_prompt');
/** Who would read a review sent now (fetched with the review); null until known. */
const reader = ref<ReviewReader | null>(null);
const panelOpen = ref(false);
/** A sent review the panel brings into view and focuses as it opens (the timeline's "delivered" mark). */
const panelReview = ref<string | null>(null);
const target = shallowRef<LineTarget | null>(null);
let listening = false;
let generation = 0;
let nonce = 0;

const drafts = computed(() => state.comments.filter((c) => c.state === 'draft'));
const counts = computed(() => countByFile(state.comments));
const reviewsById = computed(() => new Map(state.reviews.map((r) => [r.id, r])));

function ours(id: string): boolean {
  return id === sessionId.value;
}

function listen(): void {
  if (listening) return;
  listening = true;
  const s = getSocket();
  s.on('comment.updated', (p) => {
    if (ours(p.session_id)) applyComment(state, p.comment);
  });
  s.on('comment.deleted', (p) => {
    if (ours(p.session_id)) removeComment(state, p.comment_id);
  });
  s.on('review.updated', (p) => {
    if (ours(p.session_id)) applyReview(state, p.review);
  });
  s.on('review.deleted', (p) => {
    if (ours(p.session_id)) removeReview(state, p.review_id);
  });
  // A later change of the session can make comments outdated (or show where their lines are now).
  s.on('workspace.diff.completed', (p) => {
    if (ours(p.session_id)) refetchSoon(p.session_id);
  });
  // Events missed while disconnected: the whole review is fetched again.
  onResync(() => {
    if (sessionId.value !== null) void fetchReview(sessionId.value);
  });
}

let refetchTimer: ReturnType<typeof setTimeout> | undefined;
/** One refetch for a burst of changes (tool calls of one run complete close together). */
function refetchSoon(id: string): void {
  clearTimeout(refetchTimer);
  refetchTimer = setTimeout(() => {
    if (sessionId.value === id) void fetchReview(id);
  }, 200);
}

async function fetchReview(id: string): Promise<void> {
  const gen = ++generation;
  loading.value = true;
  try {
    const [answer, who] = await Promise.all([
      api.getReview(id),
      api.reviewReader(id).catch((err: unknown) => {
        // The panel then says nothing about the reader: sending still works.
        console.warn(`rundiff: review reader of ${id}: ${toApiError(err).message}`);
        return null;
      }),
    ]);
    if (gen !== generation) return;
    loadReview(state, answer);
    reader.value = who;
    loadError.value = null;
  } catch (err) {
    if (gen !== generation) return;
    const e = toApiError(err);
    console.warn(`rundiff: review of ${id}: ${e.code} ${e.message}`);
    loadError.value = `Could not load the review comments: ${e.message}`;
  } finally {
    if (gen === generation) loading.value = false;
  }
}

/** Opens the review of a session page (its socket events arrive through the page's subscription). */
function open(id: string): void {
  listen();
  if (sessionId.value === id) return;
  close();
  sessionId.value = id;
  void fetchReview(id);
}

function close(): void {
  generation++;
  clearTimeout(refetchTimer);
  sessionId.value = null;
  reader.value = null;
  Object.assign(state, emptyReviewState());
  composers.clear();
  edits.clear();
  note.value = '';
  mode.value = 'next_prompt';
  panelOpen.value = false;
  panelReview.value = null;
  loadError.value = null;
  target.value = null;
}

function current(): string {
  if (sessionId.value === null) throw new Error('no session is open');
  return sessionId.value;
}

/** Writes a new draft comment; throws the server's refusal (the caller keeps the text). */
async function add(body: NewCommentBody): Promise<ReviewComment> {
  const comment = await api.addComment(current(), body);
  applyComment(state, comment);
  return comment;
}

async function edit(commentId: string, body: string): Promise<void> {
  applyComment(state, await api.editComment(current(), commentId, body));
  edits.delete(commentId);
}

async function remove(commentId: string): Promise<void> {
  await api.deleteComment(current(), commentId);
  removeComment(state, commentId);
  edits.delete(commentId);
}

async function markAddressed(commentId: string): Promise<void> {
  applyComment(state, await api.markAddressed(current(), commentId));
}

/** "Send to agent": the drafts and the note become one pending review; the note is cleared once sent. */
async function send(): Promise<Review> {
  const answer = await api.sendReview(current(), { note: note.value, mode: mode.value });
  applyReview(state, answer.review);
  for (const c of answer.comments) applyComment(state, c);
  note.value = '';
  return answer.review;
}

/** Who a review copied by hand is marked delivered to. */
export const COPIED_BY_HAND = 'copied by hand';

/**
 * "Copy review text" for a session no agent reads: the drafts and the note become one review as
 * "Send to agent" would make it, marked delivered by hand; its text is what to paste to the agent.
 */
async function sendByHand(): Promise<Review> {
  const sent = await send();
  const answer = await api.markReviewDelivered(current(), sent.id, COPIED_BY_HAND);
  applyReview(state, answer.review);
  for (const c of answer.comments) applyComment(state, c);
  return answer.review;
}

/** Asks the patch of `change`/`file` to bring `side:line` into view and focus it. */
function reveal(t: Omit<LineTarget, 'nonce'>): void {
  target.value = { ...t, nonce: ++nonce };
}

/** Most lines one comment may cover: the bound of a selection in the gutter. */
const maxLines = MAX_COMMENT_LINES;

/** The review of the open session page. */
export function useReview() {
  return {
    state,
    sessionId,
    loading,
    loadError,
    composers,
    edits,
    note,
    mode,
    reader,
    panelOpen,
    panelReview,
    target,
    drafts,
    counts,
    reviewsById,
    maxLines,
    open,
    close,
    add,
    edit,
    remove,
    markAddressed,
    send,
    sendByHand,
    reveal,
    fileKey,
  };
}

export type ReviewHandle = ReturnType<typeof useReview>;

/** A time as the page shows it: its date and its time of day (`Dec 1, 2026, 11:33:31 AM`). */
export function timeText(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/** A time in full, for a tooltip: `Tuesday, December 1, 2026 at 11:33:31 AM UTC`. */
export function fullTimeText(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'full', timeStyle: 'long' });
}

import { describe, expect, it } from 'vitest';
import type { Review, ReviewComment } from '../../../shared/index.ts';
import {
  applyComment,
  applyReview,
  canSend,
  charCount,
  commentStateText,
  commentsOnFile,
  commentsOnPatch,
  commentOnKey,
  countByFile,
  rowForSide,
  currentText,
  emptyReviewState,
  groupByFile,
  loadReview,
  removeComment,
  removeReview,
  reviewMarkerText,
  reviewStatusText,
  commentStateParts,
  isLongBody,
  splitOpenDone,
} from './index.ts';

function comment(
  id: string,
  over: Partial<ReviewComment> = {},
  anchor: Partial<ReviewComment['anchor']> = {},
): ReviewComment {
  return {
    id,
    session_id: 's',
    anchor: {
      change_id: 'run:r1',
      file_id: 'f1',
      path: 'src/a.ts',
      side: 'after',
      start_line: 1,
      end_line: 1,
      lines: ['x'],
      ...anchor,
    },
    body: `body ${id}`,
    state: 'draft',
    review_id: null,
    created_at: 100,
    updated_at: 100,
    outdated: false,
    current: null,
    delivered_at: null,
    delivered_via: null,
    addressed_at: null,
    ...over,
  };
}

function review(id: string, over: Partial<Review> = {}): Review {
  return {
    id,
    session_id: 's',
    note: '',
    mode: 'next_prompt',
    state: 'pending',
    comment_ids: [],
    created_at: 200,
    delivered_at: null,
    delivered_via: null,
    delivered_to: null,
    text: 'the text',
    ...over,
  };
}

const time = (ms: number) => `t${ms}`;

describe('review state reducers', () => {
  it('loads oldest first, adds, replaces by id and removes', () => {
    const state = emptyReviewState();
    loadReview(state, { comments: [comment('b', { created_at: 2 }), comment('a', { created_at: 1 })], reviews: [] });
    expect(state.comments.map((c) => c.id)).toEqual(['a', 'b']);
    applyComment(state, comment('c', { created_at: 3 }));
    applyComment(state, comment('a', { created_at: 1, updated_at: 150, body: 'edited' }));
    expect(state.comments.map((c) => `${c.id}:${c.body}`)).toEqual(['a:edited', 'b:body b', 'c:body c']);
    removeComment(state, 'b');
    expect(state.comments.map((c) => c.id)).toEqual(['a', 'c']);
  });

  it('an older version of a comment does not replace a newer one (event and answer in either order)', () => {
    const state = emptyReviewState();
    applyComment(state, comment('a', { updated_at: 200, body: 'new' }));
    applyComment(state, comment('a', { updated_at: 150, body: 'old' }));
    expect(state.comments[0]!.body).toBe('new');
    applyComment(state, comment('a', { updated_at: 200, state: 'pending', body: 'new' }));
    expect(state.comments[0]!.state).toBe('pending');
  });

  it('a deleted comment is not brought back by a late update', () => {
    const state = emptyReviewState();
    applyComment(state, comment('a'));
    removeComment(state, 'a');
    applyComment(state, comment('a', { updated_at: 500 }));
    expect(state.comments).toEqual([]);
    // The control: another id still arrives.
    applyComment(state, comment('b'));
    expect(state.comments.map((c) => c.id)).toEqual(['b']);
  });

  it('a delivered review stays delivered when a late pending event arrives', () => {
    const state = emptyReviewState();
    applyReview(state, review('r', { state: 'delivered', delivered_at: 300, delivered_via: 'rest' }));
    applyReview(state, review('r'));
    expect(state.reviews[0]!.state).toBe('delivered');
    const fresh = emptyReviewState();
    applyReview(fresh, review('r'));
    applyReview(fresh, review('r', { state: 'delivered', delivered_at: 300 }));
    expect(fresh.reviews[0]!.state).toBe('delivered');
  });

  it('a review the server removed (left empty) goes, others stay', () => {
    const state = emptyReviewState();
    applyReview(state, review('r1'));
    applyReview(state, review('r2', { created_at: 300 }));
    removeReview(state, 'r1');
    expect(state.reviews.map((r) => r.id)).toEqual(['r2']);
    removeReview(state, 'unknown');
    expect(state.reviews.map((r) => r.id)).toEqual(['r2']);
  });

  it('finds and counts the comments of one file of one change', () => {
    const state = emptyReviewState();
    applyComment(state, comment('a'));
    applyComment(state, comment('b', {}, { file_id: 'f2' }));
    applyComment(state, comment('c', {}, { change_id: 'run:r2' }));
    applyComment(state, comment('d'));
    expect(commentsOnFile(state, 'run:r1', 'f1').map((c) => c.id)).toEqual(['a', 'd']);
    expect(Object.fromEntries(countByFile(state.comments))).toEqual({
      'run:r1\nf1': 2,
      'run:r1\nf2': 1,
      'run:r2\nf1': 1,
    });
  });

  it('a net patch of two rows takes its new side`s comments from one and its old side`s from the other', () => {
    const state = emptyReviewState();
    applyComment(state, comment('new', {}, { change_id: 'run:r2', file_id: 'f2', side: 'after' }));
    // The last run's own old side is not the net patch's old side.
    applyComment(state, comment('r2-old', {}, { change_id: 'run:r2', file_id: 'f2', side: 'before' }));
    applyComment(state, comment('old', {}, { change_id: 'run:r1', file_id: 'f1', side: 'before' }));
    applyComment(state, comment('r1-new', {}, { change_id: 'run:r1', file_id: 'f1', side: 'after' }));
    const net = { changeId: 'run:r2', fileId: 'f2', before: { changeId: 'run:r1', fileId: 'f1' } };
    expect(commentsOnPatch(state, net).map((c) => c.id)).toEqual(['new', 'old']);
    expect(rowForSide(net, 'before')).toEqual({ changeId: 'run:r1', fileId: 'f1' });
    expect(rowForSide(net, 'after')).toMatchObject({ changeId: 'run:r2', fileId: 'f2' });
    // Control: one row alone takes both of its sides, as a run's patch does.
    const one = { changeId: 'run:r2', fileId: 'f2' };
    expect(commentsOnPatch(state, one).map((c) => c.id)).toEqual(['new', 'r2-old']);
    expect(rowForSide(one, 'before')).toBe(one);
    expect(commentOnKey(net)).not.toBe(commentOnKey(one));
  });
});

describe('review words', () => {
  it('says each comment state, with when and how a delivered one reached the agent', () => {
    expect(commentStateText(comment('a'), null, time)).toBe('Draft');
    expect(commentStateText(comment('a', { state: 'pending' }), null, time)).toBe('Pending');
    expect(commentStateText(comment('a', { state: 'addressed' }), null, time)).toBe('Addressed');
    const delivered = comment('a', { state: 'delivered', delivered_at: 900, delivered_via: 'hook' });
    expect(commentStateText(delivered, review('r', { delivered_to: 'claude-code' }), time)).toBe(
      'Delivered t900 via hook to claude-code',
    );
    expect(commentStateText(delivered, null, time)).toBe('Delivered t900 via hook');
  });

  it('says where an outdated comment is now, only when it is outdated and found', () => {
    const current = { change_id: 'run:r2', path: 'src/a.ts', start_line: 14, end_line: 16 };
    expect(currentText(comment('a', { outdated: true, current }))).toBe('now at lines 14-16');
    expect(currentText(comment('a', { outdated: true, current: { ...current, path: 'src/b.ts', end_line: 14 } }))).toBe(
      'now at src/b.ts line 14',
    );
    expect(currentText(comment('a', { outdated: true, current: null }))).toBeNull();
    expect(currentText(comment('a', { outdated: false, current }))).toBeNull();
  });

  it('a pending review says who reads it: nobody (copy it), MCP, or the next prompt when read by a hook', () => {
    expect(reviewStatusText(review('r'), time, 'none')).toBe(
      'Pending: no agent reads reviews from this session; copy its text to your agent',
    );
    expect(reviewStatusText(review('r', { mode: 'now' }), time, 'none')).not.toMatch(/next prompt/);
    expect(reviewStatusText(review('r'), time, 'mcp')).toMatch(/review_comments/);
    expect(reviewStatusText(review('r'), time, 'hook')).toMatch(/next prompt$/);
  });

  it('says a review pending (by mode) or delivered', () => {
    expect(reviewStatusText(review('r'), time)).toMatch(/^Pending: .*next prompt$/);
    expect(reviewStatusText(review('r', { mode: 'now' }), time)).toMatch(/asked to continue/);
    expect(
      reviewStatusText(
        review('r', { state: 'delivered', delivered_at: 5, delivered_via: 'rest', delivered_to: 'ci' }),
        time,
      ),
    ).toBe('Delivered t5 via REST to ci');
  });

  it('counts characters against a bound and trips it one past', () => {
    expect(charCount('abc', 3)).toEqual({ text: '3 / 3', over: false });
    expect(charCount('abcd', 3)).toEqual({ text: '4 / 3', over: true });
    expect(charCount('x'.repeat(8001), 8000).text).toBe('8,001 / 8,000');
  });

  it('can send a draft or a note, not nothing, not a note over its bound', () => {
    expect(canSend(0, '', 10)).toBe(false);
    expect(canSend(0, '   ', 10)).toBe(false);
    expect(canSend(1, '', 10)).toBe(true);
    expect(canSend(0, 'note', 10)).toBe(true);
    expect(canSend(1, 'x'.repeat(11), 10)).toBe(false);
  });
});

describe('the panel and the cards', () => {
  it('parts a delivered comment state around its time, other states have none', () => {
    const r = review('r1', { state: 'delivered', delivered_to: 'claude-code', delivered_via: 'hook' });
    expect(
      commentStateParts(comment('a', { state: 'delivered', delivered_at: 500, delivered_via: 'hook' }), r),
    ).toEqual({
      label: 'Delivered',
      at: 500,
      via: ' via hook to claude-code',
    });
    expect(commentStateParts(comment('b', { state: 'pending' }), null)).toEqual({
      label: 'Pending',
      at: null,
      via: '',
    });
  });

  it('a body is long past 600 characters or 8 lines, not at them', () => {
    expect(isLongBody('x'.repeat(600))).toBe(false);
    expect(isLongBody('x'.repeat(601))).toBe(true);
    expect(isLongBody(Array(8).fill('l').join('\n'))).toBe(false);
    expect(isLongBody(Array(9).fill('l').join('\n'))).toBe(true);
  });

  it('splits open comments (draft, pending) from done ones (delivered, addressed), keeping their order', () => {
    const all = [
      comment('a', { state: 'delivered' }),
      comment('b', { state: 'draft' }),
      comment('c', { state: 'addressed' }),
      comment('d', { state: 'pending', outdated: true }),
    ];
    const { open, done } = splitOpenDone(all);
    expect(open.map((c) => c.id)).toEqual(['b', 'd']);
    expect(done.map((c) => c.id)).toEqual(['a', 'c']);
  });

  it('says in the timeline who received a review, how, and what it held', () => {
    const delivered = { state: 'delivered' as const, delivered_at: 300 };
    expect(
      reviewMarkerText(
        review('r', { ...delivered, delivered_via: 'hook', delivered_to: 'claude-code', comment_ids: ['a', 'b'] }),
      ),
    ).toBe('Review delivered to claude-code via hook · 2 comments');
    expect(reviewMarkerText(review('r', { ...delivered, delivered_via: 'rest', comment_ids: ['a'], note: 'n' }))).toBe(
      'Review delivered via REST · 1 comment and a note',
    );
    expect(reviewMarkerText(review('r', { ...delivered, delivered_via: 'mcp', delivered_to: 'x', note: 'n' }))).toBe(
      'Review delivered to x via MCP · a note',
    );
  });
});

describe('groupByFile', () => {
  it('one group per file of each change, in path order, comments by side and line', () => {
    const groups = groupByFile([
      comment('z1', { created_at: 1 }, { path: 'z.ts', file_id: 'fz', start_line: 9 }),
      comment('a2', { created_at: 2 }, { path: 'a.ts', file_id: 'fa', start_line: 5 }),
      comment('a1', { created_at: 3 }, { path: 'a.ts', file_id: 'fa', start_line: 2 }),
      comment('ab', { created_at: 4 }, { path: 'a.ts', file_id: 'fa', start_line: 7, side: 'before' }),
      // The same path changed again by a later run: a group of its own, after the older one.
      comment('a9', { created_at: 5 }, { path: 'a.ts', file_id: 'fa2', change_id: 'run:r2', start_line: 1 }),
    ]);
    expect(groups.map((g) => `${g.path}@${g.change_id}: ${g.comments.map((c) => c.id).join(',')}`)).toEqual([
      'a.ts@run:r1: ab,a1,a2',
      'a.ts@run:r2: a9',
      'z.ts@run:r1: z1',
    ]);
  });
});

import { computed, nextTick, onBeforeUnmount, provide, ref, shallowRef, watch, type Ref } from 'vue';
import type { CommentSide, ReviewComment } from '../../../shared/index.ts';
import { toApiError } from '../api/index.ts';
import {
  extendRange,
  indexLines,
  placeUnderRows,
  selectRange,
  sideLineKey,
  tabStopIn,
  type PatchLayout,
  type PatchLine,
  type PatchRow,
  type SideLine,
  type SideRange,
} from '../patch/index.ts';
import { commentOnKey, commentsOnPatch, rowForSide, type CommentOn } from '../review/index.ts';
import type { SideText } from './useFileContent.ts';
import { PATCH_COMMENTS, type ThreadItem } from './usePatchComments.ts';
import { useReview } from './useReview.ts';

/** What the comment gutter reads of its patch. */
export interface CommentGutterOf {
  /** The stored file (or, for a net patch, the two files) whose lines are commented on; absent: no gutter. */
  commentOn: Ref<CommentOn | null | undefined>;
  wholeFile: Ref<SideText | null | undefined>;
  content: Ref<SideText | null | undefined>;
  path: Ref<string>;
  lines: Ref<readonly PatchLine[]>;
  rows: Ref<readonly PatchRow[]>;
  layout: Ref<PatchLayout>;
  /** The patch's element and its table of rows. */
  root: Ref<HTMLElement | null>;
  table: Ref<HTMLTableElement | null>;
  blocks: Ref<readonly (readonly PatchRow[])[]>;
  /** The blocks rendered now. */
  blockIndices: Ref<readonly number[]>;
  /** Renders the block of a row and returns its element (null: it never appeared). */
  showRow(row: number): Promise<HTMLElement | null>;
  /** Opens the fold or gap that hides a line; false when nothing does. */
  unhide(line: SideLine): boolean;
}

/**
 * Comments on lines: a button in each line's gutter (click: one line; shift-click or a drag over the
 * gutter: a range on one side within one hunk), a composer under the range's last line, and the
 * file's comments under theirs. The composer's text is kept by the review, so it survives the
 * patch's blocks (or the patch itself) being unmounted. A line asked for (a deep link, the review
 * panel) is unhidden, scrolled into view and its button focused.
 */
export function useCommentGutter(of: CommentGutterOf) {
  const review = useReview();
  const commenting = computed(() => !!of.commentOn.value && !of.wholeFile.value);
  const ownKey = computed(() => {
    const on = of.commentOn.value;
    return on ? commentOnKey(on) : '';
  });
  const fileComments = computed<ReviewComment[]>(() => {
    const on = of.commentOn.value;
    return on ? commentsOnPatch(review.state, on) : [];
  });
  const composer = computed(() => (commenting.value ? (review.composers.get(ownKey.value) ?? null) : null));
  const lineIndex = computed(() => indexLines(of.lines.value, of.rows.value, of.layout.value));
  const anchorRange = (c: ReviewComment): SideRange => ({
    side: c.anchor.side,
    start: c.anchor.start_line,
    end: c.anchor.end_line,
  });
  const placed = computed(() => {
    const items: ThreadItem[] = fileComments.value.map((comment) => ({ kind: 'comment', comment }));
    // The whole-file listing takes no comments: they are listed above it.
    if (of.wholeFile.value) return { byRow: new Map<number, ThreadItem[]>(), unplaced: items };
    if (composer.value) items.push({ kind: 'composer', composer: composer.value });
    if (items.length === 0) return { byRow: new Map<number, ThreadItem[]>(), unplaced: [] };
    return placeUnderRows(lineIndex.value, items, (i) =>
      i.kind === 'comment' ? anchorRange(i.comment) : i.composer.range,
    );
  });
  const threads = computed(() => placed.value.byRow);
  /** A drag over the gutter in progress: where it began and the range it covers so far. */
  const drag = shallowRef<{ anchor: SideLine; range: SideRange } | null>(null);
  /** Where the last click began a range: shift-click extends from there. */
  let anchor: SideLine | null = null;
  const selection = computed(() => drag.value?.range ?? composer.value?.range ?? null);
  /** The gutter button last focused: the one Tab comes back to (a roving tab stop). */
  const focusKey = ref<string | null>(null);
  // One tab stop per patch, among the rendered rows; only the block holding it is given its key, so
  // moving the window does not re-render the other blocks.
  const tabStop = computed(() =>
    commenting.value
      ? tabStopIn(of.blockIndices.value, of.blocks.value, of.lines.value, of.layout.value, focusKey.value)
      : null,
  );
  let alive = true;

  function gutterAt(target: EventTarget | null): (SideLine & { el: HTMLButtonElement }) | null {
    const el = target instanceof Element ? target.closest<HTMLButtonElement>('button.cgut') : null;
    if (!el || !of.table.value?.contains(el)) return null;
    return { side: el.dataset.side as CommentSide, line: Number(el.dataset.line), el };
  }

  /** The range a click on `to` selects: one line, or (extending) from the anchor to it. */
  function rangeTo(to: SideLine, extend: boolean): SideRange {
    const c = composer.value;
    const from = extend ? (anchor ?? (c ? { side: c.range.side, line: c.range.start } : null)) : null;
    const range = extendRange(lineIndex.value, from, to, review.maxLines);
    if (range) return range;
    anchor = { side: to.side, line: to.line };
    return { side: to.side, start: to.line, end: to.line };
  }

  function onMouseDown(e: MouseEvent): void {
    const g = gutterAt(e.target);
    if (!g || e.button !== 0) return;
    // No text selection while dragging over the gutter; the focus follows to the composer.
    e.preventDefault();
    const range = rangeTo(g, e.shiftKey);
    drag.value = { anchor: anchor ?? { side: g.side, line: g.line }, range };
    document.addEventListener('mouseup', onMouseUp, { once: true });
  }

  function onMouseOver(e: MouseEvent): void {
    const d = drag.value;
    if (!d || !(e.target instanceof Element)) return;
    const el = e.target.closest('tr')?.querySelector<HTMLButtonElement>(`button.cgut[data-side="${d.anchor.side}"]`);
    if (!el) return;
    const to = { side: d.anchor.side, line: Number(el.dataset.line) };
    drag.value = { anchor: d.anchor, range: selectRange(lineIndex.value, d.anchor, to, review.maxLines) };
  }

  function onMouseUp(): void {
    const d = drag.value;
    drag.value = null;
    if (d && alive) void openComposer(d.range);
  }

  function onClick(e: MouseEvent): void {
    const g = gutterAt(e.target);
    // A mouse click was handled by its mousedown and mouseup; this is Enter or Space on the button.
    if (!g || e.detail !== 0) return;
    void openComposer(rangeTo(g, e.shiftKey));
  }

  function onFocusIn(e: FocusEvent): void {
    const g = gutterAt(e.target);
    if (g) focusKey.value = sideLineKey(g);
  }

  function onKeyDown(e: KeyboardEvent): void {
    const g = gutterAt(e.target);
    if (!g || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === 'Enter' && e.shiftKey) {
      e.preventDefault();
      void openComposer(rangeTo(g, true));
      return;
    }
    const all = [...(of.table.value?.querySelectorAll<HTMLButtonElement>('button.cgut') ?? [])];
    let next: HTMLButtonElement | undefined;
    if (e.key === 'ArrowUp' || e.key === 'ArrowDown') {
      // Split: up and down stay in the column; unified has one column of buttons.
      const column = of.layout.value === 'split' ? all.filter((b) => b.dataset.side === g.side) : all;
      next = column[column.indexOf(g.el) + (e.key === 'ArrowDown' ? 1 : -1)];
    } else if ((e.key === 'ArrowLeft' || e.key === 'ArrowRight') && of.layout.value === 'split') {
      const other = e.key === 'ArrowLeft' ? 'before' : 'after';
      next = g.el.closest('tr')?.querySelector<HTMLButtonElement>(`button.cgut[data-side="${other}"]`) ?? undefined;
    } else return;
    e.preventDefault();
    if (!next) return;
    next.focus();
    next.scrollIntoView({ block: 'nearest' });
  }

  async function openComposer(range: SideRange): Promise<void> {
    const open = review.composers.get(ownKey.value);
    // A composer already open keeps its text and moves to the new lines.
    if (open) {
      open.range = range;
      open.error = null;
    } else review.composers.set(ownKey.value, { range, text: '', saving: false, error: null });
    await nextTick();
    of.root.value?.querySelector<HTMLTextAreaElement>('[data-testid="comment-composer"] textarea')?.focus();
  }

  /** Focuses the gutter button of a line (after the composer closes or a comment goes). */
  function focusLine(l: SideLine): void {
    const el =
      of.table.value?.querySelector<HTMLButtonElement>(`button.cgut[data-side="${l.side}"][data-line="${l.line}"]`) ??
      of.table.value?.querySelector<HTMLButtonElement>(
        `tr[data-row="${lineIndex.value.rowOf.get(sideLineKey(l))}"] button.cgut`,
      );
    el?.focus({ preventScroll: true });
  }

  async function submit(): Promise<void> {
    const c = composer.value;
    const on = of.commentOn.value;
    if (!c || !on || c.saving) return;
    c.saving = true;
    c.error = null;
    try {
      const row = rowForSide(on, c.range.side);
      const comment = await review.add({
        change_id: row.changeId,
        file_id: row.fileId,
        side: c.range.side,
        start_line: c.range.start,
        end_line: c.range.end,
        body: c.text,
      });
      review.composers.delete(ownKey.value);
      await nextTick();
      of.root.value?.querySelector<HTMLElement>(`[data-comment-id="${CSS.escape(comment.id)}"]`)?.focus();
    } catch (err) {
      c.error = toApiError(err).message;
    } finally {
      c.saving = false;
    }
  }

  async function cancel(): Promise<void> {
    const c = composer.value;
    review.composers.delete(ownKey.value);
    if (!c) return;
    await nextTick();
    focusLine({ side: c.range.side, line: c.range.end });
  }

  provide(PATCH_COMMENTS, {
    submit,
    cancel: () => void cancel(),
    deleted: (c: ReviewComment) => void nextTick(() => focusLine({ side: c.anchor.side, line: c.anchor.end_line })),
  });

  /** Why a line asked for (a deep link, the review panel) cannot be shown; null when it was found. */
  const missingLine = ref<string | null>(null);
  /** A line asked for before the recorded contents arrived: tried again when they do. */
  let pendingReveal: SideLine | null = null;

  /** Scrolls a line into view (a deep link, the review panel) and focuses its gutter button. */
  async function revealLine(t: SideLine): Promise<void> {
    review.target.value = null;
    missingLine.value = null;
    pendingReveal = null;
    let row = lineIndex.value.rowOf.get(sideLineKey(t));
    if (row === undefined && of.unhide(t)) row = lineIndex.value.rowOf.get(sideLineKey(t));
    await nextTick();
    if (row === undefined) {
      // Not in the patch and not in what the recorded contents can add: said, and the patch is shown.
      if (of.content.value === null || of.content.value === undefined) pendingReveal = t;
      missingLine.value =
        of.content.value && !of.wholeFile.value
          ? `Line ${t.line} (${t.side}) is not in this file as the change recorded it.`
          : `Line ${t.line} (${t.side}) is outside the stored patch's hunks, and the server keeps no contents of this file to show it.`;
      of.root.value?.scrollIntoView({ block: 'start' });
      return;
    }
    const el = await of.showRow(row);
    if (el) {
      el.scrollIntoView({ block: 'center' });
      focusLine(t);
      return;
    }
    console.warn(`rundiff: could not bring line ${t.line} (${t.side}) of ${of.path.value} into view`);
  }

  watch(
    () => review.target.value,
    (t) => {
      const on = of.commentOn.value;
      if (!t || !on) return;
      const row = rowForSide(on, t.side);
      if (t.change === row.changeId && t.file === row.fileId) void revealLine(t);
    },
    { immediate: true },
  );
  // The recorded contents arrived after a line outside the hunks was asked for: try it again.
  watch(of.content, (c) => {
    const t = pendingReveal;
    if (c && t) void revealLine(t);
  });
  onBeforeUnmount(() => {
    alive = false;
    document.removeEventListener('mouseup', onMouseUp);
  });

  return {
    commenting,
    placed,
    threads,
    selection,
    tabStop,
    missingLine,
    onMouseDown,
    onMouseOver,
    onClick,
    onKeyDown,
    onFocusIn,
  };
}

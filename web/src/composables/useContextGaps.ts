import { computed, shallowRef, type Ref } from 'vue';
import {
  buildRows,
  closedGaps,
  commentLine,
  contextGaps,
  CONTEXT_STEP_LINES,
  gapHolding,
  shownOf,
  sideLineKey,
  skippedBeforeHunks,
  wholeFileView,
  withContext,
  type PatchLayout,
  type PatchLine,
  type SideLine,
} from '../patch/index.ts';
import type { SideText } from './useFileContent.ts';

/**
 * The unchanged lines a patch hides and the reader opens: the folds inside its hunks, and (when the
 * server keeps the file's contents) the gaps between the hunks and below the last, filled from the
 * recorded side. With `wholeFile` the recorded side is shown whole instead. Gives the lines shown
 * and their rows in `layout`.
 */
export function useContextGaps(
  patchLines: Ref<readonly PatchLine[]>,
  content: Ref<SideText | null | undefined>,
  wholeFile: Ref<SideText | null | undefined>,
  layout: Ref<PatchLayout>,
) {
  /** Gaps between the hunks (by hunk number, -1 below the last) the reader opened: how many lines of each. */
  const openGaps = shallowRef<ReadonlyMap<number, number>>(new Map());
  const openFolds = shallowRef<ReadonlySet<number>>(new Set());
  const lines = computed(() => {
    const whole = wholeFile.value;
    if (whole) return wholeFileView(patchLines.value, whole.side, whole.lines);
    const c = content.value;
    if (!c) return patchLines.value;
    return withContext(patchLines.value, c.side, c.lines, openGaps.value);
  });
  const rows = computed(() => buildRows(lines.value, layout.value, openFolds.value));
  /** The gaps the recorded contents can fill; null without contents or with the whole file shown. */
  const gaps = computed(() => {
    const c = content.value;
    if (!c || wholeFile.value) return null;
    return contextGaps(patchLines.value, c.side, c.lines.length);
  });
  /** The gaps still closed: each hunk header's line index with its count, and the one below the last. */
  const closed = computed(() => (gaps.value ? closedGaps(lines.value, gaps.value, openGaps.value) : null));
  const skipped = computed(() => skippedBeforeHunks(patchLines.value));
  /** What each hunk header says it skips: expandable counts when contents are known, else the stored patch's gaps. */
  const skippedView = computed<ReadonlyMap<number, number>>(() => {
    const c = closed.value;
    if (!c) return content.value && wholeFile.value ? new Map() : skipped.value;
    return new Map([...c.above].map(([i, g]) => [i, g.count]));
  });

  /** Shows `CONTEXT_STEP_LINES` more lines of a gap, or (`all`) the whole gap. */
  function openGap(hunk: number, all = true): void {
    const shown = openGaps.value.get(hunk) ?? 0;
    openGaps.value = new Map([...openGaps.value, [hunk, all ? Infinity : shown + CONTEXT_STEP_LINES]]);
  }

  /** A hunk header's button was clicked: open the gap above it, a step or (`all`) whole. */
  function expandAbove(lineIndex: number, all = false): void {
    const gap = closed.value?.above.get(lineIndex);
    if (gap) openGap(gap.hunk, all);
  }

  function openFold(id: number): void {
    openFolds.value = new Set([...openFolds.value, id]);
  }

  /**
   * Opens what hides a line: the fold inside a hunk that holds it, or the gap between hunks (from the
   * recorded contents). False when the patch has nowhere to show it.
   */
  function unhide(t: SideLine): boolean {
    const key = sideLineKey(t);
    const index = lines.value.findIndex((l) => {
      const on = commentLine(l, t.side === 'before' ? 'old' : 'new');
      return on !== null && sideLineKey(on) === key;
    });
    if (index >= 0) {
      const fold = rows.value.find((r) => r.kind === 'fold' && index >= r.id && index < r.id + r.count);
      if (fold?.kind !== 'fold') return false;
      openFold(fold.id);
      return true;
    }
    const gap = gaps.value ? gapHolding(gaps.value, t.side, t.line) : undefined;
    if (!gap || shownOf(gap, openGaps.value) >= gap.count) return false;
    openGap(gap.hunk);
    return true;
  }

  return { lines, rows, closed, skippedView, openGap, expandAbove, openFold, unhide };
}

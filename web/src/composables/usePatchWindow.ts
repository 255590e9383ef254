import { computed, markRaw, nextTick, onBeforeUnmount, onMounted, ref, shallowRef, watch, type Ref } from 'vue';
import { BLOCK_ROWS, blockOfLines, blocksOfLines, splitBlocks, type PatchLine, type PatchRow } from '../patch/index.ts';
import { RowHeights, windowRange, type WindowRange } from '../timeline/index.ts';

/** Height of a row not measured yet (px): one line of 12 px monospace at line-height 1.45. */
const ROW_ESTIMATE_PX = 18;
/** Blocks rendered beyond each edge of the view, and at most (a tall window, tiny measurements). */
const WINDOW = { overscan: 1, maxRows: 12 };

/**
 * A long patch as a windowed list of blocks of rows, scrolled with the page: only the blocks in view
 * (and one on each side) are in the DOM, between two spacers as tall as the blocks they stand for,
 * so a 4,000-line patch costs what a 300-line one does however far it is scrolled. `table` is the
 * element holding the blocks (`tbody[data-block]`); a block re-renders when its `versions` entry
 * is bumped (`touch`).
 */
export function usePatchWindow(lines: Ref<readonly PatchLine[]>, rows: Ref<readonly PatchRow[]>) {
  const table = ref<HTMLTableElement | null>(null);
  const blocks = computed(() => splitBlocks(rows.value));
  /** The block each line is shown in, to re-render only that block when the line is enhanced. */
  const blockOfLine = computed(() => blockOfLines(blocks.value, lines.value.length));
  const heights = markRaw(new RowHeights(0, BLOCK_ROWS * ROW_ESTIMATE_PX));
  const range = shallowRef<WindowRange>({ start: 0, end: 1 });
  /** Bumped when a measurement moves blocks (the heights themselves are not reactive). */
  const measuredTick = ref(0);
  const rendered = ref(false);
  const versions = shallowRef<number[]>([]);
  const blockIndices = computed(() => {
    const end = Math.min(range.value.end, blocks.value.length);
    return Array.from({ length: Math.max(0, end - range.value.start) }, (_, i) => range.value.start + i);
  });
  const spacers = computed(() => {
    void measuredTick.value;
    const { start, end } = range.value;
    return { top: heights.offsetOf(start), bottom: heights.total() - heights.offsetOf(end) };
  });
  let alive = true;

  /** Records the rendered blocks' heights; true when a block's height changed. */
  function measure(): boolean {
    const el = table.value;
    if (!el) return false;
    let changed = false;
    for (const body of el.querySelectorAll<HTMLElement>('tbody[data-block]')) {
      const b = Number(body.dataset.block);
      const px = body.getBoundingClientRect().height;
      // The first full block tells what a row measures here (wrapped lines on a phone, a font).
      if (b === 0 && blocks.value[0]!.length === BLOCK_ROWS && px > 0) heights.setEstimate(px);
      if (heights.set(b, px)) changed = true;
    }
    if (changed) measuredTick.value++;
    return changed;
  }

  /** Moves the window to the blocks the viewport shows; measures again until nothing moves. */
  function update(): void {
    const el = table.value;
    if (!el || !alive) return;
    measure();
    // The page (or a scroll box around the list) scrolls, not the patch: its top edge against the viewport.
    const top = -el.getBoundingClientRect().top;
    const next = windowRange(heights, top, window.innerHeight, WINDOW);
    if (next.start !== range.value.start || next.end !== range.value.end) {
      range.value = next;
      void nextTick(() => {
        if (measure()) update();
        else rendered.value = true;
      });
    } else rendered.value = true;
  }

  let frame = 0;
  function onScroll(): void {
    if (frame !== 0) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      update();
    });
  }

  /** Re-renders the blocks that show any of these lines. */
  function touch(indices: Iterable<number>): void {
    const changed = blocksOfLines(blockOfLine.value, indices);
    if (changed.size === 0) return;
    const next = versions.value.slice();
    for (const b of changed) next[b] = (next[b] ?? 0) + 1;
    versions.value = next;
  }

  /**
   * Renders the block holding row `row` and returns the row's element. The block may be outside the
   * window: it is rendered, then the caller scrolls to the row (the scroll moves the window with it).
   * A measurement may move the window in between; tried again on the next frame. Null when it
   * never appeared.
   */
  async function showRow(row: number): Promise<HTMLElement | null> {
    const block = Math.floor(row / BLOCK_ROWS);
    for (let attempt = 0; attempt < 10 && alive; attempt++) {
      const el = table.value?.querySelector<HTMLElement>(`tr[data-row="${row}"]`);
      if (el) return el;
      range.value = {
        start: Math.max(0, block - WINDOW.overscan),
        end: Math.min(blocks.value.length, block + WINDOW.overscan + 1),
      };
      await nextTick();
      await new Promise((r) => requestAnimationFrame(r));
    }
    return null;
  }

  onMounted(() => {
    heights.resize(blocks.value.length);
    // Capture: a scroll box between the patch and the page (a shown-all list) does not bubble its scroll.
    document.addEventListener('scroll', onScroll, { capture: true, passive: true });
    window.addEventListener('resize', onScroll, { passive: true });
    void nextTick(update);
  });
  onBeforeUnmount(() => {
    alive = false;
    if (frame !== 0) cancelAnimationFrame(frame);
    document.removeEventListener('scroll', onScroll, { capture: true });
    window.removeEventListener('resize', onScroll);
  });
  // A new layout, an opened fold or other lines give new blocks: every measurement is stale.
  watch(rows, () => {
    heights.resize(0);
    heights.resize(blocks.value.length);
    measuredTick.value++;
    void nextTick(update);
  });

  return { table, blocks, range, blockIndices, spacers, rendered, versions, update, touch, showRow };
}

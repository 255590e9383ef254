/**
 * The arithmetic of a windowed list: which rows to render for a scroll position, and where each
 * row starts. Rows are measured once rendered (an expanded patch makes a row tall) and estimated
 * until then. Offsets come from a Fenwick tree of (measured - estimate), so a measurement and an
 * offset each cost O(log n) even for 100,000 rows.
 */
export class RowHeights {
  private n = 0;
  private estimate: number;
  /** Measured heights in px; 0 = not measured. */
  private measured = new Float64Array(0);
  /** Fenwick tree (1-based) over measured - estimate of measured rows. */
  private tree = new Float64Array(1);

  constructor(count: number, estimatePx: number) {
    this.estimate = Math.max(1, estimatePx);
    this.resize(count);
  }

  get count(): number {
    return this.n;
  }

  get estimatePx(): number {
    return this.estimate;
  }

  /** A new row count; measurements of the rows that remain are kept. */
  resize(count: number): void {
    const keep = this.measured.subarray(0, Math.min(this.n, count));
    this.n = Math.max(0, count);
    this.measured = new Float64Array(this.n);
    this.measured.set(keep);
    this.rebuild();
  }

  /** A better estimate for unmeasured rows (the first measured row, typically). */
  setEstimate(px: number): void {
    if (px <= 0 || px === this.estimate) return;
    this.estimate = px;
    this.rebuild();
  }

  /**
   * Records a row's rendered height. A height of 0 (a row inside a hidden container, or detached)
   * says nothing about the row and is ignored. Returns true when the layout changed.
   */
  set(index: number, px: number): boolean {
    if (index < 0 || index >= this.n || !(px > 0)) return false;
    const before = this.measured[index]!;
    if (before === px) return false;
    this.measured[index] = px;
    this.add(index, px - (before === 0 ? this.estimate : before));
    return true;
  }

  heightOf(index: number): number {
    const m = this.measured[index] ?? 0;
    return m > 0 ? m : this.estimate;
  }

  /** Where row `index` starts (px from the top of the list); `offsetOf(count)` is the whole height. */
  offsetOf(index: number): number {
    const i = Math.max(0, Math.min(index, this.n));
    let sum = 0;
    for (let k = i; k > 0; k -= k & -k) sum += this.tree[k]!;
    return i * this.estimate + sum;
  }

  total(): number {
    return this.offsetOf(this.n);
  }

  /** The row under `y` px from the top (clamped to the rows there are). */
  indexAt(y: number): number {
    if (this.n === 0) return 0;
    let lo = 0;
    let hi = this.n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.offsetOf(mid) <= y) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  private add(index: number, delta: number): void {
    for (let k = index + 1; k <= this.n; k += k & -k) this.tree[k]! += delta;
  }

  private rebuild(): void {
    this.tree = new Float64Array(this.n + 1);
    for (let i = 0; i < this.n; i++) {
      const m = this.measured[i]!;
      if (m > 0) this.add(i, m - this.estimate);
    }
  }
}

/** Rows to render: `start` inclusive, `end` exclusive. */
export interface WindowRange {
  start: number;
  end: number;
}

export interface WindowOptions {
  /** Rows rendered beyond each edge of the viewport, so keyboard moves and short scrolls find them. */
  overscan: number;
  /**
   * Upper bound of rendered rows whatever the measurements say (rows measured tiny, a viewport
   * hundreds of rows tall): the point of the window is that this stays small.
   */
  maxRows: number;
}

/** The rows a viewport of `viewportPx` scrolled to `scrollTop` shows, with the overscan, capped at `maxRows`. */
export function windowRange(
  heights: RowHeights,
  scrollTop: number,
  viewportPx: number,
  opts: WindowOptions,
): WindowRange {
  const n = heights.count;
  if (n === 0) return { start: 0, end: 0 };
  const top = Math.max(0, scrollTop);
  const first = heights.indexAt(top);
  const last = heights.indexAt(top + Math.max(0, viewportPx));
  const start = Math.max(0, first - opts.overscan);
  const end = Math.min(n, last + 1 + opts.overscan, start + Math.max(1, opts.maxRows));
  return { start, end };
}

/** The scrollTop that shows row `index` with the least movement (`nearest`), or at the top (`start`). */
export function scrollTopFor(
  heights: RowHeights,
  index: number,
  scrollTop: number,
  viewportPx: number,
  align: 'nearest' | 'start',
): number {
  const top = heights.offsetOf(index);
  const bottom = top + heights.heightOf(index);
  if (align === 'start') return top;
  if (top < scrollTop) return top;
  if (bottom > scrollTop + viewportPx) return Math.max(0, bottom - viewportPx);
  return scrollTop;
}

/** The row a key moves to from `index` in a list of `count`, or null when the key leaves the list. */
export function keyTarget(key: string, index: number, count: number, pageRows: number): number | null {
  const last = count - 1;
  switch (key) {
    case 'ArrowDown':
      return Math.min(last, index + 1);
    case 'ArrowUp':
      return Math.max(0, index - 1);
    // j / k continue into the neighbouring lists of the page at the ends.
    case 'j':
      return index < last ? index + 1 : null;
    case 'k':
      return index > 0 ? index - 1 : null;
    case 'PageDown':
      return Math.min(last, index + Math.max(1, pageRows));
    case 'PageUp':
      return Math.max(0, index - Math.max(1, pageRows));
    case 'Home':
      return 0;
    case 'End':
      return last;
    default:
      return null;
  }
}

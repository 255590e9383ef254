import { describe, expect, it } from 'vitest';
import { keyTarget, RowHeights, scrollTopFor, windowRange } from './windowing.ts';

const opts = { overscan: 5, maxRows: 60 };

describe('row heights', () => {
  it('estimates unmeasured rows and folds in measured ones', () => {
    const h = new RowHeights(300, 24);
    expect(h.total()).toBe(7200);
    expect(h.offsetOf(10)).toBe(240);
    expect(h.set(3, 124)).toBe(true); // an expanded patch
    expect(h.set(3, 124)).toBe(false);
    expect(h.offsetOf(3)).toBe(72);
    expect(h.offsetOf(4)).toBe(196);
    expect(h.total()).toBe(7300);
    h.set(3, 24);
    expect(h.total()).toBe(7200);
  });

  it('ignores a height of 0 (a row in a hidden container tells nothing)', () => {
    const h = new RowHeights(10, 20);
    expect(h.set(2, 0)).toBe(false);
    expect(h.set(-1, 30)).toBe(false);
    expect(h.set(10, 30)).toBe(false);
    expect(h.total()).toBe(200);
  });

  it('finds the row under a point, at the edges and past the end', () => {
    const h = new RowHeights(100, 20);
    h.set(0, 50);
    expect(h.indexAt(0)).toBe(0);
    expect(h.indexAt(49)).toBe(0);
    expect(h.indexAt(50)).toBe(1);
    expect(h.indexAt(69)).toBe(1);
    expect(h.indexAt(70)).toBe(2);
    expect(h.indexAt(1e9)).toBe(99);
    expect(h.indexAt(-5)).toBe(0);
  });

  it('a new estimate keeps measured rows; resizing keeps the rows that remain', () => {
    const h = new RowHeights(4, 10);
    h.set(1, 40);
    h.setEstimate(20);
    expect(h.total()).toBe(20 + 40 + 20 + 20);
    h.resize(6);
    expect(h.total()).toBe(100 + 40);
    h.resize(1);
    expect(h.total()).toBe(20);
  });

  it('offsets stay exact over 100,000 rows with scattered measurements', () => {
    const h = new RowHeights(100_000, 24);
    let expected = 100_000 * 24;
    for (let i = 0; i < 100_000; i += 997) {
      h.set(i, 24 + (i % 7));
      expected += i % 7;
    }
    expect(h.total()).toBe(expected);
    expect(h.indexAt(h.offsetOf(54_321))).toBe(54_321);
  });
});

describe('window range', () => {
  it('renders the rows in view plus the overscan, never thousands', () => {
    const h = new RowHeights(3000, 24);
    expect(windowRange(h, 0, 480, opts)).toEqual({ start: 0, end: 26 });
    expect(windowRange(h, 24 * 1000, 480, opts)).toEqual({ start: 995, end: 1026 });
    expect(windowRange(h, 24 * 3000, 480, opts)).toEqual({ start: 2994, end: 3000 });
  });

  it('is capped at maxRows when rows measure tiny or the viewport is huge', () => {
    const h = new RowHeights(3000, 24);
    for (let i = 0; i < 3000; i++) h.set(i, 0.5);
    const r = windowRange(h, 0, 480, opts);
    expect(r.end - r.start).toBe(60);
    const tall = windowRange(new RowHeights(3000, 24), 0, 1_000_000, opts);
    expect(tall).toEqual({ start: 0, end: 60 });
    // The positive control: without the cap the same viewport would take every row.
    expect(windowRange(new RowHeights(3000, 24), 0, 1_000_000, { overscan: 5, maxRows: 1e9 }).end).toBe(3000);
  });

  it('an empty list renders nothing; a zero-height viewport only the overscan', () => {
    expect(windowRange(new RowHeights(0, 24), 0, 480, opts)).toEqual({ start: 0, end: 0 });
    expect(windowRange(new RowHeights(100, 24), 0, 0, opts)).toEqual({ start: 0, end: 6 });
  });
});

describe('scrolling a row into view and keys', () => {
  it('scrolls the least to show a row, or puts it at the top', () => {
    const h = new RowHeights(100, 20);
    expect(scrollTopFor(h, 5, 0, 200, 'nearest')).toBe(0);
    expect(scrollTopFor(h, 15, 0, 200, 'nearest')).toBe(120);
    expect(scrollTopFor(h, 2, 300, 200, 'nearest')).toBe(40);
    expect(scrollTopFor(h, 50, 0, 200, 'start')).toBe(1000);
  });

  it('arrows and Home/End stay in the list; j/k leave it at its ends', () => {
    expect(keyTarget('ArrowDown', 3, 10, 5)).toBe(4);
    expect(keyTarget('ArrowDown', 9, 10, 5)).toBe(9);
    expect(keyTarget('ArrowUp', 0, 10, 5)).toBe(0);
    expect(keyTarget('j', 9, 10, 5)).toBeNull();
    expect(keyTarget('k', 0, 10, 5)).toBeNull();
    expect(keyTarget('j', 2, 10, 5)).toBe(3);
    expect(keyTarget('PageDown', 8, 10, 5)).toBe(9);
    expect(keyTarget('PageUp', 8, 10, 5)).toBe(3);
    expect(keyTarget('Home', 8, 10, 5)).toBe(0);
    expect(keyTarget('End', 1, 10, 5)).toBe(9);
    expect(keyTarget('x', 1, 10, 5)).toBeNull();
  });
});

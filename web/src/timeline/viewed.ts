import type { ViewedRow } from '../../../shared/index.ts';

/**
 * Viewed marks as a change block needs them: per change, which rows are viewed (by id) and their
 * positions in sorted order, so a windowed list can skip hidden rows it has not fetched yet.
 */
export interface ChangeViewed {
  ids: ReadonlySet<string>;
  /** Ascending positions (`ord`) of the viewed rows. */
  positions: readonly number[];
}

const NONE: ChangeViewed = { ids: new Set(), positions: [] };

/** The server's covered rows grouped by change. */
export function viewedByChange(rows: readonly ViewedRow[]): Map<string, ChangeViewed> {
  const grouped = new Map<string, { ids: Set<string>; positions: number[] }>();
  for (const r of rows) {
    let g = grouped.get(r.change_id);
    if (!g) grouped.set(r.change_id, (g = { ids: new Set(), positions: [] }));
    if (g.ids.has(r.file_id)) continue;
    g.ids.add(r.file_id);
    g.positions.push(r.ord);
  }
  for (const g of grouped.values()) g.positions.sort((a, b) => a - b);
  return grouped;
}

export function viewedOf(map: ReadonlyMap<string, ChangeViewed>, changeId: string): ChangeViewed {
  return map.get(changeId) ?? NONE;
}

/**
 * The position of the `index`-th row left when the rows at `hidden` (ascending) are left out:
 * each hidden position at or before the candidate pushes it one further.
 */
export function shownPosition(hidden: readonly number[], index: number): number {
  let p = index;
  for (const h of hidden) {
    if (h > p) break;
    p++;
  }
  return p;
}

/** Where row `position` is in the list without the `hidden` rows (the rows hidden before it are skipped). */
export function shownIndex(hidden: readonly number[], position: number): number {
  let before = 0;
  for (const h of hidden) {
    if (h >= position) break;
    before++;
  }
  return position - before;
}

/** `3 of 12 viewed`. */
export function viewedCountText(viewed: number, total: number): string {
  return `${viewed} of ${total} viewed`;
}

/** `2 viewed files hidden`. */
export function hiddenViewedText(n: number): string {
  return `${n} viewed ${n === 1 ? 'file' : 'files'} hidden`;
}

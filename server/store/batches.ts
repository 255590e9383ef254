import type { Param } from './sql/types.ts';

/**
 * Many rows in few statements, the same on both engines: a multi-row `VALUES` list or an `IN`
 * list of `?`s, in chunks below both engines' parameter limits (SQLite takes 32,766 in one
 * statement, PostgreSQL 65,535), so a change of 100,000 rows is a few hundred statements, not
 * 100,000 round trips.
 */

/** Parameters per statement at most, far below either engine's limit. */
const MAX_PARAMS = 10_000;

/** `(?, ?), (?, ?)`: `rows` rows of `width` placeholders. */
export const valuesList = (rows: number, width: number): string => {
  const row = `(${Array.from({ length: width }, () => '?').join(', ')})`;
  return Array.from({ length: rows }, () => row).join(', ');
};

/** `?, ?, ?` for an `IN (...)` of `n` values. */
export const inList = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

/** Rows of `width` parameters per statement, at most `max` (and within the parameter bound). */
export const rowsPerStatement = (width: number, max = 500): number =>
  Math.max(1, Math.min(max, Math.floor(MAX_PARAMS / width)));

/** `items` in consecutive chunks of at most `size`, in order. */
export function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let at = 0; at < items.length; at += size) yield items.slice(at, at + size);
}

/**
 * Runs `INSERT ... VALUES` (`head` is everything before `VALUES`, `tail` what follows the rows,
 * such as `ON CONFLICT ...`) for every row, a chunk per statement; rows changed in all.
 */
export async function insertRows(
  run: (text: string, params: readonly Param[]) => Promise<number>,
  head: string,
  rows: readonly (readonly Param[])[],
  tail = '',
  perStatement = rowsPerStatement(rows[0]?.length ?? 1),
): Promise<number> {
  let changed = 0;
  for (const chunk of chunks(rows, perStatement)) {
    const width = chunk[0]!.length;
    changed += await run(`${head} VALUES ${valuesList(chunk.length, width)}${tail}`, chunk.flat());
  }
  return changed;
}

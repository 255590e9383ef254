import type { Queryable } from '../sql/postgres.ts';

export { inTransaction, retriedTransaction, STEP_ATTEMPTS, TYPES, type Queryable } from '../sql/postgres.ts';

/**
 * Where a module not yet written over the store's executor (`sql/`) runs its statements: the
 * executor's own place (`legacyExecOf`). `atomic` makes a multi-statement step all-or-nothing: its
 * own transaction at the top level, nothing extra inside an open transaction.
 */
export interface Exec {
  q: Queryable;
  atomic<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /**
   * A read of several statements that must agree with each other (a change and its file rows): one
   * snapshot (a read-only REPEATABLE READ transaction at the top level, the open transaction inside one).
   */
  read<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
}

/** A column named in a statement: `binary` is a keyword in PostgreSQL, so it is quoted wherever it is named. */
export const quoteColumn = (c: string): string => (c === 'binary' ? '"binary"' : c);

/** `$1, $2, ...` for `n` values from `start`. */
export const placeholders = (n: number, start = 1): string =>
  Array.from({ length: n }, (_, i) => `$${start + i}`).join(', ');

/** Multi-row VALUES for `rows` rows of `width` columns: `($1, $2), ($3, $4)`. */
export const valuesRows = (rows: number, width: number): string =>
  Array.from({ length: rows }, (_, r) => `(${placeholders(width, r * width + 1)})`).join(', ');

/**
 * The one executor every store module runs its SQL through, whichever engine keeps the rows. Module
 * SQL is one subset both engines read alike, with `?` placeholders; what truly differs is asked of
 * `dialect`.
 */

/** A statement's parameter. Booleans are passed as 0/1 (`CASE WHEN ? = 1 ...` in the SQL). */
export type Param = string | number | bigint | Buffer | Uint8Array | null;

/** The SQL that differs between the engines, one place each. */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /**
   * Statements run on this process's thread (SQLite): a costly read blocks the event loop, so its
   * answer is worth keeping between calls. On PostgreSQL it runs on the server, side by side.
   */
  readonly blocking: boolean;
  /** The larger of two values: SQLite's two-argument `MAX`, PostgreSQL's `GREATEST`. */
  greatest(a: string, b: string): string;
  /** The smaller of two values: SQLite's two-argument `MIN`, PostgreSQL's `LEAST`. */
  least(a: string, b: string): string;
  /** `INDEXED BY index` where SQLite's planner needs the hint; nothing on PostgreSQL. */
  indexedBy(index: string): string;
  /**
   * `column LIKE ?` folding ASCII letters only, as SQLite's LIKE does (PostgreSQL: `lower(column)`
   * under the columns' "C" collation, with `likeValue` lowering the pattern), `\` escaping.
   */
  likeFolded(column: string): string;
  /** The pattern for `likeFolded`. */
  likeValue(pattern: string): string;
  /**
   * A join whose left side stays the outer loop: SQLite's `CROSS JOIN` (its planner keeps the order
   * written), a plain `JOIN` on PostgreSQL. Takes an `ON` clause on both.
   */
  readonly joinInOrder: string;
  /** ` FOR UPDATE` after a SELECT whose rows the step writes next (other writers wait); SQLite's writers never overlap. */
  readonly forUpdate: string;
  /** Every row after the first `n` (a placeholder or a number): SQLite's `LIMIT -1 OFFSET n`, PostgreSQL's `OFFSET n`. */
  offset(n: string): string;
  /**
   * ` FOR SHARE` after a SELECT of rows the step is about to reference (a writer elsewhere that
   * would delete them waits, or skips them); SQLite's writers never overlap.
   */
  readonly forShare: string;
  /**
   * A subquery naming the ids (`id`) of search documents whose text holds every one of `terms`
   * (case-insensitive substrings of 3 characters or more), newest first, at most a placeholder's
   * count: SQLite's FTS5 trigram index, PostgreSQL's pg_trgm index over `lower(body)`.
   */
  textSearch(terms: number): string;
  /** The parameters of `textSearch`: the terms, then the count. */
  textSearchValues(terms: readonly string[], limit: number): Param[];
  /**
   * `textSearch` over the changed files' path documents alone, through an index of their own
   * (migration 0013), so a path is not looked for among every patch that names it. Its parameters
   * are `textSearchValues`'.
   */
  pathSearch(terms: number): string;
  /**
   * A statement bounding each later statement of the open transaction to `ms` (PostgreSQL's
   * `SET LOCAL statement_timeout`); null on SQLite, whose statements cannot be stopped from
   * JavaScript, so its reads are bounded by the rows they visit instead.
   */
  statementTimeout(ms: number): string | null;
  /** True for the error of a statement stopped by `statementTimeout`. */
  timedOut(err: unknown): boolean;
}

/**
 * State of one open transaction or atomic step (null at the top level): what a writer already did
 * in it, and statements it issued without waiting for them.
 */
export interface Step {
  /** Keys a writer marked done in this transaction (cleared when a savepoint holding them rolls back). */
  readonly memo: Set<string>;
  /**
   * A statement issued without awaiting it (it runs in order, before the step's next one): the step
   * waits for it before it commits, and fails with it.
   */
  defer(statement: Promise<unknown>): void;
}

export interface Sql {
  readonly dialect: Dialect;
  /** The open transaction or atomic step this executor is bound to; null at the top level. */
  readonly step: Step | null;
  all<R>(text: string, params?: readonly Param[]): Promise<R[]>;
  get<R>(text: string, params?: readonly Param[]): Promise<R | undefined>;
  /** Rows changed. */
  run(text: string, params?: readonly Param[]): Promise<number>;
  /** One statement for many parameter rows, in order; rows changed in all (atomic at the top level). */
  runMany(text: string, rows: readonly (readonly Param[])[]): Promise<number>;
  /**
   * All-or-nothing multi-statement step: its own transaction at the top level (run again on
   * PostgreSQL after a deadlock, so its body touches nothing but `q`), a savepoint (SQLite) or
   * nothing extra (PostgreSQL, where a failed statement fails the whole transaction) inside one.
   */
  atomic<T>(fn: (q: Sql) => Promise<T>): Promise<T>;
  /** Several reads that must agree (one snapshot; SQLite: nothing of this process runs between them). */
  read<T>(fn: (q: Sql) => Promise<T>): Promise<T>;
  /**
   * The store's `transaction(fn)`: one transaction at the top level (never run again), a savepoint
   * inside one. `q` refuses every call once it has ended.
   */
  transaction<T>(fn: (q: Sql) => Promise<T>): Promise<T>;
}

/** The top-level executor of an open connection. */
export interface Executor extends Sql {
  /** Waits for open transactions, then closes the connection(s). A second call does nothing. */
  close(): Promise<void>;
}

export const TX_ENDED = "a transaction's store was used after the transaction ended";

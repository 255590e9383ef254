import type { Dialect } from './types.ts';

/** `%` and `_` in a search are literal characters, not wildcards. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** An FTS5 string token: the text between double quotes, its own quotes doubled (no operators inside). */
const ftsString = (text: string): string => `"${text.replace(/"/g, '""')}"`;

export const SQLITE: Dialect = {
  name: 'sqlite',
  blocking: true,
  greatest: (a, b) => `MAX(${a}, ${b})`,
  least: (a, b) => `MIN(${a}, ${b})`,
  indexedBy: (index) => `INDEXED BY ${index}`,
  likeFolded: (column) => `${column} LIKE ? ESCAPE '\\'`,
  likeValue: (pattern) => pattern,
  joinInOrder: 'CROSS JOIN',
  forUpdate: '',
  offset: (n) => `LIMIT -1 OFFSET ${n}`,
  forShare: '',
  textSearch: () => 'SELECT rowid AS id FROM search_fts WHERE search_fts MATCH ? ORDER BY rowid DESC LIMIT ?',
  textSearchValues: (terms, limit) => [terms.map(ftsString).join(' AND '), limit],
  pathSearch: () =>
    'SELECT rowid AS id FROM search_paths_fts WHERE search_paths_fts MATCH ? ORDER BY rowid DESC LIMIT ?',
  statementTimeout: () => null,
  timedOut: () => false,
};

// The expression pg_trgm's index is built on (migration 0011), so the planner can use it.
const POSTGRES_LIKE = `lower(body) LIKE ? ESCAPE '\\'`;

export const POSTGRES: Dialect = {
  name: 'postgres',
  blocking: false,
  greatest: (a, b) => `GREATEST(${a}, ${b})`,
  least: (a, b) => `LEAST(${a}, ${b})`,
  indexedBy: () => '',
  // SQLite's LIKE folds ASCII letters only; lower() under the columns' "C" collation does the same.
  likeFolded: (column) => `lower(${column}) LIKE ? ESCAPE '\\'`,
  likeValue: (pattern) => pattern.replace(/[A-Z]/g, (c) => c.toLowerCase()),
  joinInOrder: 'JOIN',
  forUpdate: ' FOR UPDATE',
  offset: (n) => `OFFSET ${n}`,
  forShare: ' FOR SHARE',
  textSearch: (terms) =>
    `SELECT id FROM search_docs WHERE ${Array.from({ length: terms }, () => POSTGRES_LIKE).join(' AND ')} ORDER BY id DESC LIMIT ?`,
  textSearchValues: (terms, limit) => [...terms.map((t) => POSTGRES.likeValue(likePattern(t))), limit],
  // `kind = 'path'` lets the planner take the partial index migration 0013 builds for them.
  pathSearch: (terms) =>
    `SELECT id FROM search_docs WHERE kind = 'path' AND ${Array.from({ length: terms }, () => POSTGRES_LIKE).join(' AND ')} ORDER BY id DESC LIMIT ?`,
  statementTimeout: (ms) => `SET LOCAL statement_timeout = ${Math.max(1, Math.floor(ms))}`,
  // 57014: query_canceled, what a statement stopped by statement_timeout fails with.
  timedOut: (err) => (err as { code?: unknown } | null)?.code === '57014',
};

/** `build` once per dialect: statement texts that name a dialect's pieces are built on first use. */
export function perDialect<T>(build: (d: Dialect) => T): (d: Dialect) => T {
  const built = new Map<string, T>();
  return (d) => {
    let t = built.get(d.name);
    if (t === undefined) built.set(d.name, (t = build(d)));
    return t;
  };
}

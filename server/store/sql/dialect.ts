import type { Dialect } from './types.ts';

export const SQLITE: Dialect = {
  name: 'sqlite',
  greatest: (a, b) => `MAX(${a}, ${b})`,
  least: (a, b) => `MIN(${a}, ${b})`,
  indexedBy: (index) => `INDEXED BY ${index}`,
  likeFolded: (column) => `${column} LIKE ? ESCAPE '\\'`,
  likeValue: (pattern) => pattern,
  offset: (n) => `LIMIT -1 OFFSET ${n}`,
  rowLock: () => '',
};

export const POSTGRES: Dialect = {
  name: 'postgres',
  greatest: (a, b) => `GREATEST(${a}, ${b})`,
  least: (a, b) => `LEAST(${a}, ${b})`,
  indexedBy: () => '',
  // SQLite's LIKE folds ASCII letters only; lower() under the columns' "C" collation does the same.
  likeFolded: (column) => `lower(${column}) LIKE ? ESCAPE '\\'`,
  likeValue: (pattern) => pattern.replace(/[A-Z]/g, (c) => c.toLowerCase()),
  offset: (n) => `OFFSET ${n}`,
  rowLock: (mode) => (mode === 'update' ? ' FOR UPDATE' : ' FOR SHARE'),
};

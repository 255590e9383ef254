import type { Dialect } from './types.ts';

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
};

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

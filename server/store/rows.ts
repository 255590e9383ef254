/**
 * Rows are the DTOs of shared/dto.ts as SQLite stores them: booleans become 0/1, so a row type is
 * derived from its DTO and a field is declared once.
 */
export type SqliteRow<T, B extends keyof T> = Omit<T, B> & { [K in B]: number };

export const toInt = (b: boolean): number => (b ? 1 : 0);

/** The DTO fields `fields` of a row, in that order, with the columns named in `booleans` read as booleans. */
export function pickFields<T, K extends keyof T>(
  row: Record<string, unknown>,
  fields: readonly K[],
  booleans: ReadonlySet<string>,
): Pick<T, K> {
  const out: Record<string, unknown> = {};
  for (const f of fields) out[f as string] = booleans.has(f as string) ? row[f as string] === 1 : row[f as string];
  return out as Pick<T, K>;
}

import type { Db } from './database.ts';

/** Workspaces named by stored sessions and runs, most recently active first (the repository catalog reads them). */
export function createCatalogStore(db: Db) {
  const sessions = db
    .prepare<[number], string>(
      `SELECT workspace FROM sessions WHERE workspace IS NOT NULL GROUP BY workspace
       ORDER BY MAX(updated_at) DESC LIMIT ?`,
    )
    .pluck();
  const runs = db
    .prepare<[number], string>(
      `SELECT workspace FROM runs WHERE workspace IS NOT NULL GROUP BY workspace ORDER BY MAX(started_at) DESC LIMIT ?`,
    )
    .pluck();
  return {
    sessionWorkspaces: (max: number): string[] => sessions.all(max),
    runWorkspaces: (max: number): string[] => runs.all(max),
  };
}

export type CatalogStore = ReturnType<typeof createCatalogStore>;

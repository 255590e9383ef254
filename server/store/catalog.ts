import type { Sql } from './sql/types.ts';
import type { CatalogApi } from './types.ts';

/** Workspaces named by stored sessions and runs, most recently active first (the repository catalog reads them). */
export function createCatalogStore(sql: Sql): CatalogApi {
  const workspaces = async (text: string, max: number) =>
    (await sql.all<{ workspace: string }>(text, [max])).map((r) => r.workspace);
  return {
    sessionWorkspaces: (max) =>
      workspaces(
        `SELECT workspace FROM sessions WHERE workspace IS NOT NULL GROUP BY workspace
         ORDER BY MAX(updated_at) DESC LIMIT ?`,
        max,
      ),
    runWorkspaces: (max) =>
      workspaces(
        `SELECT workspace FROM runs WHERE workspace IS NOT NULL GROUP BY workspace ORDER BY MAX(started_at) DESC LIMIT ?`,
        max,
      ),
  };
}

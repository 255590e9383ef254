import { FILES_PAGE_MAX } from '../../shared/index.ts';
import type { BridgeClient } from '../bridge-client/index.ts';

export { connectServer, ServerNeedsToken, type BridgeClient } from '../bridge-client/index.ts';

/** Records straight into the SQLite database, for when no server is running. */
export async function openDatabaseClient(dbPath: string): Promise<BridgeClient> {
  const { createRundiff } = await import('../index.ts');
  const rundiff = createRundiff({ db: dbPath });
  return {
    target: dbPath,
    send: (event) => rundiff.handle(event),
    sessionTitle: async (sessionId) => {
      const session = await rundiff.store.sessions.get(sessionId);
      return session ? session.title : undefined;
    },
    filesAfter: async (sessionId, changeId, cursor) =>
      rundiff.store.changes.filesPage(sessionId, changeId, Number(cursor), FILES_PAGE_MAX),
    close: () => rundiff.close(),
  };
}

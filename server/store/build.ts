import { createCallLogStore } from './call-log.ts';
import { createCatalogStore } from './catalog.ts';
import { createChangeStore } from './changes.ts';
import { createContentStore } from './contents.ts';
import { createIngestStore } from './ingest.ts';
import { createMessageStore } from './messages.ts';
import { createNetViewedStore } from './net-viewed.ts';
import { createReviewStore } from './reviews.ts';
import { createRunStore } from './runs.ts';
import { createSearchStore } from './search.ts';
import { createSessionsKept, createSessionStore } from './sessions.ts';
import type { WriteClock } from './sql/clock.ts';
import { createViewedStore } from './viewed.ts';
import type { Executor, Sql } from './sql/types.ts';
import type { Store, StoreClock, StoreTx } from './types.ts';

/** The modules written once, over the executor. */
type Shared =
  | 'sessions'
  | 'messages'
  | 'runs'
  | 'viewed'
  | 'netViewed'
  | 'callLog'
  | 'catalog'
  | 'changes'
  | 'reviews'
  | 'ingest'
  | 'contents'
  | 'search';

/** The modules an engine still builds itself (not yet written over the executor), bound to where `q` runs. */
export type EngineModules = (q: Sql) => Omit<StoreTx, 'transaction' | 'clock' | Shared>;

/** The write clock as callers see it, reading and bumping where `q` runs. */
function boundClock(clock: WriteClock, q: Sql): StoreClock {
  return {
    version: (sessionId) => clock.version(q, sessionId),
    partVersion: (sessionId, part) => clock.partVersion(q, sessionId, part),
    bump: (sessionId, part) =>
      q.atomic((a) => {
        clock.bump(a, sessionId, part);
        return Promise.resolve();
      }),
  };
}

/**
 * The store over one executor and its write clock, for either engine: the modules bound to the
 * top level, and `transaction(fn)` handing `fn` the same modules bound to the transaction.
 */
export function buildStore(sql: Executor, clock: WriteClock, engineModules: EngineModules): Store {
  const kept = createSessionsKept();
  const modules = (q: Sql): StoreTx => ({
    ...engineModules(q),
    sessions: createSessionStore(q, clock, kept),
    messages: createMessageStore(q, clock),
    runs: createRunStore(q, clock),
    viewed: createViewedStore(q),
    netViewed: createNetViewedStore(q),
    callLog: createCallLogStore(q),
    catalog: createCatalogStore(q),
    changes: createChangeStore(q, clock),
    reviews: createReviewStore(q, clock),
    ingest: createIngestStore(q, clock),
    contents: createContentStore(q),
    search: createSearchStore(q),
    clock: boundClock(clock, q),
    transaction: (fn) => q.transaction((inner) => fn(modules(inner))),
  });
  return { engine: sql.dialect.name, ...modules(sql), close: () => sql.close() };
}

import { openDatabase, type Db } from './database.ts';
import { createChangeStore } from './changes.ts';
import { createContentStore } from './contents.ts';
import { createIngestStore } from './ingest.ts';
import { createOutboxStore } from './outbox.ts';
import { createMessageStore } from './messages.ts';
import { createReviewStore } from './reviews.ts';
import { createRunStore } from './runs.ts';
import { createSessionStore } from './sessions.ts';
import { createViewedStore } from './viewed.ts';
import { createWriteClock, type WriteClock } from './write-clock.ts';

export { openDatabase, applyPragmas, MIGRATIONS_DIR, type Db } from './database.ts';
export { applyMigrations, readMigrations, type Migration } from './migrate.ts';
export type { NewChange, NewFile, ChangeStore } from './changes.ts';
export type {
  ContentSideInput,
  ContentStore,
  FileContentInput,
  PendingContent,
  PreparedContent,
  StoredContent,
  StoredSide,
} from './contents.ts';
export type {
  ActivityKind,
  ActivityRecords,
  NewActivity,
  Recorded,
  Finish,
  StartOutcome,
  NewToolCall,
  RunStore,
} from './runs.ts';
export type { SessionPage, SessionStore } from './sessions.ts';
export type { MessageStore } from './messages.ts';
export type { MarkOutcome, ViewedStore } from './viewed.ts';
export type { ChangeOrder, PathTouch, ReviewStore, StoredComment, StoredReview } from './reviews.ts';
export type { WriteClock } from './write-clock.ts';
export type { BatchBounds, OutboxBatch, OutboxStore } from './outbox.ts';
export type { IngestApi, OutboxApi } from './types.ts';
export type { IngestBatch, IngestBlob, IngestEffect, IngestEntry, IngestOutcome, IngestStore } from './ingest.ts';

/** The database with one module per table family; statements are prepared once here. */
export interface Store {
  db: Db;
  sessions: ReturnType<typeof createSessionStore>;
  messages: ReturnType<typeof createMessageStore>;
  runs: ReturnType<typeof createRunStore>;
  changes: ReturnType<typeof createChangeStore>;
  /** Before/after bytes of changed files, for undoing runs. */
  contents: ReturnType<typeof createContentStore>;
  /** Viewed marks on a session's changed files. */
  viewed: ReturnType<typeof createViewedStore>;
  /** Review comments and the reviews that send them to the agent. */
  reviews: ReturnType<typeof createReviewStore>;
  /** An edge's outbox of stored results not yet acknowledged by its centre. */
  outbox: ReturnType<typeof createOutboxStore> | null;
  /** A centre's writes of what its edges send. */
  ingest: ReturnType<typeof createIngestStore>;
  /** Moves on whenever a session's rows may have changed (readers cache by it). */
  clock: WriteClock;
  /** Runs `fn` in one transaction (a savepoint when nested). */
  transaction<T>(fn: () => T): T;
  close(): void;
}

export function createStore(db: Db): Store {
  const clock = createWriteClock(db);
  return {
    db,
    sessions: createSessionStore(db, clock),
    messages: createMessageStore(db, clock),
    runs: createRunStore(db, clock),
    changes: createChangeStore(db, clock),
    contents: createContentStore(db),
    viewed: createViewedStore(db),
    reviews: createReviewStore(db, clock),
    outbox: createOutboxStore(db),
    ingest: createIngestStore(db, clock),
    clock,
    transaction: <T>(fn: () => T): T => db.transaction(fn)(),
    close: () => {
      if (db.open) db.close();
    },
  };
}

/** Opens the database file (creating it and its folder), migrates it and builds the store. */
export function openStore(file: string): Store {
  return createStore(openDatabase(file));
}
export { storageFailure } from './errors.ts';

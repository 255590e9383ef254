import { storageFailure } from './errors.ts';
import { openPostgresStore, type PostgresStoreOptions } from './postgres/index.ts';
import { AppError } from '../errors.ts';
import { openDatabase } from './database.ts';
import { createStore, type SqliteStore } from './sqlite-store.ts';
import type { Store } from './types.ts';

export { openDatabase, applyPragmas, MIGRATIONS_DIR, type Db } from './database.ts';
export { applyMigrations, readMigrations, type Migration } from './migrate.ts';
export { createStore, type SqliteStore } from './sqlite-store.ts';
export { createGate, type Gate } from './sql/gate.ts';
export type {
  CallLogApi,
  CatalogApi,
  ChangesApi,
  ContentsApi,
  MessagesApi,
  ReviewsApi,
  RunsApi,
  SessionsApi,
  Store,
  StoreClock,
  StoreEngine,
  StoreTx,
  ViewedApi,
  NetViewedApi,
  IngestApi,
  OutboxApi,
  SearchApi,
} from './types.ts';
export type { SearchCriteria, SearchFound, SearchRow } from './search.ts';
export type { BatchBounds, OutboxBatch } from './outbox.ts';
export type { IngestBatch, IngestBlob, IngestEffect, IngestEntry, IngestOutcome } from './ingest.ts';
export type { NewChange, NewFile } from './changes.ts';
export type {
  ContentSideInput,
  FileContentInput,
  PendingContent,
  PreparedContent,
  RawContent,
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
} from './runs.ts';
export type { SessionPage } from './sessions.ts';
export type { MarkOutcome } from './viewed.ts';
export type { StoredNetMark } from './net-viewed.ts';
export type { ChangeOrder, PathTouch, StoredComment, StoredReview } from './reviews.ts';
export type { WritePart } from './sql/clock.ts';
export { startWalCheckpointer, type WalCheckpointer } from './wal-checkpointer.ts';
export { storageFailure } from './errors.ts';
export { openPostgresStore, type PostgresStoreOptions } from './postgres/index.ts';

/** The SQLite connection behind a store; null for another engine (SQLite's own upkeep, such as WAL checkpoints). */
export function sqliteDbOf(store: Store): SqliteStore['db'] | null {
  return store.engine === 'sqlite' ? (store as SqliteStore).db : null;
}

/** Opens the SQLite database file (creating it and its folder), migrates it and builds the store. */
export function openStore(file: string): SqliteStore {
  return createStore(openDatabase(file));
}

/** Where the store lives: a PostgreSQL URL when given, else the SQLite file. */
export interface StoreLocation {
  dbPath: string;
  databaseUrl?: string | null;
  /** The PostgreSQL pool's bounds (defaults where absent). */
  database?: PostgresStoreOptions;
}

const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/** True for the URLs the PostgreSQL store takes (`postgres://` or `postgresql://`). */
export const isPostgresUrl = (url: string): boolean => POSTGRES_URL.test(url);

/**
 * The store the configuration names: PostgreSQL for a `postgres://` database URL, SQLite (the
 * embedded default) otherwise. The one place an engine is chosen.
 */
export async function openStoreFrom(where: StoreLocation): Promise<Store> {
  const url = where.databaseUrl ?? null;
  if (url === null || url === '') return openStore(where.dbPath);
  if (!isPostgresUrl(url))
    throw new AppError(
      'invalid_input',
      `the database URL must start with postgres:// or postgresql:// (got ${JSON.stringify(redact(url))})`,
      { hint: 'RUNDIFF_DATABASE_URL / --database-url name a PostgreSQL store; leave them unset for the SQLite file' },
    );
  try {
    return await openPostgresStore(url, where.database);
  } catch (err) {
    // Which database could not be opened, and why, with its password hidden.
    throw storageFailure(err, `opening the PostgreSQL store at ${redact(url)}`) ?? err;
  }
}

/** A URL with its password hidden, for messages and logs. */
export function redact(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*:)[^@]*@/i, '$1***@');
}

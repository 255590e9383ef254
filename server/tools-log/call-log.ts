import { randomUUID } from 'node:crypto';
import type { ToolCallRecord } from '../../shared/index.ts';
import type { Store } from '../store/index.ts';

/** One finished tool call, as the transports report it (the id is assigned here). */
export type NewToolCallRecord = Omit<ToolCallRecord, 'id' | 'arguments' | 'commit'> &
  Partial<Pick<ToolCallRecord, 'arguments' | 'commit'>>;

export interface CallLogOptions {
  /** Rows kept (oldest removed first). Default 10,000. */
  maxRows?: number;
}

/** `GET /api/tools/calls?limit=`: default and maximum page size. */
export const CALLS_PAGE = { default: 50, max: 200 } as const;

const DEFAULT_MAX_ROWS = 10_000;
/** Pruning runs once per this many inserts (a DELETE per call would be wasted work). */
const PRUNE_EVERY = 100;

/**
 * The tool-call log in the store (`tool_call_log`, migration 0002). Bounded: the log is global, not
 * per session, so session retention never trims it; the newest `maxRows` are kept instead.
 */
export function createCallLog(store: Pick<Store, 'callLog'>, opts: CallLogOptions = {}) {
  const maxRows = opts.maxRows ?? DEFAULT_MAX_ROWS;
  let inserts = 0;

  return {
    async record(call: NewToolCallRecord): Promise<ToolCallRecord> {
      const row: ToolCallRecord = { id: randomUUID(), arguments: null, commit: null, ...call };
      await store.callLog.insert(row);
      inserts += 1;
      if (inserts % PRUNE_EVERY === 0 || maxRows < PRUNE_EVERY) await store.callLog.prune(maxRows);
      return row;
    },
    /** Newest first. */
    list(limit: number): Promise<ToolCallRecord[]> {
      return store.callLog.page(limit);
    },
  };
}

export type CallLog = ReturnType<typeof createCallLog>;

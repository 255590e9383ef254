import {
  fieldsOf,
  type CompleteResponse,
  type Run,
  type RunStatus,
  type StartResponse,
  type ToolCall,
  type UntrackedReason,
} from '../../shared/index.ts';
import type { Db } from './database.ts';
import { pickFields, toInt, type SqliteRow } from './rows.ts';
import type { WriteClock, WritePart } from './write-clock.ts';

/**
 * Runs and tool calls: one activity at two scopes, kept in two tables of the same shape (`runs`,
 * `tool_calls`) behind one set of statements. A run and a tool call may share an id within a
 * session; the table is what tells them apart.
 */
export type ActivityKind = 'run' | 'tool';

/** The DTO of each kind. */
export interface ActivityRecords {
  run: Run;
  tool: ToolCall;
}

/** What is stored of an activity: its DTO and its workspace (a tool call's DTO does not carry it). */
export type NewActivity<K extends ActivityKind> = ActivityRecords[K] & { workspace: string | null };
export type NewToolCall = NewActivity<'tool'>;

/** A run or tool call with the answers given to its start and completion (replayed on repeats). */
export interface Recorded<T> {
  record: T;
  workspace: string | null;
  startResponse: StartResponse | null;
  completeResponse: CompleteResponse | null;
}

export interface Finish {
  status: Exclude<RunStatus, 'running'>;
  finished_at: number;
  error: string | null;
  tracking: boolean;
  reason: UntrackedReason | null;
  response: CompleteResponse;
}

export interface StartOutcome {
  tracking: boolean;
  reason: UntrackedReason | null;
  response: StartResponse;
}

interface Table<K extends ActivityKind> {
  name: string;
  /** The column holding the activity's own id. */
  id: keyof ActivityRecords[K] & string;
  /** The DTO's fields in the order they are served. */
  fields: readonly (keyof ActivityRecords[K] & string)[];
}

/** The columns of a stored run and of a stored tool call, in their order (every engine names them from here). */
export const RUN_FIELDS = fieldsOf<Run>()([
  'run_id',
  'session_id',
  'status',
  'source',
  'workspace',
  'started_at',
  'finished_at',
  'error',
  'change_id',
  'tracking',
  'reason',
]);
export const TOOL_CALL_FIELDS = fieldsOf<ToolCall>()([
  'tool_call_id',
  'run_id',
  'session_id',
  'name',
  'status',
  'started_at',
  'finished_at',
  'error',
  'change_id',
  'tracking',
  'reason',
]);

const TABLES: { [K in ActivityKind]: Table<K> } = {
  run: {
    name: 'runs',
    id: 'run_id',
    fields: RUN_FIELDS,
  },
  tool: {
    name: 'tool_calls',
    id: 'tool_call_id',
    fields: TOOL_CALL_FIELDS,
  },
};

type ActivityRow = SqliteRow<NewActivity<ActivityKind>, 'tracking'> & {
  start_response: string | null;
  complete_response: string | null;
};

const BOOLEANS: ReadonlySet<string> = new Set(['tracking']);

const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

/** The statements of one table, built from its description. */
function prepareTable<K extends ActivityKind>(db: Db, t: Table<K>) {
  const columns = t.fields.join(', ');
  const stored = t.fields.includes('workspace' as never) ? [...t.fields] : [...t.fields, 'workspace'];
  const key = `session_id = @session_id AND ${t.id} = @id`;
  return {
    get: db.prepare<{ session_id: string; id: string }, ActivityRow>(
      `SELECT ${columns}, workspace, start_response, complete_response FROM ${t.name} WHERE ${key}`,
    ),
    insert: db.prepare(
      `INSERT INTO ${t.name} (${stored.join(', ')}) VALUES (${stored.map((c) => `@${c}`).join(', ')})`,
    ),
    start: db.prepare(
      `UPDATE ${t.name} SET tracking = @tracking, reason = @reason, start_response = @response WHERE ${key}`,
    ),
    finish: db.prepare(
      `UPDATE ${t.name} SET status = @status, finished_at = @finished_at, error = @error, tracking = @tracking,
         reason = @reason, complete_response = @response WHERE ${key}`,
    ),
    list: db.prepare<[string], ActivityRow>(
      `SELECT ${columns} FROM ${t.name} WHERE session_id = ? ORDER BY started_at, seq`,
    ),
    toRecord: (row: ActivityRow): ActivityRecords[K] =>
      pickFields<ActivityRecords[K], keyof ActivityRecords[K]>(row, t.fields, BOOLEANS) as ActivityRecords[K],
  };
}

/** The part of a session each kind's writes touch (readers keep the other parts' answers). */
const PART: Record<ActivityKind, WritePart> = { run: 'runs', tool: 'tool_calls' };

export function createRunStore(db: Db, clock: WriteClock) {
  const tables = { run: prepareTable(db, TABLES.run), tool: prepareTable(db, TABLES.tool) };
  const openChanges = db.prepare<{ session_id: string }, { change_id: string }>(
    Object.values(TABLES)
      .map((t) => `SELECT change_id FROM ${t.name} WHERE session_id = @session_id AND status = 'running'`)
      .join(' UNION ALL '),
  );
  const openEverywhere = db.prepare<[], { session_id: string; change_id: string; workspace: string | null }>(
    Object.values(TABLES)
      .map((t) => `SELECT session_id, change_id, workspace FROM ${t.name} WHERE status = 'running'`)
      .join(' UNION ALL '),
  );
  // The parameter types of one kind's statements fit every kind; only the record type differs.
  const of = <K extends ActivityKind>(kind: K) => tables[kind] as unknown as ReturnType<typeof prepareTable<K>>;

  function get<K extends ActivityKind>(kind: K, sessionId: string, id: string): Recorded<ActivityRecords[K]> | null {
    const t = of(kind);
    const row = t.get.get({ session_id: sessionId, id });
    if (!row) return null;
    return {
      record: t.toRecord(row),
      workspace: row.workspace,
      startResponse: parse(row.start_response),
      completeResponse: parse(row.complete_response),
    };
  }

  function insert<K extends ActivityKind>(kind: K, a: NewActivity<K>): void {
    clock.bump(a.session_id, PART[kind]);
    of(kind).insert.run({ ...a, tracking: toInt(a.tracking) });
  }

  function list<K extends ActivityKind>(kind: K, sessionId: string): ActivityRecords[K][] {
    const t = of(kind);
    return t.list.all(sessionId).map(t.toRecord);
  }

  return {
    get,
    insert,
    /** Records the answer given to the start (its checkpoint taken or not). */
    recordStart(kind: ActivityKind, sessionId: string, id: string, o: StartOutcome): void {
      clock.bump(sessionId, PART[kind]);
      of(kind).start.run({
        session_id: sessionId,
        id,
        tracking: toInt(o.tracking),
        reason: o.reason,
        response: JSON.stringify(o.response),
      });
    },
    finish(kind: ActivityKind, sessionId: string, id: string, f: Finish): void {
      clock.bump(sessionId, PART[kind]);
      of(kind).finish.run({
        session_id: sessionId,
        id,
        status: f.status,
        finished_at: f.finished_at,
        error: f.error,
        tracking: toInt(f.tracking),
        reason: f.reason,
        response: JSON.stringify(f.response),
      });
    },
    /** A session's activities of one kind, in start order. */
    list,
    /** change_ids of the session's runs and tool calls still open (their checkpoints are live). */
    openChangeIds(sessionId: string): string[] {
      return openChanges.all({ session_id: sessionId }).map((r) => r.change_id);
    },
    /** Runs and tool calls still open in any session, with their workspaces (a revert must not race them). */
    openEverywhere(): { session_id: string; change_id: string; workspace: string | null }[] {
      return openEverywhere.all();
    },
    // Typed shorthands for readers that name one kind.
    getRun: (sessionId: string, runId: string) => get('run', sessionId, runId),
    insertRun: (run: Run) => insert('run', run),
    insertToolCall: (call: NewToolCall) => insert('tool', call),
    listRuns: (sessionId: string) => list('run', sessionId),
    listToolCalls: (sessionId: string) => list('tool', sessionId),
  };
}

export type RunStore = ReturnType<typeof createRunStore>;

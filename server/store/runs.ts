import {
  fieldsOf,
  type CompleteResponse,
  type Run,
  type RunStatus,
  type RunUsage,
  type StartResponse,
  type ToolCall,
  type UntrackedReason,
} from '../../shared/index.ts';
import type { WriteClock, WritePart } from './sql/clock.ts';
import type { Param, Sql } from './sql/types.ts';
import type { RunsApi } from './types.ts';

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
export type NewActivity<K extends ActivityKind> = K extends ActivityKind
  ? Omit<ActivityRecords[K], 'usage'> & { workspace: string | null }
  : never;
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

/**
 * The columns of a stored run and of a stored tool call, in their order (every engine names them
 * from here). A run's `usage` is kept in columns of its own (`USAGE_COLUMNS`), set when it completes.
 */
export const RUN_FIELDS = fieldsOf<Omit<Run, 'usage'>>()([
  'run_id',
  'session_id',
  'title',
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

/** A run's usage columns, by the `RunUsage` field each holds (the four counts, then the money). */
export const USAGE_COLUMNS = {
  input: 'usage_input',
  output: 'usage_output',
  cache_read: 'usage_cache_read',
  cache_write: 'usage_cache_write',
  cost_usd: 'usage_cost_usd',
} as const satisfies Record<keyof RunUsage, string>;
const USAGE_KEYS = Object.keys(USAGE_COLUMNS) as (keyof RunUsage)[];
/** The counts: a run has all of them or none. */
const COUNT_KEYS = USAGE_KEYS.filter((k) => k !== 'cost_usd');
const USAGE_SELECT = Object.values(USAGE_COLUMNS).join(', ');

/** The statements of one table, built from its description. */
function tableTexts(name: string, id: string, fields: readonly string[], extra = '') {
  const columns = fields.join(', ') + extra;
  // A tool call's DTO does not carry its workspace; the row does.
  const stored = fields.includes('workspace') ? [...fields] : [...fields, 'workspace'];
  const key = `session_id = ? AND ${id} = ?`;
  return {
    name,
    fields,
    stored,
    get: `SELECT ${columns}, workspace, start_response, complete_response FROM ${name} WHERE ${key}`,
    insert: `INSERT INTO ${name} (${stored.join(', ')}) VALUES (${stored.map(() => '?').join(', ')})`,
    start: `UPDATE ${name} SET tracking = ?, reason = ?, start_response = ? WHERE ${key}`,
    finish: `UPDATE ${name} SET status = ?, finished_at = ?, error = ?, tracking = ?, reason = ?,
       complete_response = ? WHERE ${key}`,
    list: `SELECT ${columns} FROM ${name} WHERE session_id = ? ORDER BY started_at, seq`,
    // substr counts characters on both engines, and compares case-sensitively as ids are kept.
    startingWith: `SELECT ${id} AS id FROM ${name} WHERE session_id = ? AND substr(${id}, 1, ?) = ?
       ORDER BY started_at, seq LIMIT ?`,
  };
}

const TABLES: Record<ActivityKind, ReturnType<typeof tableTexts>> = {
  run: tableTexts('runs', 'run_id', RUN_FIELDS, `, ${USAGE_SELECT}`),
  tool: tableTexts('tool_calls', 'tool_call_id', TOOL_CALL_FIELDS),
};

const OPEN_CHANGES = Object.values(TABLES)
  .map((t) => `SELECT change_id FROM ${t.name} WHERE session_id = ? AND status = 'running'`)
  .join(' UNION ALL ');
/** Sets a run's usage once: a repeated completion keeps the first figures, as it keeps the first answer. */
const RECORD_USAGE = `UPDATE runs SET ${USAGE_KEYS.map((k) => `${USAGE_COLUMNS[k]} = ?`).join(', ')}
  WHERE session_id = ? AND run_id = ? AND usage_input IS NULL`;
/** Start order, as `list`; the session's index narrows the rows to its own. */
const OPEN_TOOL_CALLS = `SELECT tool_call_id FROM tool_calls WHERE session_id = ? AND run_id = ? AND status = 'running'
  ORDER BY started_at, seq`;
const OPEN_EVERYWHERE = Object.values(TABLES)
  .map((t) => `SELECT session_id, change_id, workspace FROM ${t.name} WHERE status = 'running'`)
  .join(' UNION ALL ');

/** The part of a session each kind's writes touch (readers keep the other parts' answers). */
const PART: Record<ActivityKind, WritePart> = { run: 'runs', tool: 'tool_calls' };

/** The DTO's fields in their served order, the 0/1 `tracking` column read as a boolean. */
function toRecord<K extends ActivityKind>(kind: K, row: Record<string, unknown>): ActivityRecords[K] {
  const out: Record<string, unknown> = {};
  for (const f of TABLES[kind].fields) out[f] = f === 'tracking' ? row[f] === 1 : row[f];
  if (kind === 'run') out.usage = usageOf(row);
  return out as unknown as ActivityRecords[K];
}

/** A run row's usage: null unless every count is set (they are written together); its money or null. */
function usageOf(row: Record<string, unknown>): RunUsage | null {
  const out: Partial<RunUsage> = {};
  for (const k of COUNT_KEYS) {
    const v = row[USAGE_COLUMNS[k]];
    if (typeof v !== 'number') return null;
    out[k] = v;
  }
  const cost = row[USAGE_COLUMNS.cost_usd];
  if (typeof cost === 'number') out.cost_usd = cost;
  return out as RunUsage;
}

const parse = <T>(text: unknown): T | null =>
  text === null || text === undefined ? null : (JSON.parse(text as string) as T);

export function createRunStore(sql: Sql, clock: WriteClock): RunsApi {
  async function get<K extends ActivityKind>(
    kind: K,
    sessionId: string,
    id: string,
  ): Promise<Recorded<ActivityRecords[K]> | null> {
    const row = await sql.get<Record<string, unknown>>(TABLES[kind].get, [sessionId, id]);
    if (!row) return null;
    return {
      record: toRecord(kind, row),
      workspace: (row.workspace as string | null) ?? null,
      startResponse: parse(row.start_response),
      completeResponse: parse(row.complete_response),
    };
  }

  function insert<K extends ActivityKind>(kind: K, a: NewActivity<K>): Promise<void> {
    const t = TABLES[kind];
    const row = a as unknown as Record<string, Param | boolean | undefined>;
    const values = t.stored.map((c) => (c === 'tracking' ? (a.tracking ? 1 : 0) : ((row[c] as Param) ?? null)));
    return sql.atomic(async (q) => {
      clock.bump(q, a.session_id, PART[kind]);
      await q.run(t.insert, values);
    });
  }

  async function list<K extends ActivityKind>(kind: K, sessionId: string): Promise<ActivityRecords[K][]> {
    const rows = await sql.all<Record<string, unknown>>(TABLES[kind].list, [sessionId]);
    return rows.map((r) => toRecord(kind, r));
  }

  return {
    get,
    insert,
    /** Records the answer given to the start (its checkpoint taken or not). */
    recordStart: (kind, sessionId, id, o) =>
      sql.atomic(async (q) => {
        clock.bump(q, sessionId, PART[kind]);
        await q.run(TABLES[kind].start, [o.tracking ? 1 : 0, o.reason, JSON.stringify(o.response), sessionId, id]);
      }),
    finish: (kind, sessionId, id, f) =>
      sql.atomic(async (q) => {
        clock.bump(q, sessionId, PART[kind]);
        await q.run(TABLES[kind].finish, [
          f.status,
          f.finished_at,
          f.error,
          f.tracking ? 1 : 0,
          f.reason,
          JSON.stringify(f.response),
          sessionId,
          id,
        ]);
      }),
    /** A session's activities of one kind, in start order. */
    list,
    recordUsage: (sessionId, runId, usage) =>
      sql.atomic(async (q) => {
        clock.bump(q, sessionId, 'runs');
        await q.run(RECORD_USAGE, [...USAGE_KEYS.map((k) => usage[k] ?? null), sessionId, runId]);
      }),
    /** change_ids of the session's runs and tool calls still open (their checkpoints are live). */
    async openChangeIds(sessionId) {
      const rows = await sql.all<{ change_id: string }>(OPEN_CHANGES, [sessionId, sessionId]);
      return rows.map((r) => r.change_id);
    },
    /** The ids of a run's tool calls still open, in start order (the run's end closes them). */
    async openToolCalls(sessionId, runId) {
      const rows = await sql.all<{ tool_call_id: string }>(OPEN_TOOL_CALLS, [sessionId, runId]);
      return rows.map((r) => r.tool_call_id);
    },
    async idsStartingWith(kind, sessionId, prefix, limit) {
      const rows = await sql.all<{ id: string }>(TABLES[kind].startingWith, [
        sessionId,
        [...prefix].length,
        prefix,
        limit,
      ]);
      return rows.map((r) => r.id);
    },
    /** Runs and tool calls still open in any session, with their workspaces (a revert must not race them). */
    openEverywhere: () => sql.all<{ session_id: string; change_id: string; workspace: string | null }>(OPEN_EVERYWHERE),
    // Typed shorthands for readers that name one kind.
    getRun: (sessionId, runId) => get('run', sessionId, runId),
    insertRun: (run: Omit<Run, 'usage'>) => insert('run', run),
    insertToolCall: (call) => insert('tool', call),
    listRuns: (sessionId) => list('run', sessionId),
    listToolCalls: (sessionId) => list('tool', sessionId),
  };
}

import type { Run, ToolCall } from '../../../shared/index.ts';
import {
  RUN_FIELDS,
  TOOL_CALL_FIELDS,
  type ActivityKind,
  type ActivityRecords,
  type NewActivity,
  type Recorded,
} from '../runs.ts';
import type { RunsApi } from '../types.ts';
import { bump, type WritePart } from './clock.ts';
import { placeholders, type Exec } from './exec.ts';

const TABLES: Record<ActivityKind, { name: string; id: string; fields: readonly string[] }> = {
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

/** The part of a session's answer each kind's writes touch. */
const PART: Record<ActivityKind, WritePart> = { run: 'runs', tool: 'tool_calls' };

/** The DTO's fields in their served order, `tracking` read as a boolean. */
function toRecord<K extends ActivityKind>(kind: K, row: Record<string, unknown>): ActivityRecords[K] {
  const out: Record<string, unknown> = {};
  for (const f of TABLES[kind].fields) out[f] = f === 'tracking' ? row[f] === 1 : row[f];
  return out as unknown as ActivityRecords[K];
}

const parse = <T>(text: unknown): T | null =>
  text === null || text === undefined ? null : (JSON.parse(String(text)) as T);

export function createPgRuns(x: Exec): RunsApi {
  async function get<K extends ActivityKind>(
    kind: K,
    sessionId: string,
    id: string,
  ): Promise<Recorded<ActivityRecords[K]> | null> {
    const t = TABLES[kind];
    const { rows } = await x.q.query(
      `SELECT ${t.fields.join(', ')}, workspace, start_response, complete_response FROM ${t.name}
       WHERE session_id = $1 AND ${t.id} = $2`,
      [sessionId, id],
    );
    const row = rows[0];
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
    const columns = t.fields.includes('workspace') ? [...t.fields] : [...t.fields, 'workspace'];
    const row = a as unknown as Record<string, unknown>;
    const values = columns.map((c) => (c === 'tracking' ? (a.tracking ? 1 : 0) : (row[c] ?? null)));
    return x.atomic(async (q) => {
      await bump(q, a.session_id, PART[kind]);
      await q.query(`INSERT INTO ${t.name} (${columns.join(', ')}) VALUES (${placeholders(columns.length)})`, values);
    });
  }

  async function list<K extends ActivityKind>(kind: K, sessionId: string): Promise<ActivityRecords[K][]> {
    const t = TABLES[kind];
    const { rows } = await x.q.query(
      `SELECT ${t.fields.join(', ')} FROM ${t.name} WHERE session_id = $1 ORDER BY started_at, seq`,
      [sessionId],
    );
    return rows.map((r) => toRecord(kind, r));
  }

  return {
    get,
    insert,
    recordStart: (kind, sessionId, id, o) =>
      x.atomic(async (q) => {
        const t = TABLES[kind];
        await bump(q, sessionId, PART[kind]);
        await q.query(
          `UPDATE ${t.name} SET tracking = $3, reason = $4, start_response = $5 WHERE session_id = $1 AND ${t.id} = $2`,
          [sessionId, id, o.tracking ? 1 : 0, o.reason, JSON.stringify(o.response)],
        );
      }),
    finish: (kind, sessionId, id, f) =>
      x.atomic(async (q) => {
        const t = TABLES[kind];
        await bump(q, sessionId, PART[kind]);
        await q.query(
          `UPDATE ${t.name} SET status = $3, finished_at = $4, error = $5, tracking = $6, reason = $7,
             complete_response = $8 WHERE session_id = $1 AND ${t.id} = $2`,
          [sessionId, id, f.status, f.finished_at, f.error, f.tracking ? 1 : 0, f.reason, JSON.stringify(f.response)],
        );
      }),
    list,
    async openChangeIds(sessionId) {
      const { rows } = await x.q.query<{ change_id: string }>(
        `SELECT change_id FROM runs WHERE session_id = $1 AND status = 'running'
         UNION ALL SELECT change_id FROM tool_calls WHERE session_id = $1 AND status = 'running'`,
        [sessionId],
      );
      return rows.map((r) => r.change_id);
    },
    async openEverywhere() {
      const { rows } = await x.q.query<{ session_id: string; change_id: string; workspace: string | null }>(
        `SELECT session_id, change_id, workspace FROM runs WHERE status = 'running'
         UNION ALL SELECT session_id, change_id, workspace FROM tool_calls WHERE status = 'running'`,
      );
      return rows;
    },
    getRun: (sessionId, runId) => get('run', sessionId, runId),
    insertRun: (run: Run) => insert('run', run as NewActivity<'run'>),
    insertToolCall: (call) => insert('tool', call),
    listRuns: (sessionId) => list('run', sessionId) as Promise<Run[]>,
    listToolCalls: (sessionId) => list('tool', sessionId) as Promise<ToolCall[]>,
  };
}

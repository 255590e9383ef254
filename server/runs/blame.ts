import {
  BLAME_PROMPT_CHARS,
  FILES_PAGE_MAX,
  type BlameOrigin,
  type BlameResponse,
  type ChangeSummary,
  type FileSummary,
  type Limits,
  type Run,
  type ToolCall,
} from '../../shared/index.ts';
import { attribute, splitLines, type Snapshot } from '../blame/index.ts';
import { AppError } from '../errors.ts';
import type { StoredSide, Store, StoreTx } from '../store/index.ts';

/**
 * Provenance over the stored history: a file's states as its changes kept them (each run's start
 * and end, and each of its tool calls' start and end), in recorded order, handed to the pure
 * attribution (`server/blame/`). A run's start that differs from the state before it is an edit
 * made outside rundiff; a tool call's start that differs from the state before it was made by its
 * run outside any tool call. Reads only the content store, never the workspace.
 */

export type BlameLimits = Pick<Limits, 'blameMaxLines' | 'blameMaxChanges' | 'diffTimeoutMs'>;

/** Messages read for the runs' prompts. */
const PROMPT_MESSAGES = 10_000;

/** A stored row of the path in one change. */
interface Touch {
  change: ChangeSummary;
  row: FileSummary;
  /** The path before the change (its old path for a rename). */
  beforePath: string;
}

/** A stored state of the file with what made it, and the change whose end (or start) it is. */
interface State {
  side: StoredSide | 'absent' | null;
  origin: BlameOrigin;
}

/** Every stored row of a change (its first page is in the summary; further pages are read). */
export async function rowsOf(tx: StoreTx, sessionId: string, change: ChangeSummary): Promise<FileSummary[]> {
  if (change.files_total === undefined) return change.files;
  const out: FileSummary[] = [];
  let after = -1;
  for (;;) {
    const page = await tx.changes.filesPage(sessionId, change.change_id, after, FILES_PAGE_MAX);
    if (!page) return out;
    out.push(...page.files);
    if (page.next_file_cursor === null) return out;
    after = Number(page.next_file_cursor);
  }
}

/** The hook agent a session id names (`claude-code:...`), else null. */
function agentOfSession(sessionId: string): string | null {
  return /^([a-z][a-z0-9-]{0,40}):/.exec(sessionId)?.[1] ?? null;
}

/** Lines of a kept side, or null when it cannot be told (not kept, binary, past the line bound). */
async function linesOf(
  tx: StoreTx,
  side: StoredSide | 'absent' | null,
  maxLines: number,
): Promise<{ lines: string[] | null; why: 'binary' | 'too_many_lines' | 'not_kept' | null }> {
  if (side === 'absent') return { lines: [], why: null };
  if (side === null) return { lines: null, why: 'not_kept' };
  if (side.mode === null) return { lines: [], why: null };
  if (side.sha256 === null) return { lines: null, why: 'not_kept' };
  const bytes = await tx.contents.blob(side.sha256);
  if (bytes === null) return { lines: null, why: 'not_kept' };
  if (bytes.subarray(0, 8000).indexOf(0) !== -1) return { lines: null, why: 'binary' };
  const lines = splitLines(bytes.toString('utf8'));
  if (lines.length > maxLines) return { lines: null, why: 'too_many_lines' };
  return { lines, why: null };
}

/**
 * Each line of `path` at the end of change `at` (default: the session's last change), with the run
 * and tool call that last wrote it. `not_found` for an unknown session or change, `invalid_input`
 * for a binary file, `payload_too_large` past `blameMaxLines`.
 */
export async function blameFile(
  store: Store,
  sessionId: string,
  path: string,
  at: string | null,
  limits: BlameLimits,
): Promise<BlameResponse> {
  return store.transaction(async (tx) => {
    if (!(await tx.sessions.exists(sessionId)))
      throw new AppError('not_found', `no session ${JSON.stringify(sessionId)}`);
    const all = await tx.changes.listForSession(sessionId);
    let end = all.length - 1;
    if (at !== null) {
      end = all.findIndex((c) => c.change_id === at);
      if (end === -1) throw new AppError('not_found', `no change ${JSON.stringify(at)} in this session`);
    }
    const target = all[end];
    const endChange = target?.change_id ?? null;
    // A run's change stored last is its end; its tool calls' changes come first (stored as each ends).
    const upTo = all.slice(0, end + 1);
    const runs = new Map<string, Run>((await tx.runs.listRuns(sessionId)).map((r) => [r.run_id, r]));
    const tools = new Map<string, ToolCall>((await tx.runs.listToolCalls(sessionId)).map((t) => [t.tool_call_id, t]));
    const prompts = new Map<string, string>();
    for (const m of await tx.messages.page(sessionId, PROMPT_MESSAGES, null))
      if (m.role === 'user' && m.run_id !== null && !prompts.has(m.run_id))
        prompts.set(m.run_id, m.content.slice(0, BLAME_PROMPT_CHARS));
    const sessionAgent = agentOfSession(sessionId);

    // Newest first: the path as each change left it, following renames back to their old names.
    const touches: Touch[] = [];
    let name = path;
    let truncated = false;
    let gone = false;
    // A run-level rename names the new path in the run's tool calls too (stored before it): the
    // old name applies once the walk leaves that run; a tool call's rename applies at once.
    let pending: { runId: string; name: string } | null = null;
    for (let i = upTo.length - 1; i >= 0; i--) {
      const change = upTo[i]!;
      if (pending && pending.runId !== change.run_id) {
        name = pending.name;
        pending = null;
      }
      const rows = await rowsOf(tx, sessionId, change);
      const row = rows.find((r) => r.path === name && r.path_base64 === undefined);
      if (!row) {
        // Renamed away last: the path no longer exists there.
        if (touches.length === 0 && rows.some((r) => r.change_type === 'renamed' && r.old_path === name)) {
          gone = true;
          break;
        }
        continue;
      }
      if (touches.length >= limits.blameMaxChanges) {
        truncated = true;
        break;
      }
      const beforePath = row.change_type === 'renamed' && row.old_path !== null ? row.old_path : name;
      touches.push({ change, row, beforePath });
      if (change.source === 'tool') name = beforePath;
      else if (beforePath !== name) pending = { runId: change.run_id, name: beforePath };
    }
    touches.reverse();
    if (gone)
      return {
        session_id: sessionId,
        path,
        at_change_id: endChange,
        exists: false,
        origins: [],
        lines: [],
        changes_walked: 0,
        truncated: false,
        diff_gave_up: false,
      };

    const originOf = (c: ChangeSummary, kind: 'run' | 'tool_call'): BlameOrigin => {
      const run = runs.get(c.run_id);
      const tool = kind === 'tool_call' && c.tool_call_id !== null ? tools.get(c.tool_call_id) : undefined;
      return {
        kind,
        run_id: c.run_id,
        tool_call_id: kind === 'tool_call' ? c.tool_call_id : null,
        change_id: c.change_id,
        run_title: run?.title ?? null,
        prompt: prompts.get(c.run_id) ?? null,
        agent: sessionAgent ?? run?.source ?? c.source,
        tool_name: tool?.name ?? null,
        at: c.finished_at ?? c.created_at,
        from: null,
        to: null,
      };
    };

    const kept = new Map<string, Map<string, { before: StoredSide; after: StoredSide }>>();
    const sidesOf = async (t: Touch) => {
      let m = kept.get(t.change.change_id);
      if (!m) kept.set(t.change.change_id, (m = await tx.contents.forChange(sessionId, t.change.change_id)));
      const c = m.get(t.row.id);
      const before: StoredSide | 'absent' | null = t.row.change_type === 'added' ? 'absent' : (c?.before ?? null);
      const after: StoredSide | 'absent' | null = t.row.change_type === 'deleted' ? 'absent' : (c?.after ?? null);
      return { before, after };
    };

    // The states in order: a run's start, each tool call's start and end, the run's end.
    const states: State[] = [];
    let lastEnd: number | null = null;
    let i = 0;
    while (i < touches.length) {
      const t = touches[i]!;
      const runId = t.change.run_id;
      const group: Touch[] = [];
      while (i < touches.length && touches[i]!.change.run_id === runId) group.push(touches[i++]!);
      const runTouch = group.find((g) => g.change.source !== 'tool');
      const toolTouches = group.filter((g) => g.change.source === 'tool');
      const first = runTouch ?? toolTouches[0]!;
      const startedAt = first.change.started_at ?? runs.get(runId)?.started_at ?? null;
      const firstSides = await sidesOf(first);
      states.push({
        side: firstSides.before,
        origin: {
          ...originOf(first.change, 'run'),
          kind: 'outside',
          tool_call_id: null,
          tool_name: null,
          at: null,
          from: lastEnd,
          to: startedAt,
        },
      });
      for (const tt of toolTouches) {
        const s = await sidesOf(tt);
        const run = runTouch ?? tt;
        states.push({ side: s.before, origin: originOf(run.change, 'run') });
        states.push({ side: s.after, origin: originOf(tt.change, 'tool_call') });
      }
      if (runTouch) states.push({ side: (await sidesOf(runTouch)).after, origin: originOf(runTouch.change, 'run') });
      const last = group[group.length - 1]!.change;
      lastEnd = runTouch?.change.finished_at ?? last.finished_at ?? last.created_at;
    }

    const snapshots: Snapshot<BlameOrigin>[] = [];
    let lastWhy: string | null = null;
    for (const s of states) {
      const { lines, why } = await linesOf(tx, s.side, limits.blameMaxLines);
      snapshots.push({ lines, origin: s.origin });
      lastWhy = why;
    }
    if (lastWhy === 'binary')
      throw new AppError('invalid_input', `${JSON.stringify(path)} is a binary file: it has no lines to blame`);
    if (lastWhy === 'too_many_lines')
      throw new AppError('payload_too_large', `${JSON.stringify(path)} has more than ${limits.blameMaxLines} lines`, {
        hint: 'RUNDIFF_BLAME_MAX_LINES raises the bound',
        details: { max_lines: limits.blameMaxLines },
      });
    if (touches.length === 0)
      throw new AppError('not_found', `no recorded change of ${JSON.stringify(path)} in this session`);

    const result = attribute(snapshots, limits.diffTimeoutMs);
    const lastTouch = touches[touches.length - 1]!;
    const exists = lastTouch.row.change_type !== 'deleted';
    if (result === null && exists)
      throw new AppError('not_found', `no kept content of ${JSON.stringify(path)} at that point`, {
        details: { omitted_reason: 'not_stored' },
      });
    const origins: BlameOrigin[] = [];
    const index = new Map<string, number>();
    const empty: BlameOrigin = {
      kind: 'before_runs',
      run_id: null,
      tool_call_id: null,
      change_id: null,
      run_title: null,
      prompt: null,
      agent: null,
      tool_name: null,
      at: null,
      from: null,
      to: null,
    };
    const lines = (result?.lines ?? []).map((text, n) => {
      const a = result!.attributions[n]!;
      const o: BlameOrigin =
        a.kind === 'initial'
          ? { ...empty, kind: truncated ? 'truncated' : 'before_runs' }
          : a.kind === 'not_kept'
            ? { ...a.origin, kind: 'not_kept' }
            : a.origin;
      const key = JSON.stringify(o);
      let k = index.get(key);
      if (k === undefined) {
        k = origins.push(o) - 1;
        index.set(key, k);
      }
      return { line: n + 1, text, origin: k };
    });
    return {
      session_id: sessionId,
      path,
      at_change_id: endChange,
      exists,
      origins,
      lines,
      changes_walked: touches.length,
      truncated,
      diff_gave_up: result?.gaveUp ?? false,
    };
  });
}

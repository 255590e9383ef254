import { z } from 'zod';
import {
  FILES_PAGE_MAX,
  FIRST_FILES_PAGE,
  type ChangeFilesPage,
  type ChangeSummary,
  type FileSummary,
  type Run,
  type RunChangesOutput,
  type UntrackedReason,
  type WorkspaceKind,
} from '../../shared/index.ts';
import type { CheckpointEngine, DeltaResult } from '../checkpoint/types.ts';
import type { DeltaFile } from '../delta/types.ts';
import { AppError } from '../errors.ts';
import type { Store } from '../store/index.ts';
import { toNewChange, toNewFile } from '../runs/index.ts';

/**
 * `run_changes {session_id, run_id?, cursor?, limit?}` (docs/contract.md section 5): a finished run's stored
 * change, or for a run still open the delta from its live checkpoint so far (computed now, nothing
 * stored, the checkpoint kept). A finished run with no changed file has no stored change: its answer
 * is built from the run row with zero counts. An untracked run answers `tracking: false` with its
 * reason, so "nothing changed" is never confused with "nothing was watched". The files come a page at
 * a time in path order, so a change of thousands of paths never lands in one answer.
 */

/** The bridge's id rule (docs/contract.md section 2): 1-200 printable characters. */
const NOT_PRINTABLE = /[\p{Cc}\p{Cs}\p{Zl}\p{Zp}]/u;
const id = z
  .string()
  .min(1)
  .refine((s) => [...s].length <= 200 && !NOT_PRINTABLE.test(s), { message: 'must be 1-200 printable characters' });

export const runChangesInput = z.strictObject({
  session_id: id.describe('The rundiff session.'),
  run_id: id.describe("The run. Default: the session's newest run.").optional(),
  cursor: z
    .string()
    .regex(/^\d{1,9}$/, 'must be the next_cursor of an earlier answer')
    .describe('Where to go on: the next_cursor of the previous answer for the same run. Default: the first file.')
    .optional(),
  limit: z
    .number()
    .int()
    .min(1)
    .max(FILES_PAGE_MAX)
    .describe(`Files per answer, in path order (1-${FILES_PAGE_MAX}). Default ${FIRST_FILES_PAGE}.`)
    .optional(),
});

const fileSummary = z.looseObject({
  id: z.string(),
  path: z.string(),
  old_path: z.string().nullable(),
  change_type: z.enum(['added', 'modified', 'deleted', 'renamed']),
  additions: z.number(),
  deletions: z.number(),
  binary: z.boolean(),
  truncated: z.boolean(),
  size_before: z.number().nullable(),
  size_after: z.number().nullable(),
  patch_bytes: z.number(),
  omitted_reason: z.string().nullable(),
});

export const runChangesOutput = z.object({
  change: z.looseObject({
    change_id: z.string(),
    session_id: z.string(),
    run_id: z.string(),
    workspace: z.string().nullable(),
    changed_count: z.number(),
    truncated: z.boolean(),
    truncated_reasons: z.array(z.string()),
    omitted_count: z.number(),
    files: z.array(fileSummary),
  }),
  open: z.boolean(),
  tracking: z.boolean(),
  reason: z.string().nullable(),
  files_total: z.number(),
  next_cursor: z.string().nullable(),
});

export type RunChangesArgs = z.output<typeof runChangesInput>;

export interface RunChangesDeps {
  store: Store;
  engine: CheckpointEngine;
  now?: () => number;
}

/** Files of an open run are not stored, so their ids are positions: they cannot be fetched by id. */
function liveFile(f: DeltaFile, i: number): FileSummary {
  const { patch: _patch, ...summary } = toNewFile(f);
  return { id: `open-${i + 1}`, ...summary };
}

function fromDelta(run: Run, d: DeltaResult, t: number): ChangeSummary {
  const owner = {
    sessionId: run.session_id,
    runId: run.run_id,
    changeId: run.change_id,
    toolCallId: null,
    source: run.source,
  };
  // Every file of the delta; the caller cuts the page.
  const files = d.files.map(liveFile);
  const total_additions = files.reduce((n, f) => n + f.additions, 0);
  const total_deletions = files.reduce((n, f) => n + f.deletions, 0);
  return { ...toNewChange(owner, d, t), total_additions, total_deletions, files };
}

/** A change with nothing in it, from the run row (no changed file, or not tracked). */
function emptyChange(
  run: Run,
  kind: WorkspaceKind,
  bounds: Pick<ChangeSummary, 'truncated' | 'truncated_reasons' | 'omitted_count'>,
  t: number,
): ChangeSummary {
  return {
    change_id: run.change_id,
    session_id: run.session_id,
    run_id: run.run_id,
    tool_call_id: null,
    source: run.source,
    workspace: run.workspace,
    workspace_kind: kind,
    started_at: run.started_at,
    finished_at: run.finished_at,
    changed_count: 0,
    added_count: 0,
    modified_count: 0,
    deleted_count: 0,
    renamed_count: 0,
    binary_count: 0,
    truncated: bounds.truncated,
    truncated_reasons: [...bounds.truncated_reasons],
    total_patch_bytes: 0,
    overlapping: false,
    omitted_count: bounds.omitted_count,
    created_at: run.finished_at ?? t,
    total_additions: 0,
    total_deletions: 0,
    files: [],
  };
}

const NO_BOUNDS = { truncated: false, truncated_reasons: [], omitted_count: 0 };

/** A change whose `files` is the page asked for; the paging fields move to the top of the answer. */
function withPage(
  change: ChangeSummary,
  page: ChangeFilesPage,
): Pick<RunChangesOutput, 'change' | 'files_total' | 'next_cursor'> {
  const { files_total: _total, next_file_cursor: _cursor, ...rest } = change;
  return { change: { ...rest, files: page.files }, files_total: page.files_total, next_cursor: page.next_file_cursor };
}

/**
 * A page of files held in memory (an open run's delta, or no files at all). The cursor is the
 * position of the page's last file, as for stored rows; an open run's positions are those of the
 * delta computed for this call.
 */
export function pageInMemory(files: readonly FileSummary[], after: number, limit: number): ChangeFilesPage {
  const from = after + 1;
  const page = files.slice(from, from + limit);
  const more = from + limit < files.length;
  return { files: page, files_total: files.length, next_file_cursor: more ? String(from + limit - 1) : null };
}

interface Paging {
  after: number;
  limit: number;
}

function pagingOf(args: RunChangesArgs): Paging {
  return { after: args.cursor === undefined ? -1 : Number(args.cursor), limit: args.limit ?? FIRST_FILES_PAGE };
}

/** The run the call names: `run_id`, else the session's newest; `not_found` when there is none. */
export async function pickRun(store: Store, sessionId: string, runId: string | undefined): Promise<Run> {
  if (!(await store.sessions.exists(sessionId))) {
    throw new AppError('not_found', `no session ${JSON.stringify(sessionId)}`, { details: { session_id: sessionId } });
  }
  if (runId !== undefined) {
    const run = await store.runs.getRun(sessionId, runId);
    if (!run) {
      throw new AppError('not_found', `no run ${JSON.stringify(runId)} in session ${JSON.stringify(sessionId)}`, {
        details: { session_id: sessionId, run_id: runId },
      });
    }
    return run.record;
  }
  const runs = await store.runs.listRuns(sessionId);
  const newest = runs[runs.length - 1];
  if (!newest) {
    throw new AppError('not_found', `session ${JSON.stringify(sessionId)} has no runs`, {
      details: { session_id: sessionId },
    });
  }
  return newest;
}

async function finished(store: Store, run: Run, t: number, paging: Paging): Promise<RunChangesOutput> {
  const { recorded, stored, page } = await store.transaction(async (tx) => {
    const stored = await tx.changes.get(run.session_id, run.change_id);
    return {
      recorded: await tx.runs.getRun(run.session_id, run.run_id),
      stored,
      page: stored ? await tx.changes.filesPage(run.session_id, run.change_id, paging.after, paging.limit) : null,
    };
  });
  const start = recorded?.startResponse ?? null;
  const done = recorded?.completeResponse ?? null;
  const kind: WorkspaceKind = start?.tracking ? start.workspace_kind : 'filesystem';
  const none = pageInMemory([], paging.after, paging.limit);
  if (stored) {
    return { ...withPage(stored, page ?? none), open: false, tracking: true, reason: null };
  }
  if (done?.tracking) {
    return { ...withPage(emptyChange(run, kind, done, t), none), open: false, tracking: true, reason: null };
  }
  const reason: UntrackedReason = done && !done.tracking ? done.reason : (run.reason ?? 'no_checkpoint');
  return { ...withPage(emptyChange(run, kind, NO_BOUNDS, t), none), open: false, tracking: false, reason };
}

export async function runChanges(deps: RunChangesDeps, args: RunChangesArgs): Promise<RunChangesOutput> {
  const now = deps.now ?? Date.now;
  const paging = pagingOf(args);
  const run = await pickRun(deps.store, args.session_id, args.run_id);
  if (run.status !== 'running') return finished(deps.store, run, now(), paging);

  const recorded = await deps.store.runs.getRun(run.session_id, run.run_id);
  const start = recorded?.startResponse ?? null;
  let d: DeltaResult | null = null;
  if (!start || start.tracking) d = await deps.engine.peek(run.session_id, run.change_id);
  if (d) {
    const change = fromDelta(run, d, now());
    const page = pageInMemory(change.files, paging.after, paging.limit);
    return { ...withPage(change, page), open: true, tracking: true, reason: null };
  }

  // No checkpoint: the run may have completed meanwhile (its change is stored now), or it is untracked.
  const again = await deps.store.runs.getRun(run.session_id, run.run_id);
  if (again && again.record.status !== 'running') return finished(deps.store, again.record, now(), paging);
  const reason: UntrackedReason = start && !start.tracking ? start.reason : 'no_checkpoint';
  const empty = emptyChange(run, 'filesystem', NO_BOUNDS, now());
  return { ...withPage(empty, pageInMemory([], paging.after, paging.limit)), open: true, tracking: false, reason };
}

const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;

/**
 * The answer in one readable line, for a client that reads text rather than the structured
 * content: `showing 50 of 300 files (1-50)`, where to go on, and what the files are not.
 */
export function runChangesText(output: RunChangesOutput, cursor?: string): string {
  if (!output.tracking) {
    return `showing 0 of 0 files: the run's workspace was not tracked (${output.reason ?? 'no reason given'})`;
  }
  const shown = output.change.files.length;
  const first = cursor === undefined ? 1 : Number(cursor) + 2;
  const parts = [`showing ${shown.toLocaleString('en-US')} of ${plural(output.files_total, 'file')}`];
  if (shown > 0) parts[0] += ` (${first}-${first + shown - 1} in path order)`;
  if (output.open) parts.push('the run is still open: these are its changes so far');
  if (output.next_cursor !== null) parts.push(`call again with cursor "${output.next_cursor}" for the next page`);
  const omitted = output.change.omitted_count;
  if (omitted > 0) parts.push(`${plural(omitted, 'more changed path')} not stored (row bound)`);
  return parts.join('; ');
}

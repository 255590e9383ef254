import { createHash, randomUUID } from 'node:crypto';
import {
  FILES_PAGE_MAX,
  type ContentUnavailableReason,
  type FileSummary,
  type Limits,
  type RevertFile,
  type RevertRequest,
  type RevertResponse,
} from '../../shared/index.ts';
import type { CheckpointEngine } from '../checkpoint/index.ts';
import type { Config } from '../config.ts';
import { computeDelta, wholeRunPatch } from '../delta/index.ts';
import { AppError } from '../errors.ts';
import {
  closeRoot,
  namesRoot,
  openRoot,
  removeInside,
  writeInside,
  type SafeRoot,
  type WriteResult,
} from '../fs/index.ts';
import { createGitDiffEngine, mergeFile } from '../git/index.ts';
import { patchOfSides } from '../net-change/index.ts';
import { isInside, keyFromShown, type PathKey } from '../paths/index.ts';
import type { Recorder } from '../runs/index.ts';
import type { StoredSide, Store } from '../store/index.ts';
import { resolveWorkspace } from '../workspace/index.ts';
import { fingerprint, readCurrent, sha256Of, type Current } from './current.ts';
import { undoHunks, type HunkChoice } from './hunks.ts';
import { decide, entryOf, type Decision, type FileToRevert, type KeptSide, type Merge } from './plan.ts';

export interface RevertDeps {
  store: Store;
  recorder: Recorder;
  engine: Pick<CheckpointEngine, 'has'>;
  config: Pick<Config, 'workspaceRoots' | 'homeDir' | 'limits'>;
  log: (message: string) => void;
  /** The three-way merge; default `git merge-file` in a private temp folder. */
  merge?: Merge;
}

/** Every stored row of a change, page by page. */
async function allRows(store: Store, sessionId: string, changeId: string): Promise<FileSummary[]> {
  const out: FileSummary[] = [];
  let after = -1;
  for (;;) {
    const page = await store.changes.filesPage(sessionId, changeId, after, FILES_PAGE_MAX);
    if (!page) return out;
    out.push(...page.files);
    if (page.next_file_cursor === null) return out;
    after = Number(page.next_file_cursor);
  }
}

type Loaded = { ok: true; side: KeptSide } | { ok: false; reason: ContentUnavailableReason };

async function loadSide(store: Store, s: StoredSide): Promise<Loaded> {
  if (s.mode === null) return { ok: true, side: { exists: false } };
  if (s.sha256 === null) return { ok: false, reason: s.reason ?? 'not_recorded' };
  const bytes = await store.contents.blob(s.sha256);
  if (!bytes) return { ok: false, reason: 'evicted' };
  return { ok: true, side: { exists: true, mode: s.mode, bytes, sha256: s.sha256 } };
}

interface Planned {
  row: FileSummary;
  decision: Decision;
  /**
   * What stood at each touched path when planned: a write proceeds only if it still does, and an
   * all-or-nothing revert that fails midway puts it back.
   */
  guards: { key: PathKey; print: string; now: Current }[];
  patch: string | null;
}

const describe = (reason: ContentUnavailableReason): string =>
  ({
    too_large: 'too_large: a side of the file was larger than the content bound, so its bytes were not kept',
    no_snapshot: 'no_snapshot: a side of the file had no snapshot (memory cap or snapshot bound)',
    unreadable: 'unreadable: a side of the file could not be read when the run ended',
    submodule: 'submodule: a submodule has no file content to restore',
    budget: 'budget: the content store was full, so the bytes were not kept',
    evicted: 'evicted: the bytes were removed to make room for newer changes',
    storage_failed: 'storage_failed: the database refused the bytes when the run ended',
    not_recorded: 'not_recorded: the bytes were not kept (stored before undo existed)',
    pending: 'pending: the bytes were still being written (or the server stopped while they were)',
  })[reason];

/** The patch from what stands now to what a decision leaves. */
async function patchOf(d: Decision, limits: Readonly<Limits>): Promise<string | null> {
  if (d.sides.length === 0) return null;
  const delta = await computeDelta({
    changes: d.sides.map((s) => ({ path: s.key, before: s.now, after: s.then })),
    limits: { ...limits, maxChangedFiles: d.sides.length },
  });
  return wholeRunPatch(delta.files);
}

function toAnswer(p: Planned, applied: boolean, error?: string): RevertFile {
  const out: RevertFile = {
    file_id: p.row.id,
    path: p.row.path,
    old_path: p.row.old_path,
    action: p.decision.action,
    reason: p.decision.reason,
    patch: p.patch,
    conflict: p.decision.conflict,
    applied,
  };
  if (error !== undefined) out.error = error;
  return out;
}

const writes = (p: Planned) => p.decision.action === 'restore' || p.decision.action === 'merge';
/** A file the revert asked for that it cannot revert: an all-or-nothing revert then writes nothing. */
const blocks = (action: RevertFile['action']) =>
  action === 'conflict' || action === 'unavailable' || action === 'refused';

/**
 * Undoing a stored change, whole or some of its files: plans each file from its kept contents and
 * what stands in the workspace now, answers the plan for a dry run, or applies every clean file
 * (each atomically) and records the revert as a run of its own (source `revert`) through the same
 * start and close as every run, so the history stays truthful and the revert can be undone too.
 */
export function createReverter(deps: RevertDeps) {
  const { store, recorder, engine, config, log } = deps;
  const mergeWith: Merge =
    deps.merge ??
    ((sides) =>
      mergeFile(sides, { current: 'now', base: 'after the run', other: 'before the run (the undo)' }, 10_000));
  const merge: Merge = async (sides) => {
    try {
      return await mergeWith(sides);
    } catch (err) {
      log(`revert: the three-way merge failed: ${(err as Error).message}`);
      throw err;
    }
  };
  const reverting = new Set<string>();
  const diffEngine = createGitDiffEngine();

  /**
   * The file's start as a hunk undo sees it: its end with the named hunks of its whole patch (as the
   * completion computed it) put back. Refused with why when the file has no such hunks.
   */
  async function startWithHunksUndone(
    row: FileSummary,
    before: KeptSide,
    after: KeptSide,
    hunks: readonly HunkChoice[],
  ): Promise<KeptSide> {
    const refuse = (why: string) =>
      new AppError('invalid_input', `the hunks of ${row.path} cannot be undone one by one: ${why}`, {
        hint: 'revert the whole file instead',
        details: { file_id: row.id },
      });
    if (!before.exists || !after.exists) throw refuse('the run added or deleted the file');
    if (row.binary) throw refuse('it is a binary file');
    const side = (s: { bytes: Buffer; mode: string }) => ({ bytes: s.bytes, size: s.bytes.length, mode: s.mode });
    // The content's patch at the file's path (a rename's hunks are those of its content).
    const file = await patchOfSides(
      { ...row, change_type: 'modified', old_path: null, old_path_base64: null },
      side(before),
      side(after),
      { maxBytes: config.limits.maxOpenedPatchBytes, diffTimeoutMs: config.limits.diffTimeoutMs },
      { binary: false, engine: diffEngine },
    );
    // A patch of text that is not UTF-8 is read here as text: its hunks are not matched byte for byte.
    if (file === null || file.truncated || file.raw)
      throw refuse('its patch is not whole (too large or not UTF-8 text)');
    const undone = undoHunks(after.bytes, file.patch, hunks);
    if (!undone.ok && undone.reason === 'bad_lines')
      throw new AppError('invalid_input', `the lines of ${row.path} cannot be undone: ${undone.message}`, {
        hint: 'name + and - lines of the hunk by their index in its body (0 = the first line after its header)',
        details: { file_id: row.id, hunk: undone.hunk, field: 'hunks' },
      });
    if (!undone.ok)
      throw new AppError('not_found', `no hunk ${undone.hunk} in the patch of ${row.path}`, {
        hint: "name a hunk by its header as the file's patch shows it",
        details: { file_id: row.id, hunk: undone.hunk },
      });
    return { exists: true, mode: after.mode, bytes: undone.bytes, sha256: sha256Of(undone.bytes) };
  }

  /** Another revert on or around `root` (checked and claimed without a pause between). */
  function reverted(root: string): string | null {
    for (const r of reverting) if (isInside(r, root) || isInside(root, r)) return 'another revert is running there';
    return null;
  }

  async function openRun(root: string): Promise<string | null> {
    for (const open of await store.runs.openEverywhere()) {
      if (open.workspace === null || !engine.has(open.session_id, open.change_id)) continue;
      if (isInside(open.workspace, root) || isInside(root, open.workspace))
        return `${open.change_id} of session ${open.session_id} is still open on it`;
    }
    return null;
  }

  /** `hunks`: undo only these hunks of the file (the file stays at its path, the rest keeps the run's edits). */
  async function planFile(
    root: SafeRoot,
    sessionId: string,
    changeId: string,
    row: FileSummary,
    hunks?: readonly HunkChoice[],
  ): Promise<Planned> {
    const afterKey = keyFromShown(row.path, row.path_base64);
    const beforeKey = row.old_path !== null && !hunks ? keyFromShown(row.old_path, row.old_path_base64) : afterKey;
    const base = { row, guards: [], patch: null };
    const kept = await store.contents.get(sessionId, changeId, row.id);
    if (!kept) return { ...base, decision: unavailable('not_recorded') };
    let before = await loadSide(store, kept.before);
    const after = await loadSide(store, kept.after);
    if (!before.ok) return { ...base, decision: unavailable(before.reason) };
    if (!after.ok) return { ...base, decision: unavailable(after.reason) };
    if (hunks) before = { ok: true, side: await startWithHunksUndone(row, before.side, after.side, hunks) };
    const max = config.limits.maxContentFileBytes;
    const atAfter: Current = readCurrent(root, afterKey, max);
    const atBefore: Current = beforeKey === afterKey ? atAfter : readCurrent(root, beforeKey, max);
    const f: FileToRevert = { row, beforeKey, afterKey, before: before.side, after: after.side, atAfter, atBefore };
    const decision = await decide(f, merge);
    const guards = [{ key: afterKey, print: fingerprint(atAfter), now: atAfter }];
    if (beforeKey !== afterKey) guards.push({ key: beforeKey, print: fingerprint(atBefore), now: atBefore });
    return { row, decision, guards, patch: await patchOf(decision, config.limits) };
  }

  /** Applies one planned file if nothing moved since it was planned; the outcome as answered. */
  function apply(root: SafeRoot, p: Planned): RevertFile {
    for (const g of p.guards) {
      if (fingerprint(readCurrent(root, g.key, config.limits.maxContentFileBytes)) !== g.print) {
        return toAnswer(
          { ...p, decision: { ...p.decision, action: 'conflict', reason: 'the file changed while the revert ran' } },
          false,
        );
      }
    }
    for (const step of p.decision.steps) {
      const r: WriteResult =
        step.kind === 'write' ? writeInside(root, step.key, step.entry) : removeInside(root, step.key);
      if (!r.ok) {
        log(`revert of ${p.row.path} failed: ${r.reason}: ${r.message}`);
        if (r.reason === 'outside_root')
          return toAnswer({ ...p, decision: { ...p.decision, action: 'refused', reason: r.message } }, false);
        return toAnswer(p, false, `${r.reason}: ${r.message}`);
      }
    }
    return toAnswer(p, true);
  }

  /**
   * Puts back what stood at each path of the files written (newest first), so an all-or-nothing
   * revert that failed midway leaves the tree as it found it; the paths it could not put back.
   */
  function putBack(root: SafeRoot, written: Planned[]): string[] {
    const failed: string[] = [];
    for (const p of [...written].reverse()) {
      for (const g of [...p.guards].reverse()) {
        const r: WriteResult =
          g.now.kind === 'absent'
            ? removeInside(root, g.key)
            : g.now.kind === 'entry'
              ? writeInside(root, g.key, entryOf(g.now.bytes, g.now.mode, g.now))
              : { ok: true };
        if (!r.ok) {
          log(`revert: could not put back ${p.row.path}: ${r.reason}: ${r.message}`);
          failed.push(p.row.path);
        }
      }
    }
    return failed;
  }

  async function revert(sessionId: string, changeId: string, req: RevertRequest): Promise<RevertResponse> {
    const change = await store.changes.get(sessionId, changeId);
    if (!change)
      throw new AppError('not_found', `no change ${JSON.stringify(changeId)} in session ${JSON.stringify(sessionId)}`);
    // A change answered a moment ago may still have its contents being written.
    await recorder.contentsSettled(sessionId, changeId);
    let rows = await allRows(store, sessionId, changeId);
    if (req.file_ids !== undefined) {
      const wanted = new Set(req.file_ids);
      const known = new Set(rows.map((r) => r.id));
      const unknown = req.file_ids.filter((id) => !known.has(id));
      if (unknown.length > 0)
        throw new AppError('not_found', `no file ${JSON.stringify(unknown[0])} in change ${JSON.stringify(changeId)}`, {
          details: { file_ids: unknown },
        });
      rows = rows.filter((r) => wanted.has(r.id));
    }
    const hunksOf = new Map<string, HunkChoice[]>();
    if (req.hunks !== undefined) {
      for (const h of req.hunks)
        hunksOf.set(h.file_id, [
          ...(hunksOf.get(h.file_id) ?? []),
          h.lines === undefined ? { hunk: h.hunk } : { hunk: h.hunk, lines: h.lines },
        ]);
      const known = new Set(rows.map((r) => r.id));
      const unknown = [...hunksOf.keys()].filter((id) => !known.has(id));
      if (unknown.length > 0)
        throw new AppError('not_found', `no file ${JSON.stringify(unknown[0])} in change ${JSON.stringify(changeId)}`, {
          details: { file_ids: unknown },
        });
      rows = rows.filter((r) => hunksOf.has(r.id));
    }
    const resolved = await resolveWorkspace(change.workspace, config);
    if (!resolved.ok || resolved.root !== change.workspace)
      throw new AppError(
        'not_found',
        `the workspace of ${changeId} cannot be written: ${resolved.ok ? 'it now resolves to another folder' : resolved.message}`,
        { details: { workspace: change.workspace } },
      );
    const rootPath = resolved.root;
    const dryRun = req.dry_run === true;
    if (!dryRun) {
      const busy = (why: string) =>
        new AppError('workspace_busy', `the workspace cannot be reverted now: ${why}`, {
          hint: 'wait for the run to finish, then revert',
          details: { workspace: rootPath },
        });
      const other = reverted(rootPath);
      if (other) throw busy(other);
      reverting.add(rootPath);
      const open = await openRun(rootPath).catch((err: unknown) => {
        reverting.delete(rootPath);
        throw err;
      });
      if (open) {
        reverting.delete(rootPath);
        throw busy(open);
      }
    }
    // Resolved once: the folder checked above is opened here and every read and write of this
    // revert goes through that one descriptor. A folder above it swapped for a symlink in between
    // leads elsewhere, and the workspace is then answered as moved.
    const root = openRoot(rootPath);
    if (!root) {
      if (!dryRun) reverting.delete(rootPath);
      throw new AppError(
        'not_found',
        `the workspace of ${changeId} cannot be written: it now resolves to another folder`,
        {
          details: { workspace: change.workspace },
        },
      );
    }
    try {
      const planned: Planned[] = [];
      for (const row of rows) planned.push(await planFile(root, sessionId, changeId, row, hunksOf.get(row.id)));
      const planId = planIdOf(planned);
      if (dryRun)
        return answer(
          changeId,
          true,
          planned.map((p) => toAnswer(p, false)),
          null,
          planId,
        );
      if (req.plan_id !== undefined && req.plan_id !== planId)
        throw new AppError(
          'revert_plan_changed',
          'nothing was reverted: the workspace changed since the preview, so the revert would not write what it showed',
          {
            hint: 'look at the new plan (details.files), then revert with its plan_id',
            details: { files: planned.map((p) => toAnswer(p, false)), plan_id: planId },
          },
        );
      const partial = req.partial === true;
      if (!partial) refuseIfAnyBlocked(planned.map((p) => toAnswer(p, false)));
      const hunkCount = req.hunks?.length ?? null;
      return await applyAll(root, sessionId, changeId, planned, partial, hunkCount, planId);
    } finally {
      closeRoot(root);
      if (!dryRun) reverting.delete(rootPath);
    }
  }

  async function applyAll(
    root: SafeRoot,
    sessionId: string,
    changeId: string,
    planned: Planned[],
    partial: boolean,
    hunkCount: number | null,
    planId: string,
  ) {
    const toWrite = planned.filter(writes);
    if (toWrite.length === 0) {
      const files = planned.map((p) => toAnswer(p, false));
      refuseIfNothingWritten(files, null);
      return answer(changeId, false, files, null, planId);
    }
    // Recorded as a run of its own: its checkpoint is taken before the first write.
    const runId = `revert-${randomUUID()}`;
    // Its checkpoint is taken by the workspace's name; it must be of the folder written through
    // the descriptor. A folder above swapped for a symlink meanwhile would give a checkpoint (and
    // a stored change) of another folder: then nothing is written.
    // The same holds for its end: a delta computed of another folder is not stored.
    const sameFolder = (real: string): boolean => real === root.root && namesRoot(root);
    let moved = false;
    await recorder.runStarted({
      session_id: sessionId,
      run_id: runId,
      workspace: root.root,
      source: 'revert',
      sameFolder: (real) => {
        moved = !sameFolder(real);
        return !moved;
      },
    });
    await recorder.message({
      session_id: sessionId,
      role: 'user',
      content:
        hunkCount === null
          ? `Revert ${toWrite.length} file${toWrite.length === 1 ? '' : 's'} of ${changeId}`
          : `Undo ${hunkCount} hunk${hunkCount === 1 ? '' : 's'} of ${toWrite.map((p) => p.row.path).join(', ')} in ${changeId}`,
      run_id: runId,
    });
    if (moved) {
      const why = 'the workspace moved while the revert started: its name leads to another folder';
      await recorder.runFailed({ session_id: sessionId, run_id: runId, error: `nothing was reverted: ${why}` });
      throw new AppError('not_found', `the workspace of ${changeId} cannot be written: ${why}`, {
        details: { workspace: root.root, revert_run_id: runId },
      });
    }
    let files: RevertFile[] = [];
    /** All or nothing: the file whose write failed, after which what was written was put back. */
    let stopped: { path: string; unrestored: string[] } | null = null;
    /** Whether the revert run's change was stored (not when its workspace moved meanwhile). */
    let recorded = true;
    try {
      for (const p of planned) {
        const done = writes(p) ? apply(root, p) : toAnswer(p, false);
        files.push(done);
        if (!partial && writes(p) && !done.applied) {
          const written = planned.filter((_, i) => files[i]?.applied === true);
          stopped = { path: p.row.path, unrestored: putBack(root, written) };
          files = planned.map((q, i) => {
            const f = files[i];
            if (f && !f.applied) return f;
            const again = toAnswer(q, false);
            if (!f) return { ...again, reason: `not written: ${p.row.path} could not be reverted` };
            const kept = stopped!.unrestored.includes(q.row.path);
            return kept
              ? { ...again, error: 'written, and could not be put back after another file failed' }
              : { ...again, reason: `put back: ${p.row.path} could not be reverted` };
          });
          break;
        }
      }
    } finally {
      const failed = files.filter((f) => f.error !== undefined).length;
      const applied = files.some((f) => f.applied);
      const closed =
        stopped || failed > 0 || !applied
          ? await recorder.runFailed({
              session_id: sessionId,
              run_id: runId,
              sameFolder,
              error: stopped
                ? `nothing was reverted: ${stopped.path} could not be reverted, so the files written were put back` +
                  (stopped.unrestored.length > 0 ? ` (except ${stopped.unrestored.join(', ')})` : '')
                : failed > 0
                  ? `${failed} file(s) could not be written`
                  : 'nothing was written: every file was refused or changed while the revert ran',
            })
          : await recorder.runCompleted({ session_id: sessionId, run_id: runId, sameFolder });
      recorded = closed.tracking;
    }
    if (stopped) {
      const kept = stopped.unrestored;
      throw new AppError(
        files.some((f) => f.action === 'conflict') ? 'revert_conflict' : 'content_unavailable',
        `nothing was reverted: ${stopped.path} could not be reverted while the revert ran, so the files already written were put back` +
          (kept.length > 0 ? `, except ${kept.join(', ')}, which could not be` : ''),
        { hint: 'look at the file, then revert again', details: { files, revert_run_id: runId } },
      );
    }
    // Every write refused at the last moment (or its file changed meanwhile) writes nothing: the
    // answer is the one a plan that writes nothing gets, not 200 with an empty revert run.
    if (!files.some((f) => f.applied)) refuseIfNothingWritten(files, runId);
    return answer(changeId, false, files, runId, planId, recorded);
  }

  return { revert };
}

/**
 * An all-or-nothing revert with a file it cannot revert writes nothing: `409 revert_conflict` when a
 * file conflicts, else `409 content_unavailable`, naming each file and why.
 */
function refuseIfAnyBlocked(files: RevertFile[]): void {
  const blocked = files.filter((f) => blocks(f.action));
  if (blocked.length === 0) return;
  const clean = files.filter((f) => f.action === 'restore' || f.action === 'merge').length;
  const n = blocked.length;
  throw new AppError(
    blocked.some((f) => f.action === 'conflict') ? 'revert_conflict' : 'content_unavailable',
    `nothing was reverted: ${n} of ${files.length} ${files.length === 1 ? 'file' : 'files'} cannot be reverted ` +
      `(${blocked.map((f) => `${f.path}: ${f.action}`).join('; ')}), and a revert is all or nothing`,
    {
      hint:
        clean > 0
          ? `revert with partial: true (rundiff revert --partial) to write only the ${clean} ${clean === 1 ? 'file' : 'files'} that revert cleanly`
          : 'resolve the conflicting lines by hand, or revert other files',
      details: { files },
    },
  );
}

/**
 * A revert that writes nothing: `409 revert_conflict` when a file conflicts, `409
 * content_unavailable` when every file is unavailable or refused; otherwise (all unchanged, or a
 * write failed and says why in `error`) the caller answers 200. `runId`: the revert run recorded
 * (failed) before the writes were refused.
 */
function refuseIfNothingWritten(files: RevertFile[], runId: string | null): void {
  const details = runId === null ? { files } : { files, revert_run_id: runId };
  if (files.some((f) => f.action === 'conflict'))
    throw new AppError('revert_conflict', 'nothing was reverted: every file that needs it conflicts with later edits', {
      hint: 'resolve the conflicting lines by hand, or revert other files',
      details,
    });
  if (files.length > 0 && files.every((f) => f.action === 'unavailable' || f.action === 'refused'))
    throw new AppError('content_unavailable', 'nothing was reverted: no file asked for can be restored', { details });
}

function unavailable(reason: ContentUnavailableReason): Decision {
  return { action: 'unavailable', reason: describe(reason), conflict: null, steps: [], sides: [] };
}

/** The plan's identity: each file's decision, what it would write, and what stood at its paths. */
function planIdOf(planned: readonly Planned[]): string {
  const h = createHash('sha256');
  for (const p of planned) {
    h.update(`${p.row.id}\0${p.decision.action}\0${p.patch ?? ''}\0`);
    for (const g of p.guards) h.update(`${g.key}\0${g.print}\0`);
    h.update('\n');
  }
  return h.digest('hex');
}

function answer(
  changeId: string,
  dryRun: boolean,
  files: RevertFile[],
  runId: string | null,
  planId: string,
  recorded = true,
): RevertResponse {
  const applied = files.filter((f) => (dryRun ? f.action === 'restore' || f.action === 'merge' : f.applied)).length;
  return {
    change_id: changeId,
    dry_run: dryRun,
    files,
    applied_count: applied,
    conflict_count: files.filter((f) => f.action === 'conflict').length,
    unavailable_count: files.filter((f) => f.action === 'unavailable' || f.action === 'refused').length,
    revert_run_id: runId,
    // A revert run whose change could not be stored (its workspace moved while it ran) has none.
    revert_change_id: runId === null || !recorded ? null : `run:${runId}`,
    plan_id: planId,
  };
}

export type Reverter = ReturnType<typeof createReverter>;

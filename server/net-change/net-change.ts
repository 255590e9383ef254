import { createHash } from 'node:crypto';
import {
  FILES_PAGE_MAX,
  type ChangeSummary,
  type FileSummary,
  type Limits,
  type NetChange,
  type NetFileSummary,
  type NetSideRow,
} from '../../shared/index.ts';
import { computeDelta, type DeltaFile, type FileSide } from '../delta/index.ts';
import { AppError } from '../errors.ts';
import { createGitDiffEngine } from '../git/index.ts';
import { keyFromShown, type PathKey } from '../paths/index.ts';
import type { StoredSide, Store, StoreTx } from '../store/index.ts';
import { foldTouches, type NetPath, type SideRef, type Touch } from './fold.ts';

export interface NetRange {
  from?: string;
  to?: string;
}

export interface NetResult {
  change: NetChange;
  /** Each file's patch by file id (the files route serves one). */
  patches: Map<string, DeltaFile>;
}

/** A net file's id: stable for its path, so a link to it survives a recomputation. */
export const netFileId = (key: PathKey) =>
  `net-${createHash('sha256').update(key, 'latin1').digest('hex').slice(0, 24)}`;

const sideId = (s: SideRef | undefined) => (!s?.exists ? null : [s.mode, s.sha256, s.sha256 === null ? s.size : null]);

/**
 * The net patch's content hash (`NetFileSummary.net_hash`): the paths, the change type and both
 * sides' content ids; where a side's content was not kept, the patch text stands in for it.
 */
function netHash(f: DeltaFile, start: NetPath | undefined, end: NetPath | undefined): string {
  const unknown = [start?.start, end?.end].some((s) => s?.exists === true && s.sha256 === null);
  const parts = [f.old_path_key, f.path_key, f.change_type, sideId(start?.start), sideId(end?.end)];
  if (unknown) parts.push(f.patch);
  return createHash('sha256').update(JSON.stringify(parts), 'utf8').digest('hex');
}

const rowOf = (p: NetPath | undefined, which: 'startRow' | 'endRow'): NetSideRow | null =>
  p ? { change_id: p[which].changeId, file_id: p[which].fileId } : null;

async function allRows(store: StoreTx, sessionId: string, changeId: string): Promise<FileSummary[]> {
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

function sideRef(s: StoredSide | undefined, exists: boolean, size: number | null): SideRef {
  if (!exists) return { exists: false };
  if (!s || s.mode === null)
    return { exists: true, mode: '100644', sha256: null, reason: 'not_recorded', size: size ?? 0 };
  return { exists: true, mode: s.mode, sha256: s.sha256, reason: s.reason, size: size ?? 0 };
}

/** The touches of one stored change: a rename is its old path going and its new path coming. */
async function touchesOf(store: StoreTx, sessionId: string, changeId: string): Promise<Touch[]> {
  const kept = await store.contents.forChange(sessionId, changeId);
  const out: Touch[] = [];
  for (const row of await allRows(store, sessionId, changeId)) {
    const c = kept.get(row.id);
    const key = keyFromShown(row.path, row.path_base64);
    const before = sideRef(c?.before, row.change_type !== 'added', row.size_before);
    const after = sideRef(c?.after, row.change_type !== 'deleted', row.size_after);
    if (row.change_type === 'renamed' && row.old_path !== null) {
      const fileId = row.id;
      out.push({
        changeId,
        fileId,
        key: keyFromShown(row.old_path, row.old_path_base64),
        before,
        after: { exists: false },
      });
      out.push({ changeId, fileId, key, before: { exists: false }, after });
    } else out.push({ changeId, fileId: row.id, key, before, after });
  }
  return out;
}

/** Picks the run-level changes of the range, oldest first; refuses unknown or reversed ends. */
function pickRange(
  all: readonly ChangeSummary[],
  range: NetRange,
): { inside: ChangeSummary[]; outside: ChangeSummary[] } {
  const runs = all.filter((c) => c.source !== 'tool');
  const at = (id: string | undefined, name: string, fallback: number): number => {
    if (id === undefined) return fallback;
    const i = runs.findIndex((c) => c.change_id === id);
    if (i === -1)
      throw new AppError('not_found', `${name}: no run-level change ${JSON.stringify(id)} in this session`, {
        details: { field: name },
      });
    return i;
  };
  const from = at(range.from, 'from', 0);
  const to = at(range.to, 'to', runs.length - 1);
  if (from > to)
    throw new AppError('invalid_input', 'from must not be a later run than to', {
      details: { from: range.from, to: range.to },
    });
  return { inside: runs.slice(from, to + 1), outside: [...runs.slice(0, from), ...runs.slice(to + 1)] };
}

const fileSide = async (store: StoreTx, s: SideRef): Promise<FileSide | null> => {
  if (!s.exists) return null;
  const bytes = s.sha256 === null ? null : await store.contents.blob(s.sha256);
  if (bytes) return { bytes, size: bytes.length, mode: s.mode };
  const unavailable = s.reason === 'too_large' || s.reason === 'unreadable' ? s.reason : 'no_snapshot';
  return { bytes: null, unavailable, size: s.size, mode: s.mode };
};

/**
 * The session's net change over a range of its runs (default: all): for every path those runs
 * changed, from its content at the first one's start to its content at the last one's end, diffed
 * as a run's change is (git's line counts and rename pairing). Paths another run of the session
 * outside the range also changed are named per file, and a path changed between two runs of the
 * range by something no run recorded is flagged: neither is guessed.
 */
export async function netChange(
  store: Store,
  sessionId: string,
  range: NetRange,
  limits: Readonly<Limits>,
): Promise<NetResult> {
  // Every read in one transaction: a run stored meanwhile is wholly in the answer or not at all.
  const { all, inside, net, outsideByKey, changes } = await store.transaction(async (tx) => {
    const all = await tx.changes.listForSession(sessionId);
    const { inside, outside } = pickRange(all, range);
    const workspaces = new Set(inside.map((c) => c.workspace));
    if (workspaces.size > 1)
      throw new AppError('invalid_input', 'the runs of this range changed different workspaces', {
        hint: 'pick a range whose runs share one workspace (from, to)',
        details: { workspaces: [...workspaces] },
      });
    const touches: Touch[] = [];
    for (const c of inside) touches.push(...(await touchesOf(tx, sessionId, c.change_id)));
    const net = foldTouches(touches);
    const outsideByKey = new Map<PathKey, string[]>();
    for (const c of outside)
      for (const t of await touchesOf(tx, sessionId, c.change_id)) {
        const list = outsideByKey.get(t.key) ?? [];
        if (!list.includes(c.change_id)) list.push(c.change_id);
        outsideByKey.set(t.key, list);
      }
    const changes: { path: PathKey; before: FileSide | null; after: FileSide | null }[] = [];
    for (const p of net)
      changes.push({ path: p.key, before: await fileSide(tx, p.start), after: await fileSide(tx, p.end) });
    return { all, inside, net, outsideByKey, changes };
  });
  const engine = createGitDiffEngine();
  const delta = await computeDelta({
    changes,
    limits,
    batchDiff: engine.batchDiff,
    renameDetector: engine.renameDetector,
    fallbackDiff: engine.fallbackDiff,
    // The net change is read against `git diff`: its hunks are git's own.
    exactHunks: true,
  });
  const flags = new Map(net.map((p) => [p.key, p]));
  const patches = new Map<string, DeltaFile>();
  const files: NetFileSummary[] = delta.files.map((f) => {
    const id = netFileId(f.path_key);
    patches.set(id, f);
    const keys = f.old_path_key === null ? [f.path_key] : [f.old_path_key, f.path_key];
    const outsideIds = [...new Set(keys.flatMap((k) => outsideByKey.get(k) ?? []))];
    const start = flags.get(f.old_path_key ?? f.path_key);
    const end = flags.get(f.path_key);
    const out: NetFileSummary = {
      id,
      net_hash: netHash(f, start, end),
      sides: {
        before: f.change_type === 'added' ? null : rowOf(start, 'startRow'),
        after: f.change_type === 'deleted' ? null : rowOf(end, 'endRow'),
      },
      path: f.path,
      old_path: f.old_path,
      change_type: f.change_type,
      additions: f.additions,
      deletions: f.deletions,
      binary: f.binary,
      truncated: f.truncated,
      size_before: f.size_before,
      size_after: f.size_after,
      patch_bytes: f.patch_bytes,
      omitted_reason: f.omitted_reason,
      outside_change_ids: outsideIds.sort(
        (a, b) => all.findIndex((c) => c.change_id === a) - all.findIndex((c) => c.change_id === b),
      ),
      interleaved: keys.some((k) => flags.get(k)?.interleaved === true),
    };
    if (f.path_base64 !== undefined) out.path_base64 = f.path_base64;
    if (f.old_path_base64 !== undefined) out.old_path_base64 = f.old_path_base64;
    return out;
  });
  const change: NetChange = {
    session_id: sessionId,
    workspace: inside[0]?.workspace ?? null,
    from_change_id: inside[0]?.change_id ?? null,
    to_change_id: inside[inside.length - 1]?.change_id ?? null,
    change_ids: inside.map((c) => c.change_id),
    changed_count: delta.changed_count,
    added_count: delta.added_count,
    modified_count: delta.modified_count,
    deleted_count: delta.deleted_count,
    renamed_count: delta.renamed_count,
    binary_count: delta.binary_count,
    truncated: delta.truncated_reasons.length > 0,
    truncated_reasons: delta.truncated_reasons,
    total_patch_bytes: delta.total_patch_bytes,
    omitted_count: delta.omitted_count,
    files,
  };
  return { change, patches };
}

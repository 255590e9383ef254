import type { ChangeType, OmittedReason, TruncatedReason } from '../../shared/index.ts';
import { comparePathKeys, displayPath, type PathKey } from '../paths/index.ts';
import { countLines, indexOid, isBinarySide, modeType, sameContent } from './content.ts';
import { binaryPatchBody } from './binary-patch.ts';
import { wholeFileHunk } from './hunks.ts';
import { diffInProcess, diffRemaining, type DiffJob, type DiffResults } from './line-diffs.ts';
import { toPatchText } from './patch-text.ts';
import { pairExactRenames, similarPairPossible, validPairs, type PairingSide } from './renames.ts';
import { formatStanza } from './stanza.ts';
import type { DeltaFile, DeltaInput, DeltaOutput, FileSide, RenamePair, RenameResult } from './types.ts';

/** One classified change before bounds are applied. */
interface Entry {
  change_type: ChangeType;
  /** The path now (a deleted file: the path it had). */
  path: PathKey;
  /** Renames only: the path at the checkpoint. */
  oldPath: PathKey | null;
  before: FileSide | null;
  after: FileSide | null;
  similarity?: number;
  binary: boolean;
}

/** Time allowed to rename detection: a fixed allowance plus ten per-file diff budgets. */
export function renameTimeoutMs(diffTimeoutMs: number): number {
  return 2_000 + 10 * diffTimeoutMs;
}

/**
 * Classifies the candidate changes, pairs renames, counts lines exactly like `git diff --numstat`,
 * formats each file's stanza and applies the bounds of docs/contract.md section 7. Never throws for a
 * failing engine: renames degrade to exact matches, diffs to other engines, then `too_complex`.
 */
export async function computeDelta(input: DeltaInput): Promise<DeltaOutput> {
  const { limits } = input;
  const reasons = new Set<TruncatedReason>();

  const changes = input.changes.filter(
    (c) =>
      (c.before || c.after) &&
      !(c.before && c.after && c.before.mode === c.after.mode && sameContent(c.before, c.after)),
  );
  const deleted: PairingSide[] = [];
  const added: PairingSide[] = [];
  for (const c of changes) {
    if (c.before && !c.after) deleted.push({ path: c.path, side: c.before });
    if (!c.before && c.after) added.push({ path: c.path, side: c.after });
  }

  // While git pairs renames, diff in process the modified files that are rows whatever the
  // pairing (a pairing only removes deleted paths from ahead of them).
  const renaming = pairRenames(input, deleted, added, reasons);
  const results: DiffResults = new Map();
  const earlyJobs = changes
    .filter((c) => c.before && c.after)
    .sort((x, y) => comparePathKeys(x.path, y.path))
    .slice(0, Math.max(0, limits.maxChangedFiles))
    .flatMap((c) => contentJob(c.path, c.before, c.after));
  await diffInProcess(earlyJobs, input, results);
  const pairs = await renaming;
  const renamedFrom = new Map(pairs.map((p) => [p.from, p]));
  const renamedTo = new Map(pairs.map((p) => [p.to, p]));
  const beforeOf = new Map(deleted.map((d) => [d.path, d.side]));

  const entries: Entry[] = [];
  for (const c of changes) {
    if (c.before && !c.after && renamedFrom.has(c.path)) continue;
    const pair = !c.before ? renamedTo.get(c.path) : undefined;
    const before = pair ? beforeOf.get(pair.from)! : c.before;
    const change_type: ChangeType = pair ? 'renamed' : !c.before ? 'added' : !c.after ? 'deleted' : 'modified';
    entries.push({
      change_type,
      path: c.path,
      oldPath: pair ? pair.from : null,
      before,
      after: c.after,
      ...(pair ? { similarity: pair.similarity } : {}),
      binary: isBinarySide(before) || isBinarySide(c.after),
    });
  }
  entries.sort((x, y) => comparePathKeys(x.path, y.path));

  const rowCount = Math.max(0, Math.min(entries.length, limits.maxChangedFiles));
  const rows = entries.slice(0, rowCount);
  const files = await buildRows(rows, input, results);

  // The per-change budget serves the reader: smallest patches first (ties in path order; the sort
  // is stable), so one large generated file cannot leave every small source file without its
  // patch. A patch that does not fit whole is left out; the rows stay in path order.
  let remaining = limits.maxRunPatchBytes;
  const smallestFirst = files.filter((f) => f.patch !== null).sort((a, b) => a.patch_bytes - b.patch_bytes);
  for (const f of smallestFirst) {
    if (f.patch_bytes <= remaining) {
      remaining -= f.patch_bytes;
      continue;
    }
    f.patch = null;
    f.patch_bytes = 0;
    f.truncated = false;
    f.omitted_reason = 'budget';
    reasons.add('run_budget');
  }
  if (files.some((f) => f.truncated)) reasons.add('file_patch');
  if (entries.length > rowCount) reasons.add('rows');

  const count = (t: ChangeType) => entries.filter((e) => e.change_type === t).length;
  return {
    files,
    changed_count: entries.length,
    added_count: count('added'),
    modified_count: count('modified'),
    deleted_count: count('deleted'),
    renamed_count: count('renamed'),
    binary_count: entries.filter((e) => e.binary).length,
    omitted_count: entries.length - rowCount,
    total_patch_bytes: files.reduce((n, f) => n + f.patch_bytes, 0),
    truncated_reasons: ORDER.filter((r) => reasons.has(r)),
  };
}

const ORDER: TruncatedReason[] = ['rows', 'file_patch', 'run_budget', 'git_timeout', 'degraded'];

async function pairRenames(
  input: DeltaInput,
  deleted: PairingSide[],
  added: PairingSide[],
  reasons: Set<TruncatedReason>,
): Promise<RenamePair[]> {
  if (deleted.length === 0 || added.length === 0) return [];
  // git pairs identical contents first, exactly like this; when that uses up every deleted or
  // every added path, its similarity pass has nothing left to pair and no process is needed.
  // Nor when no path it leaves can reach git's similarity threshold by size alone.
  const exact = pairExactRenames(deleted, added);
  if (exact.length === deleted.length || exact.length === added.length) return exact;
  if (!similarPairPossible(deleted, added, exact)) return exact;
  let result: RenameResult | null = null;
  if (input.renameDetector) {
    const toSide = (p: PairingSide) => ({
      path: p.path,
      mode: p.side.mode,
      bytes: p.side.bytes,
      ...(p.side.oid !== undefined ? { oid: p.side.oid } : {}),
      ...(p.side.binaryAttr ? { binaryAttr: true } : {}),
    });
    try {
      result = await input.renameDetector(
        deleted.map(toSide),
        added.map(toSide),
        renameTimeoutMs(input.limits.diffTimeoutMs),
      );
    } catch {
      result = { pairs: [], degraded: 'degraded' };
    }
  }
  if (result && !result.degraded) {
    return validPairs(result.pairs, new Set(deleted.map((d) => d.path)), new Set(added.map((a) => a.path)));
  }
  // Without git's pairing, identical contents still pair as git would pair them; similar ones stay
  // added + deleted, and the change says its renames are approximate.
  if (result?.degraded) reasons.add(result.degraded);
  return exact;
}

type Plan =
  | { kind: 'omit'; reason: OmittedReason }
  | { kind: 'stanza'; additions: number; deletions: number; stanza: Buffer }
  | { kind: 'diff'; job: DiffJob; typechange: boolean };

/** The line diff a changed pair needs, if any: both sides text with bytes, contents different. */
function contentJob(key: PathKey, before: FileSide | null, after: FileSide | null): DiffJob[] {
  if (!before?.bytes || !after?.bytes || isBinarySide(before) || isBinarySide(after) || sameContent(before, after))
    return [];
  return [{ key, before: before.bytes, after: after.bytes }];
}

const unavailable = (...sides: Array<FileSide | null>): OmittedReason => {
  for (const s of sides) if (s && !s.bytes) return s.unavailable ?? 'no_snapshot';
  return 'no_snapshot';
};

/** The delete stanza of the old side and the create stanza of the new one: git's form of a type change. */
function typechangeStanzas(e: Entry): Buffer {
  const b = e.before!;
  const a = e.after!;
  return Buffer.concat([
    formatStanza({
      oldPath: e.path,
      newPath: null,
      oldMode: b.mode,
      newMode: null,
      oldOid: indexOid(b),
      newOid: null,
      hunks: wholeFileHunk(b.bytes!, '-'),
    }),
    formatStanza({
      oldPath: null,
      newPath: e.path,
      oldMode: null,
      newMode: a.mode,
      oldOid: null,
      newOid: indexOid(a),
      hunks: wholeFileHunk(a.bytes!, '+'),
    }),
  ]);
}

function changedStanza(e: Entry, hunks: Buffer): Buffer {
  const b = e.before!;
  const a = e.after!;
  const same = sameContent(b, a);
  return formatStanza({
    oldPath: e.oldPath ?? e.path,
    newPath: e.path,
    oldMode: b.mode,
    newMode: a.mode,
    oldOid: same ? null : indexOid(b),
    newOid: same ? null : indexOid(a),
    ...(e.change_type === 'renamed' ? { similarity: e.similarity ?? 100 } : {}),
    hunks,
  });
}

/** git's binary patch of a binary file whose sides' bytes are at hand; null when one is missing. */
function binaryStanza(e: Entry): Buffer | null {
  const b = e.before;
  const a = e.after;
  if ((b && !b.bytes) || (a && !a.bytes)) return null;
  const one = (before: FileSide | null, after: FileSide | null) =>
    formatStanza({
      oldPath: before ? (e.oldPath ?? e.path) : null,
      newPath: after ? e.path : null,
      oldMode: before?.mode ?? null,
      newMode: after?.mode ?? null,
      oldOid: before ? indexOid(before) : null,
      newOid: after ? indexOid(after) : null,
      ...(before && after && e.change_type === 'renamed' ? { similarity: e.similarity ?? 100 } : {}),
      binary: true,
      hunks: binaryPatchBody(before?.bytes ?? null, after?.bytes ?? null),
    });
  // A type change is git's delete and create, as for text.
  if (b && a && modeType(b.mode) !== modeType(a.mode)) return Buffer.concat([one(b, null), one(null, a)]);
  return one(b, a);
}

function plan(e: Entry, binaryPatches: boolean): Plan {
  // First: a side that could not be read says nothing about its content, binary or not.
  if (e.before?.unavailable === 'unreadable' || e.after?.unavailable === 'unreadable')
    return { kind: 'omit', reason: 'unreadable' };
  const b = e.before;
  const a = e.after;
  // An exact rename or a mode change of a binary file changes no bytes: git prints its header alone
  // (no "Binary files differ") while --numstat still says binary, so the row stays binary, +0 -0,
  // with that header as its patch.
  if (e.binary && !(b && a && sameContent(b, a) && modeType(b.mode) === modeType(a.mode))) {
    const stanza = binaryPatches ? binaryStanza(e) : null;
    return stanza ? { kind: 'stanza', additions: 0, deletions: 0, stanza } : { kind: 'omit', reason: 'binary' };
  }
  if (!b) {
    if (!a!.bytes) return { kind: 'omit', reason: unavailable(a) };
    const stanza = formatStanza({
      oldPath: null,
      newPath: e.path,
      oldMode: null,
      newMode: a!.mode,
      oldOid: null,
      newOid: indexOid(a!),
      hunks: wholeFileHunk(a!.bytes, '+'),
    });
    return { kind: 'stanza', additions: countLines(a!.bytes), deletions: 0, stanza };
  }
  if (!a) {
    if (!b.bytes) return { kind: 'omit', reason: unavailable(b) };
    const stanza = formatStanza({
      oldPath: e.path,
      newPath: null,
      oldMode: b.mode,
      newMode: null,
      oldOid: indexOid(b),
      newOid: null,
      hunks: wholeFileHunk(b.bytes, '-'),
    });
    return { kind: 'stanza', additions: 0, deletions: countLines(b.bytes), stanza };
  }
  const typechange = modeType(b.mode) !== modeType(a.mode);
  if (sameContent(b, a)) {
    // A mode change or an exact rename: the header says everything (a type change needs the content).
    if (!typechange) return { kind: 'stanza', additions: 0, deletions: 0, stanza: changedStanza(e, Buffer.alloc(0)) };
    if (!b.bytes || !a.bytes) return { kind: 'omit', reason: unavailable(b, a) };
    return { kind: 'stanza', additions: 0, deletions: 0, stanza: typechangeStanzas(e) };
  }
  if (!b.bytes || !a.bytes) return { kind: 'omit', reason: unavailable(b, a) };
  return { kind: 'diff', job: { key: e.path, before: b.bytes, after: a.bytes }, typechange };
}

async function buildRows(rows: Entry[], input: DeltaInput, results: DiffResults): Promise<DeltaFile[]> {
  const plans = rows.map((e) => plan(e, input.binaryPatches === true));
  const jobs = plans.flatMap((p) => (p.kind === 'diff' ? [p.job] : []));
  await diffInProcess(jobs, input, results);
  await diffRemaining(jobs, input, results);
  return rows.map((e, i) => {
    let p = plans[i]!;
    if (p.kind === 'diff') {
      const d = results.get(p.job.key);
      p = !d
        ? { kind: 'omit', reason: 'too_complex' }
        : {
            kind: 'stanza',
            additions: d.additions,
            deletions: d.deletions,
            stanza: p.typechange ? typechangeStanzas(e) : changedStanza(e, d.hunks),
          };
    }
    const shown = displayPath(e.path);
    const old = e.oldPath === null ? null : displayPath(e.oldPath);
    const file: DeltaFile = {
      path: shown.path,
      old_path: old ? old.path : null,
      ...(shown.base64 !== undefined ? { path_base64: shown.base64 } : {}),
      ...(old?.base64 !== undefined ? { old_path_base64: old.base64 } : {}),
      path_key: e.path,
      old_path_key: e.oldPath,
      change_type: e.change_type,
      additions: 0,
      deletions: 0,
      binary: e.binary,
      truncated: false,
      size_before: e.before ? e.before.size : null,
      size_after: e.after ? e.after.size : null,
      patch: null,
      patch_bytes: 0,
      omitted_reason: null,
      sides: { before: e.before, after: e.after },
    };
    if (p.kind === 'omit') {
      file.omitted_reason = p.reason;
      return file;
    }
    const text = toPatchText(p.stanza, input.limits.maxFilePatchBytes);
    file.additions = p.additions;
    file.deletions = p.deletions;
    file.patch = text.text;
    file.patch_bytes = text.bytes;
    file.truncated = text.truncated;
    if (text.raw) file.patch_raw = text.raw;
    return file;
  });
}

import fs from 'node:fs';
import { pathBelow, withReachablePath } from '../../fs/index.ts';
import { keyFromText, type PathKey } from '../../paths/index.ts';
import {
  createFsIgnore,
  MODE_EXEC,
  MODE_FILE,
  MODE_LINK,
  pseudoMountsBelow,
  type FsIgnoreRules,
} from '../../workspace/index.ts';
import { mark, span } from '../common/trace.ts';
import type { ListingHow } from '../strategy.ts';
import { oneAtATime, type Watches } from '../watch/index.ts';
import { runScanPhase, type ScanPhase, type ScanPhaseInput } from './scan-phase.ts';
import { patchTable, type StatRow } from './table-patch.ts';

/**
 * The walk of a plain folder (no git) with a watcher vouching for what did not change: the
 * previous walk (a checkpoint's or a completion's) with the paths the watcher saw since measured
 * again, and only those. Whenever the watcher cannot vouch (see `Unvouched`), the previous walk was
 * not whole (cut by a limit, degraded), the root `.gitignore` changed (the rules the walk applies),
 * or the folder has a kernel file system mounted below it, the whole tree is walked as without a
 * watcher, and the trace says why. The file-system rules decide what is recorded, as in the walk.
 * Walks of one folder run one at a time: each starts from the one before.
 */

export interface WatchedWalk {
  /** The scan phase of a plain folder: the previous one brought up to date, or a whole walk. */
  scan(input: ScanPhaseInput): Promise<ScanPhase>;
  clear(): void;
}

interface Base {
  phase: ScanPhase;
  /** The sync point the walk was made after; null: none (it cannot be a base). */
  point: number | null;
}

/** A walk every file of which was recorded: only such a walk can be brought up to date. */
function whole(phase: ScanPhase): boolean {
  return (
    phase.coverage.complete &&
    phase.reasons.length === 0 &&
    phase.table.truncated === null &&
    phase.areas.length === 0 &&
    !phase.gitFailed
  );
}

/** The phase as a base: its own copy of the figures a caller may change (a file gone before it was read). */
function kept(phase: ScanPhase): ScanPhase {
  const t = phase.table;
  return {
    ...phase,
    table: {
      ...t,
      size: t.size.slice(),
      mtimeMs: t.mtimeMs.slice(),
      ctimeMs: t.ctimeMs.slice(),
      ino: t.ino.slice(),
      mode: t.mode.slice(),
    },
  };
}

const nameOf = (p: PathKey) => p.slice(p.lastIndexOf('/') + 1);

/** The folders the walk does not enter under these rules (relative text, as the watcher asks). */
function skipFor(gitignoreText: string | null): (rel: string) => boolean {
  const rules = createFsIgnore(gitignoreText);
  return (rel) => {
    const key = keyFromText(rel);
    return rules.ignoresDir(key, nameOf(key));
  };
}

/** Whether the rules leave `p` out: the file itself, or a folder on its way. */
function ruledOut(rules: FsIgnoreRules, p: PathKey): boolean {
  if (rules.ignoresFile(p, nameOf(p))) return true;
  for (let slash = p.indexOf('/'); slash !== -1; slash = p.indexOf('/', slash + 1)) {
    const dir = p.slice(0, slash);
    if (rules.ignoresDir(dir, nameOf(dir))) return true;
  }
  return false;
}

/** The row the walk would record for `p` now, or null (gone, a folder, not a file or link). */
function rowOf(root: string, p: PathKey): StatRow | null {
  let st: fs.Stats;
  try {
    st = withReachablePath(pathBelow(root, p), (q) => fs.lstatSync(q));
  } catch {
    return null;
  }
  const mode = st.isSymbolicLink() ? MODE_LINK : st.isFile() ? (st.mode & 0o100 ? MODE_EXEC : MODE_FILE) : -1;
  if (mode === -1) return null;
  return { path: p, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, mode };
}

/** `base` with the `changed` paths measured again; a reason instead when the result would be cut. */
function broughtUpToDate(base: ScanPhase, changed: ReadonlySet<PathKey>, input: ScanPhaseInput): ScanPhase | string {
  const t0 = performance.now();
  const rules = createFsIgnore(base.gitignoreText);
  const own = new Set(input.ownFiles);
  const rows: StatRow[] = [];
  for (const p of changed) {
    if (own.has(p) || ruledOut(rules, p)) continue;
    const row = rowOf(input.root, p);
    if (row) rows.push(row);
  }
  const table = patchTable(base.table, changed, rows);
  // A walk stops at the file limit: the whole walk says so.
  if (table.paths.length > input.limits.maxScannedFiles) return 'scan_files';
  table.durationMs = performance.now() - t0;
  return {
    ...base,
    table,
    coverage: { ...base.coverage, listed: new Set(), seen: new Set() },
    reasons: [],
  };
}

export function createWatchedWalk(watches: Watches, told?: (root: string, how: ListingHow) => void): WatchedWalk {
  const bases = new Map<string, Base>();
  const queued = oneAtATime<ScanPhase>();
  const say = (root: string, how: ListingHow) => {
    mark('watched' in how ? `walk watched ${how.watched} paths` : `walk whole: ${how.whole}`);
    told?.(root, how);
  };
  /** A whole walk, kept as the base of the next when it can be one. */
  const walked = async (input: ScanPhaseInput, point: number | null, why: string): Promise<ScanPhase> => {
    const phase = await runScanPhase(input);
    say(input.root, { whole: why });
    bases.set(input.root, { phase: kept(phase), point: whole(phase) ? point : null });
    return phase;
  };

  const scanOne = async (input: ScanPhaseInput): Promise<ScanPhase> => {
    const root = input.root;
    // A kernel file system mounted below: the walk leaves it out, a watcher would not.
    if (pseudoMountsBelow(root).length > 0) return walked(input, null, 'pseudo_mount');
    const base = bases.get(root);
    if (!base) {
      // The first walk does not wait for a watcher: it is started once the rules are known.
      const phase = await walked(input, null, 'not_ready');
      const skip = skipFor(phase.gitignoreText);
      void watches.sync(root, () => skip);
      return phase;
    }
    const step = span();
    const synced = await watches.sync(root, () => skipFor(base.phase.gitignoreText));
    let why: string | null = synced.unvouched;
    if (why === null && (base.point === null || synced.since !== base.point)) why = 'no_base';
    if (why === null && synced.changed!.has('.gitignore')) {
      // The rules changed: a new watcher that leaves out the folders they leave out now.
      watches.restart(root);
      const phase = await walked(input, null, 'ignore_rules');
      const skip = skipFor(phase.gitignoreText);
      void watches.sync(root, () => skip);
      return phase;
    }
    if (why === null) {
      const got = broughtUpToDate(base.phase, synced.changed!, input);
      if (typeof got !== 'string') {
        step('walk from the watcher');
        say(root, { watched: synced.changed!.size });
        bases.set(root, { phase: kept(got), point: synced.point });
        return got;
      }
      why = got;
    }
    return walked(input, synced.point, why);
  };

  return {
    scan: (input) => queued(input.root, () => scanOne(input)),
    clear: () => bases.clear(),
  };
}

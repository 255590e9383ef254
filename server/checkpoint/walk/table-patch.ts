import type { PathKey } from '../../paths/index.ts';
import type { ScanTable } from '../../workspace/index.ts';

/**
 * A walk's table brought up to date without walking: some rows dropped, some put in, each in the
 * place the walk would have given it. Pure.
 */

/** One file as the walk records it (lstat figures, a MODE_* code). */
export interface StatRow {
  path: PathKey;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  mode: number;
}

/**
 * The walk's order (scan-tree.ts): names in byte order, and a folder's own files before everything
 * in its subfolders, so `a/z` comes before `a/b/c`.
 */
export function compareWalkOrder(a: PathKey, b: PathKey): number {
  let at = 0;
  for (;;) {
    const ea = a.indexOf('/', at);
    const eb = b.indexOf('/', at);
    const na = ea === -1 ? a.slice(at) : a.slice(at, ea);
    const nb = eb === -1 ? b.slice(at) : b.slice(at, eb);
    const fileA = ea === -1;
    const fileB = eb === -1;
    if (fileA !== fileB) return fileA ? -1 : 1;
    if (na !== nb) return na < nb ? -1 : 1;
    if (fileA) return 0;
    at = ea + 1;
  }
}

/** The first index of `paths` (in walk order) that sorts after `p`. */
function placeOf(paths: readonly PathKey[], p: PathKey): number {
  let lo = 0;
  let hi = paths.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareWalkOrder(paths[mid]!, p) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * `table` (in walk order) without the rows whose path is in `removed`, and with `rows` (whose paths
 * must all be in `removed` or new) in walk order among the rest. Folder lists and flags are kept.
 */
export function patchTable(table: ScanTable, removed: ReadonlySet<PathKey>, rows: readonly StatRow[]): ScanTable {
  const adds = [...rows].sort((x, y) => compareWalkOrder(x.path, y.path));
  const at = adds.map((r) => placeOf(table.paths, r.path));
  const n = table.paths.length;
  const cap = n + adds.length;
  const paths: PathKey[] = [];
  const size = new Float64Array(cap);
  const mtimeMs = new Float64Array(cap);
  const ctimeMs = new Float64Array(cap);
  const ino = new Float64Array(cap);
  const mode = new Uint8Array(cap);
  let k = 0;
  const put = (p: PathKey, s: number, m: number, c: number, i: number, md: number) => {
    paths.push(p);
    size[k] = s;
    mtimeMs[k] = m;
    ctimeMs[k] = c;
    ino[k] = i;
    mode[k] = md;
    k++;
  };
  let a = 0;
  for (let j = 0; j <= n; j++) {
    for (; a < adds.length && at[a] === j; a++) {
      const r = adds[a]!;
      put(r.path, r.size, r.mtimeMs, r.ctimeMs, r.ino, r.mode);
    }
    if (j === n) break;
    const p = table.paths[j]!;
    if (removed.size > 0 && removed.has(p)) continue;
    put(p, table.size[j]!, table.mtimeMs[j]!, table.ctimeMs[j]!, table.ino[j]!, table.mode[j]!);
  }
  return {
    ...table,
    paths,
    size: size.slice(0, k),
    mtimeMs: mtimeMs.slice(0, k),
    ctimeMs: ctimeMs.slice(0, k),
    ino: ino.slice(0, k),
    mode: mode.slice(0, k),
  };
}

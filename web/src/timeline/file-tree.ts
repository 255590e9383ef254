import type { FileSummary } from '../../../shared/index.ts';

/** The fields of a row the tree needs. */
export type TreeInput = Pick<FileSummary, 'id' | 'path' | 'old_path' | 'change_type' | 'additions' | 'deletions'>;

export interface TreeFolder<F extends TreeInput = TreeInput> {
  kind: 'folder';
  /** The folder's name, or `a/b/c` when folders holding only one folder are joined. */
  name: string;
  /** Full path of the folder (its key for collapsing). */
  path: string;
  folders: TreeFolder<F>[];
  files: F[];
  /** Files below, at any depth, and their summed counts. */
  fileCount: number;
  additions: number;
  deletions: number;
}

const isDigit = (c: number) => c >= 48 && c <= 57;

/** Where the run of digits, or of non-digits, that starts at `i` ends. */
function runEnd(s: string, i: number): number {
  const digits = isDigit(s.charCodeAt(i));
  let k = i + 1;
  while (k < s.length && isDigit(s.charCodeAt(k)) === digits) k++;
  return k;
}

/**
 * Natural order: git's order (code units, so `Login.vue` before `api/`) except that runs of digits
 * compare by value, so `file2` comes before `file10`. Runs are compared in place, one pair at a time
 * (a tree sorts tens of thousands of names). Equal values (`07`, `7`) fall back to code units, so
 * the order is total.
 */
export function naturalCompare(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ie = runEnd(a, i);
    const je = runEnd(b, j);
    if (isDigit(a.charCodeAt(i)) && isDigit(b.charCodeAt(j))) {
      // By value: the digits after leading zeros, the longer the larger, else digit by digit.
      let m = i;
      while (m < ie && a.charCodeAt(m) === 48) m++;
      let n = j;
      while (n < je && b.charCodeAt(n) === 48) n++;
      if (ie - m !== je - n) return ie - m - (je - n);
      for (let k = 0; k < ie - m; k++) {
        const d = a.charCodeAt(m + k) - b.charCodeAt(n + k);
        if (d !== 0) return d;
      }
    }
    // Equal values, or not both digits: the two runs by code units.
    const p = a.slice(i, ie);
    const q = b.slice(j, je);
    if (p !== q) return p < q ? -1 : 1;
    i = ie;
    j = je;
  }
  return (i < a.length ? 1 : 0) - (j < b.length ? 1 : 0) || (a < b ? -1 : a > b ? 1 : 0);
}

/** A rename written once: `src/{utils -> lib}/format.ts`, `{a.ts -> b.ts}`, `old/x -> new/y` when nothing is shared. */
export function compactRename(oldPath: string, newPath: string): string {
  const a = oldPath.split('/');
  const b = newPath.split('/');
  let head = 0;
  while (head < a.length - 1 && head < b.length - 1 && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head - 1 && tail < b.length - head - 1 && a[a.length - 1 - tail] === b[b.length - 1 - tail])
    tail++;
  const prefix = a.slice(0, head);
  const suffix = a.slice(a.length - tail);
  const mid = `{${a.slice(head, a.length - tail).join('/')} -> ${b.slice(head, b.length - tail).join('/')}}`;
  return [...prefix, mid, ...suffix].join('/');
}

function folder<F extends TreeInput>(name: string, path: string): TreeFolder<F> {
  return { kind: 'folder', name, path, folders: [], files: [], fileCount: 0, additions: 0, deletions: 0 };
}

/**
 * The rows as folders and files (a rename sits at its new path), folders before files, each in
 * natural order, with each folder's totals; chains of folders that hold only one folder are
 * joined into one (`src/app/components`), as review tools show them.
 */
export function buildFileTree<F extends TreeInput>(rows: readonly F[]): TreeFolder<F> {
  const root = folder<F>('', '');
  const byPath = new Map<string, TreeFolder<F>>([['', root]]);
  for (const row of rows) {
    const parts = row.path.split('/');
    let at = root;
    let path = '';
    for (const part of parts.slice(0, -1)) {
      path = path ? `${path}/${part}` : part;
      let next = byPath.get(path);
      if (!next) {
        next = folder<F>(part, path);
        byPath.set(path, next);
        at.folders.push(next);
      }
      at = next;
    }
    at.files.push(row);
  }
  const finish = (f: TreeFolder<F>): void => {
    f.folders.forEach(finish);
    f.folders.sort((x, y) => naturalCompare(x.name, y.name));
    f.files.sort((x, y) => naturalCompare(baseName(x.path), baseName(y.path)));
    f.fileCount = f.files.length + f.folders.reduce((n, c) => n + c.fileCount, 0);
    f.additions = f.files.reduce((n, r) => n + r.additions, 0) + f.folders.reduce((n, c) => n + c.additions, 0);
    f.deletions = f.files.reduce((n, r) => n + r.deletions, 0) + f.folders.reduce((n, c) => n + c.deletions, 0);
    // Join a folder that holds one folder and no file with that folder.
    f.folders = f.folders.map((c) => {
      let joined = c;
      while (joined.files.length === 0 && joined.folders.length === 1) {
        const only = joined.folders[0]!;
        joined = { ...only, name: `${joined.name}/${only.name}` };
      }
      return joined;
    });
  };
  finish(root);
  return root;
}

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/**
 * What a file reads as under its folders in the tree (`shown`: the paths of the folder lines above
 * it, outermost first): its name; a rename, relative to the deepest shown folder both its paths
 * lie in (`{utils.ts -> helpers.ts}` within one folder, `{utils -> lib}/format.ts` under `src/`),
 * the whole compact rename when they share no shown folder.
 */
export function treeFileLabel(file: Pick<TreeInput, 'path' | 'old_path'>, shown: readonly string[]): string {
  if (file.old_path === null || file.old_path === file.path) return baseName(file.path);
  const common = shown.findLast((f) => file.old_path!.startsWith(`${f}/`) && file.path.startsWith(`${f}/`));
  const cut = common === undefined ? 0 : common.length + 1;
  return compactRename(file.old_path.slice(cut), file.path.slice(cut));
}

/** One visible line of the tree. */
export type TreeRow<F extends TreeInput = TreeInput> =
  | { kind: 'folder'; folder: TreeFolder<F>; depth: number; open: boolean }
  | { kind: 'file'; file: F; depth: number; label: string };

/** The tree's visible lines, depth first, with the folders in `closed` shown without their contents. */
export function treeRows<F extends TreeInput>(root: TreeFolder<F>, closed: ReadonlySet<string>): TreeRow<F>[] {
  const out: TreeRow<F>[] = [];
  const walk = (f: TreeFolder<F>, depth: number, shown: readonly string[]) => {
    for (const c of f.folders) {
      const open = !closed.has(c.path);
      out.push({ kind: 'folder', folder: c, depth, open });
      if (open) walk(c, depth + 1, [...shown, c.path]);
    }
    for (const file of f.files) out.push({ kind: 'file', file, depth, label: treeFileLabel(file, shown) });
  };
  walk(root, 0, []);
  return out;
}

/** `+12 -4` summed over rows: a run's or a tool call's total. */
export function totalCounts(rows: readonly Pick<TreeInput, 'additions' | 'deletions'>[]): {
  additions: number;
  deletions: number;
} {
  let additions = 0;
  let deletions = 0;
  for (const r of rows) {
    additions += r.additions;
    deletions += r.deletions;
  }
  return { additions, deletions };
}

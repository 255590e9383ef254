import type { PathKey } from '../../paths/index.ts';

/**
 * `git status --porcelain=v2 -z --untracked-files=all` as the engine needs it: the paths whose
 * work-tree content may differ from the index (modified, type-changed, deleted, intent-to-add,
 * unmerged) and the untracked files, relative to the area (the workspace or a nested repository).
 * Index-only differences from HEAD do not matter here: the index itself is compared between the
 * two ends of a run. An untracked folder listed whole (`dir/`) is a repository of its own inside
 * the area: git does not look into it.
 */
export interface StatusListing {
  /** Paths (area-relative keys) whose work-tree content is not the index's, or that git does not track. */
  dirty: PathKey[];
  /** Untracked folders git lists whole: nested repositories (area-relative keys, no trailing slash). */
  nested: PathKey[];
  /**
   * With `--ignored=matching` only: the ignored files, and the ignored folders git lists whole
   * without looking inside (area-relative keys, a folder with its trailing slash).
   */
  ignored: PathKey[];
}

/**
 * Parses the records. `topPrefix` is the area's folder relative to the repository's top level
 * ('' or `dir/`): git prints paths from the top level, and records outside the area are dropped.
 */
export function parseStatusV2(buf: Buffer, topPrefix: PathKey): StatusListing {
  const dirty: PathKey[] = [];
  const nested: PathKey[] = [];
  const ignored: PathKey[] = [];
  const strip = (p: PathKey): PathKey | null => {
    if (topPrefix === '') return p;
    return p.startsWith(topPrefix) ? p.slice(topPrefix.length) : null;
  };
  let pos = 0;
  const len = buf.length;
  // The path of a record follows its `fields` space-separated fields.
  const pathAfterFields = (start: number, fields: number, end: number): PathKey => {
    let p = start;
    for (let k = 0; k < fields; k++) {
      const sp = buf.indexOf(32, p);
      if (sp === -1 || sp >= end) throw new Error('unexpected git status record');
      p = sp + 1;
    }
    return buf.toString('latin1', p, end);
  };
  while (pos < len) {
    const end = buf.indexOf(0, pos);
    if (end === -1) throw new Error('unexpected git status output: record without terminator');
    const tag = buf[pos]!;
    let next = end + 1;
    let path: PathKey | null = null;
    let worktreeDirty = false;
    switch (tag) {
      case 0x31: // '1': ordinary changed entry "1 XY sub mH mI mW hH hI path"
        worktreeDirty = buf[pos + 3] !== 0x2e; // Y
        path = pathAfterFields(pos, 8, end);
        break;
      case 0x32: {
        // '2': renamed or copied entry "2 XY sub mH mI mW hH hI Xscore path\0origPath"
        worktreeDirty = buf[pos + 3] !== 0x2e;
        path = pathAfterFields(pos, 9, end);
        const origEnd = buf.indexOf(0, next);
        if (origEnd === -1) throw new Error('unexpected git status output: rename without its source');
        // The source left the index: it is seen through the index comparison, not here.
        next = origEnd + 1;
        break;
      }
      case 0x75: // 'u': unmerged "u XY sub m1 m2 m3 mW h1 h2 h3 path"
        worktreeDirty = true;
        path = pathAfterFields(pos, 10, end);
        break;
      case 0x3f: // '?': untracked
        worktreeDirty = true;
        path = buf.toString('latin1', pos + 2, end);
        break;
      case 0x21: {
        // '!': ignored (listed only when asked for)
        const rel = strip(buf.toString('latin1', pos + 2, end));
        if (rel !== null && rel !== '') ignored.push(rel);
        break;
      }
      case 0x23: // '#': header
        break;
      default:
        throw new Error('unexpected git status record');
    }
    pos = next;
    if (path === null || !worktreeDirty) continue;
    const rel = strip(path);
    if (rel === null || rel === '') continue;
    if (tag === 0x3f && rel.endsWith('/')) nested.push(rel.slice(0, -1));
    else dirty.push(rel);
  }
  return { dirty, nested, ignored };
}

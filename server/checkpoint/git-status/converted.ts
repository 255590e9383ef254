import fs from 'node:fs';
import path from 'node:path';
import { readInside, readRegularFile, safeRoot } from '../../fs/index.ts';
import type { PathKey } from '../../paths/index.ts';
import { blobSizes, sizeAgrees } from '../common/blob-sizes.ts';
import { areaEnv, type ListingConfig, type RepoArea } from './repository.ts';
import {
  entryOid,
  entryPath,
  IX_EXEC,
  IX_FILE,
  IX_OTHER,
  tracksAttributes,
  type IndexSnapshot,
} from './index-snapshot.ts';

/**
 * Files whose work-tree bytes are not their index blob although git calls them clean: git's
 * content conversion (`core.autocrlf`, `text`/`eol`/`crlf`, `ident`, `working-tree-encoding`, a
 * filter driver) sits between the two. For such a file the blob is not the start content, so the
 * checkpoint must keep its work-tree bytes like a dirty file's. They are found without running any
 * conversion: the index records the work-tree size at `git add`/checkout, and an entry whose blob
 * has another size was converted. Only asked when the repository's config or attributes can
 * convert at all; the answer is kept with the parsed index (the same index gives the same answer).
 */

/** Attribute words that can make the work tree differ from the blob (`binary` only unsets `text`). */
const CONVERTING = /\b(text|eol|crlf|ident|filter|working-tree-encoding)\b/;
/** An attribute file larger than this is not read: it is taken to convert. */
const MAX_ATTRIBUTE_FILE_BYTES = 1024 * 1024;

function exists(abs: string): boolean {
  try {
    fs.lstatSync(abs);
    return true;
  } catch {
    return false;
  }
}

/** Whether an attribute file outside the work tree can convert (absent: no; unreadable: yes). */
function fileConverts(abs: string): boolean {
  const bytes = readRegularFile(abs, MAX_ATTRIBUTE_FILE_BYTES);
  if (bytes === null) return exists(abs);
  return CONVERTING.test(bytes.toString('latin1'));
}

/**
 * Whether content conversion can apply anywhere in the area: its config, the attribute files
 * outside the work tree, `.gitattributes` in the folders above the area up to the top level, and
 * every `.gitattributes` in it (`attributeKeys`, area-relative: tracked ones and untracked ones git
 * listed). Reads only those files; no git call.
 */
export function mayConvert(area: RepoArea, config: ListingConfig, attributeKeys: readonly PathKey[]): boolean {
  if (config.converts) return true;
  const outside = [
    ...config.attributeFiles,
    ...[...new Set([area.gitDir, area.commonDir])].map((d) => path.join(d, 'info', 'attributes')),
  ];
  // Folders from the top level down to the area's own (whose files are in `attributeKeys`).
  const top = area.topPrefix.split('/').filter(Boolean);
  for (let i = 0; i < top.length; i++) {
    outside.push(
      path.join(area.workTree, Buffer.from(top.slice(0, i).join('/'), 'latin1').toString(), '.gitattributes'),
    );
  }
  if (outside.some(fileConverts)) return true;
  if (attributeKeys.length === 0) return false;
  const root = safeRoot(area.cwd);
  for (const k of attributeKeys) {
    const got = readInside(root, k, MAX_ATTRIBUTE_FILE_BYTES);
    if (got.kind === 'absent') continue;
    // git does not follow a symlinked `.gitattributes`; anything else it may read is taken to convert.
    if (got.kind === 'symlink') continue;
    if (got.kind !== 'file' || CONVERTING.test(got.bytes.toString('latin1'))) return true;
  }
  return false;
}

const ATTRIBUTES = '.gitattributes';

/** Area-relative keys of the `.gitattributes` files among `keys`. */
export function attributeFilesAmong(keys: Iterable<PathKey>): PathKey[] {
  const out: PathKey[] = [];
  for (const k of keys) if (k === ATTRIBUTES || k.endsWith('/' + ATTRIBUTES)) out.push(k);
  return out;
}

const trackedByIndex = new WeakMap<IndexSnapshot, PathKey[]>();

/** Tracked `.gitattributes` files of an index (area-relative keys; found once per parsed index). */
export function trackedAttributeFiles(ix: IndexSnapshot): PathKey[] {
  let out = trackedByIndex.get(ix);
  if (out) return out;
  out = [];
  if (tracksAttributes(ix))
    for (let i = 0; i < ix.count; i++) {
      const p = entryPath(ix, i);
      if ((p === ATTRIBUTES || p.endsWith('/' + ATTRIBUTES)) && out[out.length - 1] !== p) out.push(p);
    }
  trackedByIndex.set(ix, out);
  return out;
}

const known = new WeakMap<IndexSnapshot, PathKey[]>();

/**
 * The merged file entries whose blob size is not the work-tree size the index recorded
 * (area-relative keys): one `git cat-file --batch-check` (objects only, no filter runs), once per
 * parsed index. A blob git cannot find counts as differing (its file is read).
 */
export async function sizeMismatches(area: RepoArea, ix: IndexSnapshot, timeoutMs: number): Promise<PathKey[]> {
  const hit = known.get(ix);
  if (hit) return hit;
  const idx: number[] = [];
  for (let i = 0; i < ix.count; i++) {
    const m = ix.mode[i];
    if (ix.stage[i] === 0 && (m === IX_FILE || m === IX_EXEC || m === IX_OTHER)) idx.push(i);
  }
  const sizes = await blobSizes(
    area.cwd,
    idx.map((i) => entryOid(ix, i)),
    timeoutMs,
    areaEnv(area),
  );
  const out: PathKey[] = [];
  for (const i of idx) {
    if (!sizeAgrees(sizes.get(entryOid(ix, i)), ix.size[i]!)) out.push(entryPath(ix, i));
  }
  known.set(ix, out);
  return out;
}

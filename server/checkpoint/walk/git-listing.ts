import fs from 'node:fs';
import path from 'node:path';
import { listIgnored, type IndexEntry } from '../../git/index.ts';
import { listIndexFast } from './index-listing.ts';
import type { PathKey } from '../../paths/index.ts';
import type { GitArea, IgnoreState } from '../model.ts';

/**
 * What git knows about one area of the workspace, read without touching the work tree's content:
 * index entries with their stat data and blob ids (`ls-files --debug`), and the ignored folders
 * and files (`ls-files -o -i --directory`, which never enters an ignored folder). Paths come back
 * relative to the workspace root (the area's prefix added).
 */
export interface AreaListing {
  entries: IndexEntry[];
  ignore: IgnoreState;
  /** mtime of the index file, read before listing it (git's racy-clean rule); null when unknown. */
  indexMtimeMs: number | null;
}

function prefixed(prefix: PathKey, keys: PathKey[]): PathKey[] {
  return prefix === '' ? keys : keys.map((k) => prefix + k);
}

export async function listIgnoreState(area: GitArea, timeoutMs: number): Promise<IgnoreState> {
  const ig = await listIgnored(area.cwd, { timeoutMs });
  return { pruneDirs: prefixed(area.prefix, ig.dirs), skipFiles: prefixed(area.prefix, ig.files) };
}

/** The index part of an area's listing alone (the walk need not wait for it). */
export async function listAreaIndex(
  area: GitArea,
  gitDir: string | null,
  timeoutMs: number,
): Promise<{ entries: IndexEntry[]; indexMtimeMs: number | null }> {
  let indexMtimeMs: number | null = null;
  if (gitDir) {
    try {
      indexMtimeMs = fs.statSync(path.join(gitDir, 'index')).mtimeMs;
    } catch {
      indexMtimeMs = null; // no index yet: nothing is clean
    }
  }
  const entries = await listIndexFast(area.cwd, timeoutMs);
  if (area.prefix !== '') for (const e of entries) e.path = area.prefix + e.path;
  return { entries, indexMtimeMs };
}

export async function listArea(
  area: GitArea,
  gitDir: string | null,
  timeoutMs: number,
  withIndex: boolean,
): Promise<AreaListing> {
  let indexMtimeMs: number | null = null;
  if (withIndex && gitDir) {
    try {
      indexMtimeMs = fs.statSync(path.join(gitDir, 'index')).mtimeMs;
    } catch {
      indexMtimeMs = null; // no index yet: nothing is clean
    }
  }
  const [entries, ignore] = await Promise.all([
    withIndex ? listIndexFast(area.cwd, timeoutMs) : Promise.resolve([] as IndexEntry[]),
    listIgnoreState(area, timeoutMs),
  ]);
  if (area.prefix !== '') for (const e of entries) e.path = area.prefix + e.path;
  return { entries, ignore, indexMtimeMs };
}

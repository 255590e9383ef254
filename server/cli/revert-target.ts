import { FILES_PAGE_MAX, runChangeId, type ChangeFilesPage, type FileResponse } from '../../shared/index.ts';
import { hunkName, hunksOf } from '../revert/index.ts';

/**
 * What `rundiff revert` and the MCP `revert_changes` tool name in people's terms (a change as a bare
 * run id, files by path, hunks by number) turned into what the revert route takes (change ids, file
 * ids, hunk headers), through the server's own listing and patch. `get` reads one JSON route.
 */
export type GetJson = <T>(path: string) => Promise<T>;

/** `run:<id>` and `tool:<id>` as they are; a bare run id as its run's change. */
export const changeIdOf = (change: string): string => (/^(run|tool):/.test(change) ? change : runChangeId(change));

/** The change's REST path. */
export const changeUrlOf = (sessionId: string, changeId: string): string =>
  `/api/hermes/sessions/${encodeURIComponent(sessionId)}/workspace-run-changes/${encodeURIComponent(changeId)}`;

/** The file ids of the paths asked for (a rename by its new or old name); unknown paths are named. */
export async function fileIdsOf(
  get: GetJson,
  changeUrl: string,
  paths: readonly string[],
): Promise<{ ids: string[]; unknown: string[] }> {
  const wanted = new Set(paths);
  const found = new Map<string, string>();
  let after: string | null = null;
  do {
    const q: string = after === null ? '' : `&after=${encodeURIComponent(after)}`;
    const page: ChangeFilesPage = await get<ChangeFilesPage>(`${changeUrl}/files?limit=${FILES_PAGE_MAX}${q}`);
    for (const f of page.files) {
      if (wanted.has(f.path)) found.set(f.path, f.id);
      if (f.old_path !== null && wanted.has(f.old_path)) found.set(f.old_path, f.id);
    }
    after = page.next_file_cursor;
  } while (after !== null);
  return {
    ids: [...new Set(paths.flatMap((p) => (found.has(p) ? [found.get(p)!] : [])))],
    unknown: paths.filter((p) => !found.has(p)),
  };
}

/**
 * The headers of hunks `numbers` (1 = the first) of a file's patch as the timeline shows it; when
 * one is past the last hunk, how many there are.
 */
export async function hunkHeadersOf(
  get: GetJson,
  changeUrl: string,
  fileId: string,
  numbers: readonly number[],
): Promise<{ ok: true; headers: string[] } | { ok: false; count: number; missing: number }> {
  const file = await get<FileResponse>(`${changeUrl}/files/${encodeURIComponent(fileId)}`);
  const all = hunksOf(file.file.patch ?? '').map((h) => hunkName(h.range));
  const missing = numbers.find((n) => n > all.length);
  if (missing !== undefined) return { ok: false, count: all.length, missing };
  return { ok: true, headers: numbers.map((n) => all[n - 1]!) };
}

/** Lines one `--lines` may name (the route's bound of one hunk entry). */
const MAX_LINES = 100_000;

/**
 * `--lines a-b,c` as the route's indexes: the numbers count a hunk's body lines from 1 (the first
 * line after its header), as `--hunk` counts hunks; the route counts them from 0. Null when it is
 * not a list of numbers and ascending ranges.
 */
export function lineIndexesOf(text: string): number[] | null {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) return null;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (from < 1 || to < from || to - from + out.size >= MAX_LINES) return null;
    for (let n = from; n <= to; n++) out.add(n - 1);
  }
  return [...out].sort((a, b) => a - b);
}

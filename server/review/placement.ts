import type { Store, StoredComment } from '../store/index.ts';
import { reanchor, type Reanchored, type SideLines, type Touch } from './anchor.ts';
import { readSideLines } from './side-lines.ts';

/** Sessions whose comment placements are kept. */
const MAX_CACHED_SESSIONS = 64;

/**
 * Where each comment of a session stands now (`reanchor` over the store's rows), kept per session
 * until its write clock moves. Within one pass a path's later changes and a file's side are read
 * once, however many comments share them.
 */
export function createPlacements(store: Pick<Store, 'changes' | 'contents' | 'reviews' | 'clock'>) {
  const placed = new Map<string, { version: string; byId: Map<string, Reanchored> }>();

  /** `read`: one side's lines, read at most once per placement pass (comments share files). */
  function place(
    c: StoredComment,
    read: (changeId: string, fileId: string) => SideLines | null,
    touchesOf: (path: string) => readonly Touch[],
  ): Reanchored {
    return reanchor(
      {
        path: c.path,
        start_line: c.start_line,
        end_line: c.end_line,
        lines: c.lines,
        finished_at: c.change_finished_at,
        seq: c.change_seq,
      },
      touchesOf,
      (t) => read(t.change_id, t.file_id),
    );
  }

  /**
   * Where each comment stands now. Kept per session until its write clock moves; a placement read
   * from a side whose contents were still being written is not kept (it is computed again next time).
   */
  function placements(sessionId: string, comments: readonly StoredComment[]): Map<string, Reanchored> {
    const version = store.clock.version(sessionId);
    let entry = placed.get(sessionId);
    if (!entry || entry.version !== version) entry = { version, byId: new Map() };
    placed.delete(sessionId);
    placed.set(sessionId, entry);
    for (const key of placed.keys()) {
      if (placed.size <= MAX_CACHED_SESSIONS) break;
      placed.delete(key);
    }
    const sides = new Map<string, { side: SideLines | null; provisional: boolean }>();
    const touches = new Map<string, readonly Touch[]>();
    const touchesOf = (path: string): readonly Touch[] => {
      let found = touches.get(path);
      if (!found) touches.set(path, (found = store.reviews.touches(sessionId, path)));
      return found;
    };
    const out = new Map<string, Reanchored>();
    for (const c of comments) {
      let where = entry.byId.get(c.id);
      if (!where) {
        let provisional = false;
        where = place(
          c,
          (changeId, fileId) => {
            const key = `${changeId}\u0000${fileId}`;
            let got = sides.get(key);
            if (!got) {
              const read = readSideLines(store, sessionId, changeId, fileId, 'after');
              got = read?.ok ? { side: read.side, provisional: read.provisional } : { side: null, provisional: false };
              sides.set(key, got);
            }
            provisional ||= got.provisional;
            return got.side;
          },
          touchesOf,
        );
        if (!provisional) entry.byId.set(c.id, where);
      }
      out.set(c.id, where);
    }
    return out;
  }

  return placements;
}

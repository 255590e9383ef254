import type { Store, StoredComment } from '../store/index.ts';
import { reanchor, type Reanchored, type SideLines, type Touch } from './anchor.ts';
import { readSideLines } from './side-lines.ts';

/** Thrown through `reanchor` when it asks for rows not read yet: `read` reads them. */
/** Thrown to leave a synchronous pass when something it needs is not read yet; `read` reads it. */
class NotRead extends Error {
  constructor(readonly read: () => Promise<void>) {
    super('not read yet');
  }
}

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
   * `reanchor` is pure and synchronous: what it asks for that is not read yet stops it, is read, and
   * the comment is placed again (a pass reads each path's touches and each file's side once).
   */
  async function placements(sessionId: string, comments: readonly StoredComment[]): Promise<Map<string, Reanchored>> {
    const version = await store.clock.version(sessionId);
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
      const found = touches.get(path);
      if (found) return found;
      throw new NotRead(async () => void touches.set(path, await store.reviews.touches(sessionId, path)));
    };
    const out = new Map<string, Reanchored>();
    for (const c of comments) {
      let where = entry.byId.get(c.id);
      while (!where) {
        let provisional = false;
        try {
          where = place(
            c,
            (changeId, fileId) => {
              const key = `${changeId}\u0000${fileId}`;
              const got = sides.get(key);
              if (!got)
                throw new NotRead(async () => {
                  const read = await readSideLines(store, sessionId, changeId, fileId, 'after');
                  sides.set(
                    key,
                    read?.ok ? { side: read.side, provisional: read.provisional } : { side: null, provisional: false },
                  );
                });
              provisional ||= got.provisional;
              return got.side;
            },
            touchesOf,
          );
        } catch (err) {
          if (!(err instanceof NotRead)) throw err;
          await err.read();
          continue;
        }
        if (!provisional) entry.byId.set(c.id, where);
      }
      out.set(c.id, where);
    }
    return out;
  }

  return placements;
}

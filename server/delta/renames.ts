import { comparePathKeys, type PathKey } from '../paths/index.ts';
import { contentIdentity, isRegularMode } from './content.ts';
import type { FileSide, RenamePair } from './types.ts';

/**
 * Rename pairing of identical contents with git's exact-rename rules: for each new path in path
 * order, the first unused deleted path with the same content among at most 100, preferring one
 * with the same file name; a symlink or gitlink pairs only with the same mode. git runs this same
 * pass before its similarity pass, so when it uses up every deleted or every added path the
 * result is git's; otherwise it is the fallback when no detector is injected or it failed.
 */

export interface PairingSide {
  path: PathKey;
  side: FileSide;
}

function basename(key: PathKey): PathKey {
  const i = key.lastIndexOf('/');
  return i === -1 ? key : key.slice(i + 1);
}

export function pairExactRenames(deleted: PairingSide[], added: PairingSide[]): RenamePair[] {
  const sources = new Map<string, PairingSide[]>();
  for (const d of [...deleted].sort((x, y) => comparePathKeys(x.path, y.path))) {
    const id = contentIdentity(d.side);
    if (id === null) continue;
    const list = sources.get(id);
    if (list) list.push(d);
    else sources.set(id, [d]);
  }
  const used = new Set<PathKey>();
  const pairs: RenamePair[] = [];
  for (const a of [...added].sort((x, y) => comparePathKeys(x.path, y.path))) {
    const id = contentIdentity(a.side);
    const candidates = id === null ? undefined : sources.get(id);
    if (!candidates) continue;
    // git looks at no more than 100 eligible identical sources per destination.
    let best: PairingSide | null = null;
    let bestScore = -1;
    let budget = 100;
    for (const c of candidates) {
      if ((!isRegularMode(c.side.mode) || !isRegularMode(a.side.mode)) && c.side.mode !== a.side.mode) continue;
      if (used.has(c.path)) continue;
      const score = basename(c.path) === basename(a.path) ? 2 : 1;
      if (score > bestScore) {
        best = c;
        bestScore = score;
        if (score === 2) break;
      }
      if (--budget === 0) break;
    }
    if (best) {
      used.add(best.path);
      pairs.push({ from: best.path, to: a.path, similarity: 100 });
    }
  }
  return pairs;
}

/** Keeps only pairs that join a real deleted path to a real added path, each at most once. */
export function validPairs(pairs: RenamePair[], deleted: Set<PathKey>, added: Set<PathKey>): RenamePair[] {
  const from = new Set<PathKey>();
  const to = new Set<PathKey>();
  const out: RenamePair[] = [];
  for (const p of pairs) {
    if (!deleted.has(p.from) || !added.has(p.to) || from.has(p.from) || to.has(p.to)) continue;
    from.add(p.from);
    to.add(p.to);
    const similarity = Number.isFinite(p.similarity) ? Math.min(100, Math.max(0, Math.round(p.similarity))) : 100;
    out.push({ from: p.from, to: p.to, similarity });
  }
  return out;
}

/**
 * False when git's similarity pass provably pairs nothing among the paths the exact pass left:
 * git scores a pair 0 unless both are regular files and the larger is at most twice the smaller
 * (at its default 50% threshold a size difference over half the larger size rules the pair out
 * before any content is compared). Sides without bytes are judged by git on stand-in content, so
 * they always count as possible. True means git has to be asked.
 */
export function similarPairPossible(deleted: PairingSide[], added: PairingSide[], exact: RenamePair[]): boolean {
  const usedFrom = new Set(exact.map((p) => p.from));
  const usedTo = new Set(exact.map((p) => p.to));
  const sizes = (sides: PairingSide[], used: Set<PathKey>): number[] | null => {
    const out: number[] = [];
    for (const s of sides) {
      if (used.has(s.path) || !isRegularMode(s.side.mode)) continue;
      if (!s.side.bytes) return null;
      out.push(s.side.bytes.length);
    }
    return out;
  };
  const from = sizes(deleted, usedFrom);
  const to = sizes(added, usedTo);
  if (from === null || to === null) return true;
  if (from.length === 0 || to.length === 0) return false;
  from.sort((x, y) => x - y);
  // Some source size s with t <= 2s and s <= 2t, i.e. s in [ceil(t/2), 2t]: the smallest s >= t/2.
  for (const t of to) {
    let lo = 0;
    let hi = from.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (2 * from[mid]! < t) lo = mid + 1;
      else hi = mid;
    }
    if (lo < from.length && from[lo]! <= 2 * t) return true;
  }
  return false;
}

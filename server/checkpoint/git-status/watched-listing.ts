import fs from 'node:fs';
import path from 'node:path';
import { displayPath, type PathKey } from '../../paths/index.ts';
import { oneAtATime, type Watches } from '../watch/index.ts';
import { mark } from '../common/trace.ts';
import type { ListingHow } from '../strategy.ts';
import { listWorkspace, NotVouchedError, type GitStatusListing, type ListingContext } from './listing.ts';

/**
 * git's listing of a workspace with a watcher vouching for what did not change: the previous
 * listing (a checkpoint's or a completion's) plus git status asked about the paths the watcher saw
 * since, and only those. Whenever the watcher cannot vouch (see `Unvouched`), or what the listing
 * checks itself moved (the index file, the config, an ignore or attribute file, a repository that
 * came or went), the whole tree is listed as without a watcher, and the trace says why. Listings of
 * one workspace run one at a time: each starts from the one before.
 */

export interface WatchedLister {
  list(ctx: ListingContext): Promise<GitStatusListing>;
  clear(): void;
}

interface Base {
  listing: GitStatusListing;
  /** The sync point the listing was made after; null: none (it cannot be a base). */
  point: number | null;
  /** The ignore files outside the tree, as they were then. */
  rules: string;
}

/** A changed path that changes how git classifies others: only a whole listing applies it. */
function rulesFile(p: PathKey): boolean {
  const name = p.slice(p.lastIndexOf('/') + 1);
  return name === '.gitignore' || name === '.gitattributes';
}

function identity(file: string): string {
  try {
    const s = fs.statSync(file, { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch {
    return 'absent';
  }
}

/** The ignore and attribute files git reads from outside the work tree, by identity. */
function outsideRules(listing: GitStatusListing): string {
  const home = process.env.HOME ?? '';
  const xdg = process.env.XDG_CONFIG_HOME || (home ? path.join(home, '.config') : '');
  const files = xdg ? [path.join(xdg, 'git', 'ignore'), path.join(xdg, 'git', 'attributes')] : [];
  for (const a of listing.areas)
    for (const d of new Set([a.area.gitDir, a.area.commonDir]))
      files.push(path.join(d, 'info', 'exclude'), path.join(d, 'info', 'attributes'));
  return files.map(identity).join('|');
}

/** The folders git ignored whole in a listing (relative text): the watcher does not enter them. */
function ignoredFolders(listing: GitStatusListing): Set<string> {
  const out = new Set<string>();
  for (const a of listing.areas)
    for (const p of a.seen?.ignored ?? []) if (p.endsWith('/')) out.add(displayPath(p.slice(0, -1)).path);
  return out;
}

export function createWatchedLister(watches: Watches, told?: (root: string, how: ListingHow) => void): WatchedLister {
  const bases = new Map<string, Base>();
  const queued = oneAtATime<GitStatusListing>();
  const say = (root: string, how: ListingHow) => {
    mark('watched' in how ? `listing watched ${how.watched} paths` : `listing whole: ${how.whole}`);
    told?.(root, how);
  };

  const listOne = async (ctx: ListingContext): Promise<GitStatusListing> => {
    const root = ctx.root;
    const base = bases.get(root);
    const skip = () => {
      const folders = base ? ignoredFolders(base.listing) : new Set<string>();
      return (rel: string) => folders.has(rel);
    };
    if (!base) {
      // The first listing does not wait for a watcher: it is started once the ignored folders are known.
      const listing = await listWorkspace({ ...ctx, keepSeen: true });
      bases.set(root, { listing, point: null, rules: outsideRules(listing) });
      say(root, { whole: 'not_ready' });
      const folders = ignoredFolders(listing);
      void watches.sync(root, () => (rel) => folders.has(rel));
      return listing;
    }
    const synced = await watches.sync(root, skip);
    let why: string | null = synced.unvouched;
    let rulesChanged = false;
    if (why === null && (base.point === null || synced.since !== base.point)) why = 'no_base';
    if (why === null && [...synced.changed!].some(rulesFile)) {
      why = 'ignore_rules';
      rulesChanged = true;
    }
    if (why === null && outsideRules(base.listing) !== base.rules) {
      why = 'ignore_rules';
      rulesChanged = true;
    }
    let listing: GitStatusListing | null = null;
    if (why === null) {
      try {
        listing = await listWorkspace({
          ...ctx,
          keepSeen: true,
          since: { base: base.listing, changed: synced.changed! },
        });
        say(root, { watched: synced.changed!.size });
      } catch (err) {
        if (!(err instanceof NotVouchedError)) throw err;
        why = err.why;
      }
    }
    if (listing === null) {
      try {
        listing = await listWorkspace({ ...ctx, keepSeen: true });
      } catch (err) {
        bases.delete(root);
        throw err;
      }
      say(root, { whole: why! });
    }
    bases.set(root, { listing, point: synced.point, rules: outsideRules(listing) });
    if (rulesChanged) {
      // The folders the watcher leaves out may be others now: a new watcher, from this listing.
      watches.restart(root);
      bases.set(root, { listing, point: null, rules: outsideRules(listing) });
      const folders = ignoredFolders(listing);
      void watches.sync(root, () => (rel) => folders.has(rel));
    }
    return listing;
  };

  return {
    list: (ctx) => queued(ctx.root, () => listOne(ctx)),
    // The watchers are the engine's, stopped when it closes.
    clear: () => bases.clear(),
  };
}

import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { DiffProgressPayload } from '../../shared/index.ts';
import { createTempRepo, type TempRepo } from '../test-support/index.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '../..');
const CHILD = path.join(here, '../test-support/watch-limit-child.ts');

/** A user namespace can have its own, lower inotify watch limit: the system's limit, really reached. */
const userNamespaces = (() => {
  try {
    execFileSync('unshare', ['-U', '-r', 'sh', '-c', 'echo 100 > /proc/sys/user/max_inotify_watches'], {
      stdio: 'ignore',
    });
    return true;
  } catch {
    return false;
  }
})();

const repos: TempRepo[] = [];
afterEach(() => {
  while (repos.length) repos.pop()!.cleanup();
});

interface ChildResult {
  mode: string | null;
  events: DiffProgressPayload[];
  logs: string[];
  handles: Record<string, number>;
}

/** Runs the feed in a child process whose user may hold at most `watches` inotify watches. */
function followWithWatchLimit(dir: string, watches: number): ChildResult {
  const out = execFileSync(
    'unshare',
    [
      '-U',
      '-r',
      'sh',
      '-c',
      `echo ${watches} > /proc/sys/user/max_inotify_watches && exec "$0" "$@"`,
      process.execPath,
      path.join(ROOT, 'bin/tsx.js'),
      CHILD,
      dir,
    ],
    { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
  );
  return JSON.parse(out.trim().split('\n').pop()!) as ChildResult;
}

describe.skipIf(!userNamespaces)('live feed when the system runs out of watches', () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 10; i++) files[`d${i}/f.txt`] = `${i}\n`;

  it('a system out of inotify watches (ENOSPC) moves the run to periodic checks, which still list its paths', () => {
    const repo = createTempRepo({ git: false, files });
    repos.push(repo);
    const r = followWithWatchLimit(repo.dir, 4);
    expect(r.mode).toBe('poll');
    expect(r.logs.join('\n')).toMatch(/watch_limit/);
    const listed = r.events.find((e) => e.touched.includes('after.txt'));
    expect(listed).toMatchObject({ available: true, mode: 'poll', reason: 'watch_limit' });
  });

  it('control: with enough watches the same workspace is watched', () => {
    const repo = createTempRepo({ git: false, files });
    repos.push(repo);
    const r = followWithWatchLimit(repo.dir, 1_000);
    expect(r.mode).toBe('watch');
    expect(r.handles.folderWatches).toBe(11);
    expect(r.events.find((e) => e.touched.includes('after.txt'))).toMatchObject({ available: true, mode: 'watch' });
  });
});

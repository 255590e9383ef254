import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempDir, createTempRepo, withoutPermissionOverride, type TempRepo } from '../test-support/index.ts';
import { rows } from '../test-support/engine-harness.ts';
import type { DeltaResult } from './types.ts';

/**
 * A file the server cannot read is its own state: never `deleted`, never a stanza that deletes it,
 * and no row at all when nothing about it changed. The engine runs in a child process that cannot
 * override file permissions (as root: without CAP_DAC_OVERRIDE), so `chmod 000` really denies it.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const TSX = path.join(here, '../../bin/tsx.js');
const CHILD = path.join(here, '../test-support/engine-child.ts');

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

interface ChildResult {
  delta: DeltaResult | null;
  patch: string | null;
  probeErrors: Array<string | null>;
  uid: number;
}

/** Checkpoint in a child process, run `during` (as this process), complete, and return the result. */
async function completeInChild(dir: string, probes: string[], during: () => void): Promise<ChildResult> {
  const [cmd, args] = withoutPermissionOverride(process.execPath, [TSX, CHILD, dir, ...probes]);
  const child = spawn(cmd, args, {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, HOME: '/nonexistent-home' },
  });
  cleanups.push(() => child.kill());
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const out = readline.createInterface({ input: child.stdout });
  let result: ChildResult | null = null;
  for await (const line of out) {
    if (line === 'started') {
      during();
      child.stdin.end('go\n');
    } else {
      result = JSON.parse(line) as ChildResult;
    }
  }
  const code = await exited;
  if (code !== 0 || !result) throw new Error(`engine child failed (${code}): ${stderr}`);
  return result;
}

/** A copy of the workspace as it was at the checkpoint (without `.git`), where the patch is applied. */
function startCopy(dir: string): string {
  const copy = createTempDir('rundiff-start-copy-');
  cleanups.push(() => fs.rmSync(copy, { recursive: true, force: true }));
  fs.cpSync(dir, copy, { recursive: true, filter: (src) => path.basename(src) !== '.git' });
  return copy;
}

function applyPatch(copy: string, patch: string): { summary: string } {
  const file = path.join(copy, '..', `${path.basename(copy)}.diff`);
  fs.writeFileSync(file, patch);
  cleanups.push(() => fs.rmSync(file, { force: true }));
  execFileSync('git', ['apply', '--check', file], { cwd: copy });
  const summary = execFileSync('git', ['apply', '--summary', file], { cwd: copy, encoding: 'utf8' });
  execFileSync('git', ['apply', file], { cwd: copy });
  return { summary };
}

describe.each([
  ['a filesystem (non-git) workspace', false],
  ['a git workspace', true],
])('unreadable files in %s', (_label, useGit) => {
  function workspace(): TempRepo {
    const repo = createTempRepo({
      git: useGit,
      files: {
        'locked.txt': 'unreadable from before the run\n',
        'goes-unreadable.txt': 'readable at the start\n',
        'edit.txt': 'one\n',
      },
    });
    cleanups.push(() => repo.cleanup());
    if (useGit) {
      // Committed and untouched: clean by the index, its start content is its blob.
      repo.write('locked-clean.txt', 'committed, then unreadable\n');
      repo.commit('clean');
      fs.chmodSync(path.join(repo.dir, 'locked-clean.txt'), 0o000);
      // Dirty at the start: read at the checkpoint (and denied).
      fs.appendFileSync(path.join(repo.dir, 'locked.txt'), 'dirty\n');
    }
    fs.chmodSync(path.join(repo.dir, 'locked.txt'), 0o000);
    return repo;
  }

  it('are never reported deleted: unchanged they are no row, made unreadable during the run they are `modified` with `unreadable`, new ones `added` with `unreadable`', async () => {
    const repo = workspace();
    const copy = startCopy(repo.dir);
    const locked = path.join(repo.dir, 'locked.txt');
    const res = await completeInChild(repo.dir, [locked, path.join(repo.dir, 'edit.txt')], () => {
      fs.chmodSync(path.join(repo.dir, 'goes-unreadable.txt'), 0o000);
      fs.writeFileSync(path.join(repo.dir, 'edit.txt'), 'two\n');
      fs.writeFileSync(path.join(repo.dir, 'new-locked.txt'), 'new and unreadable\n', { mode: 0o000 });
    });
    // Positive control: the engine's user really cannot read the locked file (but can read others).
    expect(res.probeErrors).toEqual(['EACCES', null]);

    const delta = res.delta!;
    expect(rows(delta)).toEqual([
      'M edit.txt +1 -1',
      'M goes-unreadable.txt +0 -0 (unreadable)',
      'A new-locked.txt +0 -0 (unreadable)',
    ]);
    expect(delta.deleted_count).toBe(0);
    expect(delta.files.find((f) => f.path === 'goes-unreadable.txt')).toMatchObject({
      size_before: 'readable at the start\n'.length,
      size_after: 'readable at the start\n'.length,
      patch: null,
    });

    // The whole-run patch applies to the start state and deletes nothing.
    expect(res.patch).toContain('# rundiff: goes-unreadable.txt unreadable\n');
    expect(res.patch).not.toContain('deleted file mode');
    const { summary } = applyPatch(copy, res.patch!);
    expect(summary).not.toContain('delete mode');
    expect(fs.readFileSync(path.join(copy, 'goes-unreadable.txt'), 'utf8')).toBe('readable at the start\n');
    expect(fs.existsSync(path.join(copy, 'locked.txt'))).toBe(true);
    expect(fs.readFileSync(path.join(copy, 'edit.txt'), 'utf8')).toBe('two\n');
  });

  it('unreadable at the start and readable (changed) at the end is `modified` with `unreadable`, no patch', async () => {
    const repo = workspace();
    const res = await completeInChild(repo.dir, [], () => {
      fs.chmodSync(path.join(repo.dir, 'locked.txt'), 0o644);
      fs.appendFileSync(path.join(repo.dir, 'locked.txt'), 'more\n');
    });
    const delta = res.delta!;
    expect(rows(delta)).toEqual(['M locked.txt +0 -0 (unreadable)']);
    expect(delta.deleted_count).toBe(0);
  });

  it('a run that touches nothing reports nothing, even with an unreadable file in the workspace', async () => {
    const repo = workspace();
    const res = await completeInChild(repo.dir, [path.join(repo.dir, 'locked.txt')], () => {});
    expect(res.probeErrors).toEqual(['EACCES']);
    expect(res.delta!.changed_count).toBe(0);
    expect(rows(res.delta!)).toEqual([]);
  });
});

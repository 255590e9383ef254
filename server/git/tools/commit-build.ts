import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppError } from '../../errors.ts';
import { displayPath, keyToBytes, type PathKey } from '../../paths/index.ts';
import { runGit, type GitConfigPair } from '../runner.ts';
import type { ObjectFormat, WorktreeEntry } from './repo-state.ts';

/**
 * Builds a `paths` commit from exactly the work-tree content the commit gate compared, without
 * letting git read the work tree again: each file's bytes (already read and fingerprinted) are
 * written as a blob with no filter, the tree is HEAD plus those entries in a private index, and
 * HEAD moves only if it still is the commit the review saw. A write or `chmod` racing the commit
 * can therefore not slip content or a mode into it that no review showed.
 */

export interface BuildInput {
  top: string;
  /** HEAD when the gate last passed (null when unborn): the parent, and what HEAD must still be. */
  head: string | null;
  /** Each committed path and the entry the gate compared. */
  entries: ReadonlyMap<PathKey, WorktreeEntry>;
  message: string;
  format: ObjectFormat;
  config: readonly GitConfigPair[];
  /** Author and committer. */
  env: Readonly<Record<string, string>>;
}

/** One `--index-info -z` record: `<mode> <oid>\t<path>\0` (mode 0 removes the path). */
function indexRecord(mode: string, oid: string, key: PathKey): Buffer {
  return Buffer.concat([Buffer.from(`${mode} ${oid}\t`, 'latin1'), keyToBytes(key), Buffer.from([0])]);
}

async function writeBlob(top: string, bytes: Buffer, config: readonly GitConfigPair[]): Promise<string> {
  // --no-filters: the bytes are stored as they are; no clean filter or eol conversion sees them.
  const res = await runGit({ cwd: top, args: ['hash-object', '-w', '--no-filters', '--stdin'], input: bytes, config });
  return res.stdout.toString('latin1').trim();
}

/** The index records for the entries, writing each blob; refuses an entry that holds no content. */
async function recordsFor(input: BuildInput): Promise<Buffer> {
  const zero = '0'.repeat(input.format === 'sha256' ? 64 : 40);
  const records: Buffer[] = [];
  for (const [key, entry] of input.entries) {
    if (entry.fingerprint === 'absent') {
      records.push(indexRecord('0', zero, key));
      continue;
    }
    if (entry.bytes === null || entry.mode === null) {
      const why = entry.fingerprint.startsWith('stat:') ? 'is larger than 64 MiB' : 'is not a readable file';
      throw new AppError('git_failed', `${displayPath(key).path} ${why}; the tools cannot commit it`, {
        hint: 'Commit this path with git yourself.',
        details: { path: displayPath(key).path },
      });
    }
    const oid = await writeBlob(input.top, entry.bytes, input.config);
    const expected = entry.fingerprint.slice(entry.fingerprint.indexOf(' ') + 1);
    if (oid !== expected) throw new AppError('internal', `blob id mismatch for ${displayPath(key).path}`);
    records.push(indexRecord(entry.mode, oid, key));
  }
  return Buffer.concat(records);
}

/** Creates the commit and moves HEAD to it; returns the index records so the caller can apply them. */
export async function buildPathsCommit(input: BuildInput): Promise<{ commit: string; records: Buffer }> {
  const { top, head, config } = input;
  const records = await recordsFor(input);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-commit-'));
  try {
    const env = { GIT_INDEX_FILE: path.join(dir, 'index') };
    await runGit({ cwd: top, args: head ? ['read-tree', head] : ['read-tree', '--empty'], env, config });
    await runGit({ cwd: top, args: ['update-index', '-z', '--index-info'], input: records, env, config });
    const tree = (await runGit({ cwd: top, args: ['write-tree'], env, config })).stdout.toString('latin1').trim();
    if (head) {
      const headTree = await runGit({ cwd: top, args: ['rev-parse', `${head}^{tree}`], config });
      if (headTree.stdout.toString('latin1').trim() === tree) {
        throw new AppError('nothing_to_commit', 'the reviewed changes are already committed');
      }
    }
    // `git commit -F -` without an editor only tidies whitespace; so does a plain stripspace.
    const message = (await runGit({ cwd: top, args: ['stripspace'], input: input.message, config })).stdout;
    if (message.length === 0) throw new AppError('invalid_input', 'message is empty once whitespace is removed');
    const commit = (
      await runGit({
        cwd: top,
        args: ['commit-tree', '--no-gpg-sign', tree, ...(head ? ['-p', head] : []), '-F', '-'],
        input: message,
        env: { ...input.env },
        config,
      })
    ).stdout
      .toString('latin1')
      .trim();
    const subject = message.toString('utf8').split('\n')[0] ?? '';
    const zero = '0'.repeat(commit.length);
    // Moves the branch HEAD names only if it still points at the reviewed commit.
    const moved = await runGit({
      cwd: top,
      args: ['update-ref', '-m', `commit${head ? '' : ' (initial)'}: ${subject}`, 'HEAD', commit, head ?? zero],
      config,
      okExitCodes: [0, 1, 128],
    });
    if (moved.exitCode !== 0) {
      throw new AppError('stale_review', 'HEAD moved while the commit was being made', {
        hint: 'Another commit landed meanwhile. Run git_diff again, check it, then commit.',
        details: { stderr: moved.stderr.trim().slice(-500) },
      });
    }
    return { commit, records };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

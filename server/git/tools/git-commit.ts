import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CommitPlan, GitCommitOutput } from '../../../shared/index.ts';
import { AppError } from '../../errors.ts';
import { comparePathKeys, displayPath, type PathKey } from '../../paths/index.ts';
import { checkAttrs, isBinaryByAttrs } from '../repo.ts';
import { runGit, type GitConfigPair } from '../runner.ts';
import type { ToolRun } from './context.ts';
import { parseDiffOutput } from './diff-parse.ts';
import { identityEnv, resolveIdentity } from './identity.ts';
import { countLines, looksBinary } from './new-file-patch.ts';
import { parseStatusV2, type StatusEntry } from './porcelain.ts';
import { keyIsUnder, literalPathspec, resolveToolPath } from './paths.ts';
import { emptyTree } from './refs.ts';
import { objectFormat, readModeRule, readRepoState, readWorktreeEntry, type WorktreeEntry } from './repo-state.ts';
import { buildPathsCommit } from './commit-build.ts';
import { withPrivateIndex } from './private-index.ts';
import { safeRoot } from '../../fs/index.ts';
import { evaluateGate, type GateNeed } from './review.ts';

/**
 * `git_commit`, the one writer. Without `paths` it commits the staged set as it is; with `paths` it
 * stages exactly the changed files under them and commits only those (`--only`). Either way the
 * commit gate must find a fresh review of every file first, hooks are off, filter drivers are
 * neutralised (a path that needs one is refused) and the message goes in on stdin.
 */

export interface GitCommitArgs {
  message: string;
  paths?: string[] | undefined;
}

/** Extra overrides for the commit: no signing program, no status run for a template. */
const COMMIT_CONFIG: readonly GitConfigPair[] = [
  ['commit.gpgSign', 'false'],
  ['commit.verbose', 'false'],
  ['commit.status', 'false'],
  ['core.hooksPath', '/dev/null'],
];

function shown(keys: readonly PathKey[]): string[] {
  return keys.map((k) => displayPath(k).path);
}

async function statusEntries(run: ToolRun, pathspec: readonly string[]): Promise<StatusEntry[]> {
  const res = await runGit({
    cwd: run.repo.top,
    // No rename pairing: a rename is its deletion and its addition, each gated on its own.
    args: [
      'status',
      '--porcelain=v2',
      '-z',
      '--untracked-files=all',
      '--no-renames',
      '--ignore-submodules=dirty',
      '--',
      ...pathspec,
    ],
    config: run.safety.config,
    timeoutMs: 30_000,
  });
  return parseStatusV2(res.stdout).entries.filter((e) => e.kind !== 'ignored');
}

function lockError(gitDir: string): AppError {
  return new AppError('index_locked', 'the index is locked by another git process', {
    hint: `Wait for the other git command to finish and retry. If none is running, a crashed one left ${path.join(gitDir, 'index.lock')} behind: remove that file.`,
    details: { lock: path.join(gitDir, 'index.lock') },
  });
}

/** The needs of the commit: which files, and which of their changes it takes. */
async function commitNeeds(run: ToolRun, pathKeys: PathKey[] | null): Promise<GateNeed[]> {
  const entries = await statusEntries(run, pathKeys === null ? [] : pathKeys.map(literalPathspec));
  const conflicted = entries.filter((e) => e.kind === 'unmerged');
  if (conflicted.length > 0) {
    throw new AppError('git_failed', 'the repository has unresolved conflicts', {
      hint: 'Resolve the conflicts and stage the results before committing.',
      details: { conflicted: shown(conflicted.map((e) => e.path)) },
    });
  }
  if (pathKeys === null) {
    const needs = entries
      .filter((e) => e.kind === 'changed' && e.x !== '.')
      .map((e) => ({ path: e.path, staged: true, unstaged: false }));
    if (needs.length === 0) {
      throw new AppError('nothing_to_commit', 'nothing is staged', {
        hint: 'Stage changes first, or pass paths to commit exactly those files.',
      });
    }
    return needs;
  }
  const needs = entries.map((e) => ({
    path: e.path,
    staged: e.kind === 'changed' && e.x !== '.',
    unstaged: e.kind === 'untracked' || e.y !== '.',
  }));
  const idle = pathKeys.filter((p) => !needs.some((n) => keyIsUnder(p, n.path)));
  if (idle.length > 0) {
    throw new AppError('nothing_to_commit', `no changes under ${shown(idle).join(', ')}`, {
      hint: 'Pass only paths with changes (git_status lists them); ignored files are never committed.',
      details: { paths: shown(idle) },
    });
  }
  return needs;
}

/** A `paths` commit takes work-tree content through git: refuse files whose configured filter would be skipped. */
async function checkFilters(run: ToolRun, keys: PathKey[]): Promise<void> {
  if (run.safety.drivers.length === 0 || keys.length === 0) return;
  const attrs = await checkAttrs(run.repo.top, keys, ['filter']);
  const blocked: { path: string; filter: string }[] = [];
  for (const key of keys) {
    const value = attrs.get(key)?.filter;
    if (value && run.safety.drivers.includes(value)) blocked.push({ path: displayPath(key).path, filter: value });
  }
  if (blocked.length > 0) {
    throw new AppError(
      'filter_required',
      `${blocked.length} file(s) need the "${blocked[0]!.filter}" filter driver, which the tools never run`,
      {
        hint: 'Commit these files with git yourself, where the filter (for example Git LFS) runs.',
        details: { files: blocked },
      },
    );
  }
}

async function buildPlan(
  run: ToolRun,
  message: string,
  needs: GateNeed[],
  pathCommit: boolean,
  head: string | null,
): Promise<CommitPlan> {
  const top = run.repo.top;
  const format = await objectFormat(top);
  const base = head ?? emptyTree(format);
  const keys = needs.map((n) => n.path);
  const root = safeRoot(top);
  const res = await runGit({
    cwd: top,
    args: [
      'diff',
      '--no-ext-diff',
      '--no-textconv',
      '--no-renames',
      '--numstat',
      '--raw',
      '-z',
      ...(pathCommit ? [base] : ['--cached', base]),
      '--',
      ...keys.map(literalPathspec),
    ],
    config: run.safety.config,
    timeoutMs: 30_000,
  });
  const parsed = parseDiffOutput(res.stdout, res.stdoutTruncated);
  const byPath = new Map(parsed.entries.map((e) => [e.path, e]));
  const untracked = keys.filter((key) => !byPath.has(key));
  const attrs = untracked.length > 0 ? await checkAttrs(top, untracked, ['binary', 'diff']) : new Map();
  const files = keys.map((key) => {
    const e = byPath.get(key);
    if (e)
      return {
        path: displayPath(key).path,
        additions: e.additions,
        deletions: e.deletions,
        new: e.status === 'A',
        binary: e.binary,
      };
    // Untracked: not in the diff against HEAD; count its lines unless git would call it binary.
    const entry = readWorktreeEntry(root, key, format);
    const text = entry.bytes !== null && entry.mode !== '120000';
    const binary = text && (looksBinary(entry.bytes!) || isBinaryByAttrs(attrs.get(key)));
    const additions = text && !binary ? countLines(entry.bytes!) : 0;
    return { path: displayPath(key).path, additions, deletions: 0, new: true, binary };
  });
  return { repository: run.repo.label, message, commit: pathCommit ? 'paths' : 'staged', files };
}

/** What the gate compares now: HEAD, the index hash, and each needed path read from the work tree. */
interface GateSnapshot {
  head: string | null;
  indexHash: string;
  entries: Map<PathKey, WorktreeEntry>;
}

/** Reads the state the gate compares; `env` may point at a private copy of the index. */
async function snapshot(run: ToolRun, needs: GateNeed[], env: Record<string, string> = {}): Promise<GateSnapshot> {
  const top = run.repo.top;
  const state = await readRepoState(top, env);
  const format = await objectFormat(top);
  const root = safeRoot(top);
  const rule = await readModeRule(top, run.safety.config);
  const entries = new Map<PathKey, WorktreeEntry>();
  for (const n of needs) if (!entries.has(n.path)) entries.set(n.path, readWorktreeEntry(root, n.path, format, rule));
  return { ...state, entries };
}

function checkGate(run: ToolRun, needs: GateNeed[], pathCommit: boolean, now: GateSnapshot): void {
  const top = run.repo.top;
  const fingerprints = new Map([...now.entries].map(([k, e]) => [k, e.fingerprint]));
  const verdict = evaluateGate(run.ctx.session.reviewsFor(top), needs, { ...now, fingerprints }, pathCommit);
  const what = pathCommit ? 'git_diff (or git_diff with path)' : 'git_diff with staged: true';
  if (verdict.stale.length > 0) {
    throw new AppError('stale_review', `changed since the review: ${shown(verdict.stale).join(', ')}`, {
      hint: `The index, HEAD or these files (content or mode) changed after git_diff showed them. Run ${what} again, check it, then commit.`,
      details: { files: shown(verdict.stale), uncovered: shown(verdict.uncovered) },
    });
  }
  if (verdict.uncovered.length > 0) {
    throw new AppError('review_required', `not reviewed: ${shown(verdict.uncovered).join(', ')}`, {
      hint: `Run ${what} in this session and read every file it shows (follow next_offset; files in omitted are not reviewed), then commit.`,
      details: { files: shown(verdict.uncovered) },
    });
  }
}

function mapCommitFailure(err: unknown, gitDir: string): never {
  if (err instanceof AppError && err.code === 'git_failed') {
    const said = err.details?.stderr;
    const stderr = typeof said === 'string' ? said : '';
    if (/index\.lock/.test(stderr)) throw lockError(gitDir);
    if (/nothing to commit|no changes added to commit/i.test(stderr))
      throw new AppError('nothing_to_commit', 'nothing to commit');
    if (/partial commit during a merge/i.test(stderr)) {
      throw new AppError(
        'git_failed',
        'a merge is in progress: commit the whole staged set (no paths) to conclude it',
        {
          hint: 'Stage the resolved files, review them with git_diff staged: true, then call git_commit without paths.',
          details: err.details ?? {},
        },
      );
    }
  }
  throw err;
}

export async function gitCommit(run: ToolRun, input: GitCommitArgs): Promise<GitCommitOutput> {
  const top = run.repo.top;
  const pathKeys = input.paths === undefined ? null : [...new Set(input.paths.map((p) => resolveToolPath(top, p)))];
  if (pathKeys !== null && pathKeys.includes('')) {
    throw new AppError('invalid_input', 'paths names the whole repository', {
      hint: 'Name the files (or folders) to commit; commit the staged set by leaving paths out.',
    });
  }
  if (fs.existsSync(path.join(run.repo.gitDir, 'index.lock'))) throw lockError(run.repo.gitDir);

  const needs = (await commitNeeds(run, pathKeys)).sort((a, b) => comparePathKeys(a.path, b.path));
  const pathCommit = pathKeys !== null;
  if (pathCommit) {
    if (fs.existsSync(path.join(run.repo.gitDir, 'MERGE_HEAD'))) mapCommitFailure(partialMergeError(), run.repo.gitDir);
    await checkFilters(
      run,
      needs.map((n) => n.path),
    );
  }
  checkGate(run, needs, pathCommit, await snapshot(run, needs));
  const identity = await resolveIdentity(top, run.ctx.env ?? process.env, run.ctx.homeDir ?? os.homedir());

  if (run.ctx.approve) {
    const state = await readRepoState(top);
    await run.ctx.approve(await buildPlan(run, input.message, needs, pathCommit, state.head), { root: top });
  }

  // The last check compares exactly what is committed: the bytes and modes read here for a
  // `paths` commit, a private copy of the index for a staged commit. A write racing the commit
  // changes the work tree or the real index, never what this check saw.
  const config = [...run.safety.config, ...COMMIT_CONFIG];
  const env = identityEnv(identity);
  try {
    if (pathCommit) {
      const now = await snapshot(run, needs);
      checkGate(run, needs, pathCommit, now);
      const { records } = await buildPathsCommit({
        top,
        head: now.head,
        entries: now.entries,
        message: input.message,
        format: await objectFormat(top),
        config,
        env,
      });
      await syncIndex(top, records, config);
    } else {
      await withPrivateIndex(run.repo.gitDir, async (indexEnv) => {
        checkGate(run, needs, pathCommit, await snapshot(run, needs, indexEnv));
        const commitArgs = ['commit', '--no-verify', '--no-gpg-sign', '--no-edit', '--untracked-files=no', '-F', '-'];
        await runGit({
          cwd: top,
          args: commitArgs,
          input: input.message,
          config,
          env: { ...env, ...indexEnv },
          timeoutMs: 60_000,
        });
      });
    }
  } catch (err) {
    mapCommitFailure(err, run.repo.gitDir);
  }
  run.ctx.session.consume(top);
  return describeCommit(run);
}

function partialMergeError(): AppError {
  return new AppError('git_failed', 'cannot do a partial commit during a merge', {
    details: { stderr: 'cannot do a partial commit during a merge.' },
  });
}

/**
 * Brings the user's index in line with a `paths` commit (as `git commit --only` does), so those
 * paths no longer show as staged reversals. The commit has landed either way; a failure here is
 * logged and left for the user's next `git add`.
 */
async function syncIndex(top: string, records: Buffer, config: readonly GitConfigPair[]): Promise<void> {
  try {
    await runGit({ cwd: top, args: ['update-index', '-z', '--index-info'], input: records, config });
  } catch (err) {
    process.stderr.write(
      `rundiff: committed, but the index could not be updated for the committed paths: ${(err as Error).message}\n`,
    );
  }
}

/** The new commit: its id, a one-line summary and its files with line counts (against its first parent). */
async function describeCommit(run: ToolRun): Promise<GitCommitOutput> {
  const top = run.repo.top;
  const res = await runGit({
    cwd: top,
    args: [
      'show',
      '--no-show-signature',
      '--no-color',
      '--format=%H%x00%s%x00',
      '-z',
      '--numstat',
      '--raw',
      '--no-ext-diff',
      '--no-textconv',
      '-M',
      '--diff-merges=first-parent',
      'HEAD',
    ],
    config: run.safety.config,
  });
  const out = res.stdout;
  const first = out.indexOf(0);
  const second = out.indexOf(0, first + 1);
  const hash = out.subarray(0, first).toString('utf8');
  const subject = out.subarray(first + 1, second).toString('utf8');
  let rest = out.subarray(second + 1);
  while (rest.length > 0 && (rest[0] === 0x0a || rest[0] === 0)) rest = rest.subarray(1);
  const parsed = parseDiffOutput(rest, false);
  const files = parsed.entries.map((e) => ({
    path: displayPath(e.path).path,
    additions: e.additions,
    deletions: e.deletions,
  }));
  const branch = (
    await runGit({ cwd: top, args: ['symbolic-ref', '-q', '--short', 'HEAD'], okExitCodes: [0, 1] })
  ).stdout
    .toString('utf8')
    .trim();
  const adds = files.reduce((n, f) => n + f.additions, 0);
  const dels = files.reduce((n, f) => n + f.deletions, 0);
  const where = `${branch === '' ? 'detached HEAD' : branch} ${hash.slice(0, 7)}`;
  const summary = `[${where}] ${subject} (${files.length} file${files.length === 1 ? '' : 's'} changed, +${adds} -${dels})`;
  return { hash, summary, files };
}

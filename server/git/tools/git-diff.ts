import type { GitDiffOutput } from '../../../shared/index.ts';
import { AppError } from '../../errors.ts';
import type { PathKey } from '../../paths/index.ts';
import type { ToolRun } from './context.ts';
import { collectDiff, pageOf, toDiffFile, type DocFile } from './diff-document.ts';
import { pathspecArgs, resolveToolPath } from './paths.ts';
import { mergeBase, resolveSpec } from './refs.ts';
import { objectFormat, readModeRule, readRepoState, worktreeFingerprint, type ModeRule } from './repo-state.ts';
import type { ReviewKind } from './review.ts';

/**
 * `git_diff`: by default the work tree against the index, untracked files included as new files;
 * `staged` = HEAD against the index; `spec` = a ref (against the work tree, or the index when
 * staged) or `A..B` / `A...B`. The file list is always complete; the patch is paged by bytes.
 * A successful diff of what a commit could include is recorded as a review for the commit gate.
 */

export const DEFAULT_DIFF_MAX_BYTES = 64 * 1024;
export const MAX_DIFF_MAX_BYTES = 1024 * 1024;

export interface GitDiffArgs {
  staged?: boolean | undefined;
  path?: string | undefined;
  spec?: string | undefined;
  offset?: number | undefined;
  max_bytes?: number | undefined;
}

interface DiffPlan {
  revArgs: string[];
  untracked: boolean;
  worktreeSide: boolean;
  /** What the diff shows, when a commit could include it; null for history. */
  review: ReviewKind | null;
  /** The resolved spec for the review key (object ids, not names). */
  specKey: string | null;
}

async function planDiff(run: ToolRun, input: GitDiffArgs, head: string | null): Promise<DiffPlan> {
  const staged = input.staged === true;
  if (input.spec === undefined) {
    return staged
      ? { revArgs: ['--cached'], untracked: false, worktreeSide: false, review: 'staged', specKey: null }
      : { revArgs: [], untracked: true, worktreeSide: true, review: 'worktree', specKey: null };
  }
  const spec = await resolveSpec(run.repo.top, input.spec);
  if (spec.kind === 'ref') {
    const isHead = spec.oid === head;
    if (staged)
      return {
        revArgs: ['--cached', spec.oid],
        untracked: false,
        worktreeSide: false,
        review: isHead ? 'staged' : null,
        specKey: spec.oid,
      };
    return {
      revArgs: [spec.oid],
      untracked: true,
      worktreeSide: true,
      review: isHead ? 'head_worktree' : null,
      specKey: spec.oid,
    };
  }
  if (staged) {
    throw new AppError('invalid_input', 'staged cannot be combined with a range spec', {
      hint: 'A range compares two commits; drop staged, or give a single ref to compare with the index.',
      details: { spec: input.spec },
    });
  }
  const from = spec.symmetric ? await mergeBase(run.repo.top, spec.from, spec.to) : spec.from;
  return {
    revArgs: [from, spec.to],
    untracked: false,
    worktreeSide: false,
    review: null,
    specKey: `${from}..${spec.to}`,
  };
}

export async function gitDiff(run: ToolRun, input: GitDiffArgs): Promise<GitDiffOutput> {
  const top = run.repo.top;
  const offset = input.offset ?? 0;
  const maxBytes = input.max_bytes ?? DEFAULT_DIFF_MAX_BYTES;
  const pathKey = input.path === undefined ? null : resolveToolPath(top, input.path);
  // The state is read before the diff: a change racing the diff then shows as stale, never as reviewed.
  const state = await readRepoState(top);
  const plan = await planDiff(run, input, state.head);
  const format = await objectFormat(top);
  const modeRule = await readModeRule(top, run.safety.config);
  const doc = await collectDiff({
    top,
    config: run.safety.config,
    revArgs: plan.revArgs,
    pathspec: pathspecArgs(pathKey),
    untracked: plan.untracked,
    worktreeSide: plan.worktreeSide,
    format,
    gitDir: run.repo.gitDir,
    modeRule,
  });
  const page = pageOf(doc, offset, maxBytes);

  if (plan.review !== null) {
    const argsKey = JSON.stringify([plan.review, input.staged === true, pathKey, plan.specKey]);
    const session = run.ctx.session;
    let review = offset === 0 ? null : session.continuation(top, argsKey, offset, doc.hash);
    if (review && (review.head !== state.head || review.indexHash !== state.indexHash)) review = null;
    if (offset === 0) {
      review = {
        kind: plan.review,
        argsKey,
        head: state.head,
        indexHash: state.indexHash,
        textHash: doc.hash,
        nextOffset: null,
        covered: new Map(),
      };
      session.startReview(top, review);
    }
    if (review) {
      review.nextOffset = page.cut.next;
      for (const f of page.completed) coverFile(review.covered, top, f, plan.worktreeSide, format, modeRule);
    }
  }

  return {
    diff: page.diff,
    files_changed: doc.files.length,
    files: doc.files.map(toDiffFile),
    truncated: page.cut.next !== null || page.omitted.length > 0,
    omitted: page.omitted,
    next_offset: page.cut.next,
  };
}

/**
 * Marks a fully shown file covered with its current work-tree fingerprint. When the diff showed the
 * work tree, the fingerprint must equal what the stanza showed; a file edited while the diff ran is
 * left uncovered.
 */
function coverFile(
  covered: Map<PathKey, string>,
  top: string,
  f: DocFile,
  worktreeSide: boolean,
  format: 'sha1' | 'sha256',
  modeRule: ModeRule,
): void {
  for (const key of f.oldPath === null ? [f.path] : [f.path, f.oldPath]) {
    const now = worktreeFingerprint(top, key, format, modeRule);
    if (worktreeSide && key === f.path && f.shownWorktree !== null && f.shownWorktree !== now) continue;
    covered.set(key, now);
  }
}

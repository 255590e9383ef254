import { AppError } from '../../errors.ts';
import { runGit } from '../runner.ts';

/**
 * A ref never reaches git as an option: text with a leading `-` is refused, the rest is verified with
 * `rev-parse --verify --end-of-options <ref>^{commit}` and only the resulting object id is passed on.
 */

function badRef(ref: string, why: string): AppError {
  return new AppError('invalid_ref', `ref ${JSON.stringify(ref)} ${why}`, {
    hint: 'Give a branch, tag, commit id or an expression such as HEAD~2.',
    details: { ref },
  });
}

export function checkRefText(ref: string): void {
  if (ref === '') throw badRef(ref, 'is empty');
  if (ref.startsWith('-')) throw badRef(ref, 'starts with "-"');
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(ref)) throw badRef(ref, 'contains control characters');
}

/** The commit id `ref` names, or `invalid_ref`. */
export async function resolveCommit(top: string, ref: string): Promise<string> {
  checkRefText(ref);
  const res = await runGit({
    cwd: top,
    args: ['rev-parse', '--verify', '-q', '--end-of-options', `${ref}^{commit}`],
    okExitCodes: [0, 1, 128],
  });
  const oid = res.stdout.toString('utf8').trim();
  if (res.exitCode !== 0 || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(oid)) throw badRef(ref, 'does not name a commit');
  return oid;
}

export type ResolvedSpec =
  { kind: 'ref'; oid: string } | { kind: 'range'; from: string; to: string; symmetric: boolean; text: string };

/** `A..B` / `A...B` (an empty side means HEAD) or a single ref, each side verified. */
export async function resolveSpec(top: string, spec: string): Promise<ResolvedSpec> {
  const three = spec.indexOf('...');
  const two = three === -1 ? spec.indexOf('..') : -1;
  if (three === -1 && two === -1) return { kind: 'ref', oid: await resolveCommit(top, spec) };
  const at = three !== -1 ? three : two;
  const left = spec.slice(0, at);
  const right = spec.slice(at + (three !== -1 ? 3 : 2));
  if (left === '' && right === '') throw badRef(spec, 'has no side');
  const from = await resolveCommit(top, left === '' ? 'HEAD' : left);
  const to = await resolveCommit(top, right === '' ? 'HEAD' : right);
  return { kind: 'range', from, to, symmetric: three !== -1, text: spec };
}

/** The merge base of two commits (for `A...B` diffs), or `invalid_ref` when they share none. */
export async function mergeBase(top: string, a: string, b: string): Promise<string> {
  const res = await runGit({ cwd: top, args: ['merge-base', a, b], okExitCodes: [0, 1] });
  const oid = res.stdout.toString('utf8').trim();
  if (res.exitCode !== 0 || oid === '') throw badRef(`${a}...${b}`, 'has no merge base');
  return oid;
}

/** The empty tree's id (what a root commit is compared with). */
export function emptyTree(format: 'sha1' | 'sha256'): string {
  return format === 'sha256'
    ? '6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321'
    : '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
}

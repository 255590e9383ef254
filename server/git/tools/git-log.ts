import type { GitCommitInfo, GitLogOutput } from '../../../shared/index.ts';
import { AppError } from '../../errors.ts';
import { runGit } from '../runner.ts';
import type { ToolRun } from './context.ts';
import { pathspecArgs, resolveToolPath } from './paths.ts';
import { resolveSpec } from './refs.ts';
import { readHeadOid } from './repo-state.ts';

/** `git_log`: commits newest first, fields separated by NUL so any subject or name survives. */

export const DEFAULT_LOG_LIMIT = 20;
export const MAX_LOG_LIMIT = 200;

/** The fields of one commit, NUL-separated (a subject is one line; names and emails hold no NUL). */
export const COMMIT_FORMAT = '%H%x00%P%x00%an%x00%ae%x00%aI%x00%s';
const FIELDS = 6;

export function parseCommitFields(fields: readonly string[]): GitCommitInfo {
  const [hash = '', parents = '', name = '', email = '', date = '', subject = ''] = fields;
  return {
    hash,
    parents: parents === '' ? [] : parents.split(' '),
    author_name: name,
    author_email: email,
    date,
    subject,
  };
}

/** Parses `git log -z --format=COMMIT_FORMAT`: NUL between fields and between commits. */
export function parseLog(buf: Buffer): GitCommitInfo[] {
  const text = buf.toString('utf8');
  if (text === '') return [];
  const parts = text.split('\0');
  const commits: GitCommitInfo[] = [];
  for (let i = 0; i + FIELDS <= parts.length; i += FIELDS) {
    // A trailing separator leaves one empty element; a commit always has a hash.
    if (parts[i] === '') break;
    commits.push(parseCommitFields(parts.slice(i, i + FIELDS)));
  }
  return commits;
}

export interface GitLogArgs {
  range?: string | undefined;
  path?: string | undefined;
  limit?: number | undefined;
}

export async function gitLog(run: ToolRun, input: GitLogArgs): Promise<GitLogOutput> {
  const top = run.repo.top;
  const limit = input.limit ?? DEFAULT_LOG_LIMIT;
  const pathKey = input.path === undefined ? null : resolveToolPath(top, input.path);
  let revs: string[];
  if (input.range === undefined) {
    const head = await readHeadOid(top);
    if (head === null) return { commits: [] }; // an unborn branch has no history yet
    revs = [head];
  } else {
    const spec = await resolveSpec(top, input.range);
    if (spec.kind === 'ref') revs = [spec.oid];
    else revs = spec.symmetric ? [`${spec.from}...${spec.to}`] : [spec.to, `^${spec.from}`];
  }
  if (revs.some((r) => r.startsWith('-'))) throw new AppError('invalid_ref', 'ref starts with "-"');
  const res = await runGit({
    cwd: top,
    args: [
      'log',
      '-z',
      `--format=${COMMIT_FORMAT}`,
      `--max-count=${limit}`,
      '--no-show-signature',
      '--no-color',
      ...revs,
      '--',
      ...pathspecArgs(pathKey),
    ],
    config: run.safety.config,
    timeoutMs: 30_000,
  });
  return { commits: parseLog(res.stdout) };
}

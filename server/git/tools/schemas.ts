import { z } from 'zod';
import { DEFAULT_LOG_LIMIT, MAX_LOG_LIMIT } from './git-log.ts';
import { DEFAULT_DIFF_MAX_BYTES, MAX_DIFF_MAX_BYTES } from './git-diff.ts';

/**
 * Zod schemas of every tool's input (validated inside the handlers, so a bad input is an
 * `invalid_input` result) and output (published to MCP clients as output schemas). Unknown fields
 * are refused: a misspelt option must not silently mean the default.
 */

const repository = z
  .string()
  .min(1)
  .max(4096)
  .describe('Which repository: a label, a root path or a unique folder name. Default: the first workspace.')
  .optional();

const pathArg = z.string().min(1).max(4096);

export const gitStatusInput = z.strictObject({ repository });

export const gitDiffInput = z.strictObject({
  repository,
  staged: z
    .boolean()
    .describe('Show the staged changes (HEAD against the index) instead of the work tree against the index.')
    .optional(),
  path: pathArg.describe('Only this file or folder (relative to the repository top level).').optional(),
  spec: z
    .string()
    .min(1)
    .max(1024)
    .describe('A ref (compared with the work tree, or the index when staged) or a range A..B / A...B.')
    .optional(),
  offset: z.number().int().min(0).describe('Byte offset of the page: the next_offset of the previous page.').optional(),
  max_bytes: z
    .number()
    .int()
    .min(1)
    .max(MAX_DIFF_MAX_BYTES)
    .describe(`Patch bytes in this page. Default ${DEFAULT_DIFF_MAX_BYTES}, max ${MAX_DIFF_MAX_BYTES}.`)
    .optional(),
});

export const gitLogInput = z.strictObject({
  repository,
  range: z.string().min(1).max(1024).describe('A ref or a range A..B / A...B. Default HEAD.').optional(),
  path: pathArg.describe('Only commits touching this file or folder.').optional(),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_LOG_LIMIT)
    .describe(`Commits to return. Default ${DEFAULT_LOG_LIMIT}, max ${MAX_LOG_LIMIT}.`)
    .optional(),
});

export const gitShowInput = z.strictObject({
  repository,
  ref: z.string().min(1).max(1024).describe('The commit to show (branch, tag, id, HEAD~1, ...).'),
  path: pathArg.describe('Only this file or folder.').optional(),
});

export const gitBranchInput = z.strictObject({ repository });

export const gitCommitInput = z.strictObject({
  repository,
  message: z
    .string()
    .max(65_536)
    .refine((m) => m.trim() !== '', 'message must not be empty')
    .refine((m) => !m.includes('\0'), 'message must not contain NUL')
    .describe('The commit message (first line = subject).'),
  paths: z
    .array(pathArg)
    .min(1)
    .max(1000)
    .describe('Commit exactly the changes under these paths (staged for you). Default: commit what is staged.')
    .optional(),
  session_id: z
    .string()
    .refine((id) => {
      const n = [...id].length;
      return n >= 1 && n <= 200 && !/[\p{Cc}\p{Cs}\p{Zl}\p{Zp}]/u.test(id);
    }, 'must be 1-200 printable characters')
    .describe(
      'The rundiff session this commit belongs to: the approval prompt names it and an approved commit joins its timeline. Default: the one session with a run in progress in this repository, if there is exactly one.',
    )
    .optional(),
});

const letter = z.enum(['.', 'M', 'A', 'D', 'R', 'C', 'T', 'U', '?']);

export const gitStatusOutput = z.object({
  branch: z.string().nullable(),
  upstream: z.string().nullable(),
  ahead: z.number().int(),
  behind: z.number().int(),
  detached: z.boolean(),
  unborn: z.boolean(),
  in_progress: z.string().nullable(),
  clean: z.boolean(),
  staged: z.array(z.string()),
  unstaged: z.array(z.string()),
  untracked: z.array(z.string()),
  conflicted: z.array(z.string()),
  files: z.array(
    z.object({
      path: z.string(),
      old_path: z.string().nullable(),
      index: letter,
      worktree: letter,
      path_base64: z.string().optional(),
    }),
  ),
});

const diffFile = z.object({
  path: z.string(),
  old_path: z.string().nullable(),
  additions: z.number().int(),
  deletions: z.number().int(),
  binary: z.boolean(),
  path_base64: z.string().optional(),
  old_path_base64: z.string().optional(),
});

export const gitDiffOutput = z.object({
  diff: z.string(),
  files_changed: z.number().int(),
  files: z.array(diffFile),
  truncated: z.boolean(),
  omitted: z.array(
    z.object({
      path: z.string(),
      reason: z.enum(['budget', 'too_large', 'unreadable', 'nested_repository']),
      path_base64: z.string().optional(),
    }),
  ),
  next_offset: z.number().int().nullable(),
});

const commitInfo = z.object({
  hash: z.string(),
  parents: z.array(z.string()),
  author_name: z.string(),
  author_email: z.string(),
  date: z.string(),
  subject: z.string(),
});

export const gitLogOutput = z.object({ commits: z.array(commitInfo) });

export const gitShowOutput = z.object({
  commit: commitInfo.extend({ body: z.string() }),
  files: z.array(diffFile),
  diff: z.string(),
  truncated: z.boolean(),
});

export const gitBranchOutput = z.object({
  current: z.string().nullable(),
  detached: z.boolean(),
  branches: z.array(z.object({ name: z.string(), upstream: z.string().nullable() })),
});

export const gitCommitOutput = z.object({
  hash: z.string(),
  summary: z.string(),
  files: z.array(z.object({ path: z.string(), additions: z.number().int(), deletions: z.number().int() })),
});

import { z } from 'zod';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { RevertRequest, RevertResponse } from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import { invalidInput } from '../git/index.ts';
import { toolListing } from './mcp-listing.ts';
import type { RemoteServer } from './mcp-remote.ts';
import { changeIdOf, changeUrlOf, fileIdsOf, hunkHeadersOf, type GetJson } from './revert-target.ts';

/**
 * `revert_changes` of `rundiff mcp --server`: undoes what a run or tool call changed (all of it,
 * some files, or some hunks of one file) through the server's revert route, as `rundiff revert`
 * does. All or nothing unless `partial`; `dry_run` answers the plan and writes nothing.
 */

export const revertChangesInput = z.strictObject({
  session_id: z.string().min(1).max(200),
  change: z
    .string()
    .min(1)
    .max(300)
    .describe(
      'run:<run id>, tool:<tool call id>, or a bare run id; a short id as the timeline shows it (run:cc3e822d) will do',
    ),
  paths: z.array(z.string().min(1).max(4096)).min(1).max(1000).optional().describe('only these files of the change'),
  hunks: z
    .array(z.number().int().min(1))
    .min(1)
    .max(1000)
    .optional()
    .describe("only these hunks (1 = the first) of the one path named in paths, as the file's patch shows them"),
  lines: z
    .array(z.number().int().min(1).max(100_000))
    .min(1)
    .max(100_000)
    .optional()
    .describe(
      'with exactly one hunk: undo only these lines of it (1 = the first line after its header); an unchosen + line stays, an unchosen - line stays removed',
    ),
  dry_run: z.boolean().optional().describe('answer the plan and the patch each file would get; write nothing'),
  partial: z.boolean().optional().describe('write the files that revert cleanly and leave the others'),
});

const record = z.record(z.string(), z.unknown());
const revertOutput = z.object({
  change_id: z.string(),
  dry_run: z.boolean(),
  files: z.array(record),
  applied_count: z.number(),
  conflict_count: z.number(),
  unavailable_count: z.number(),
  revert_run_id: z.string().nullable(),
  revert_change_id: z.string().nullable(),
  plan_id: z.string(),
});

export const REVERT_CHANGES_LISTING: Tool = toolListing({
  name: 'revert_changes',
  title: 'Revert changes',
  description:
    'Undoes what a rundiff run (or one tool call) changed: the whole change, some files (paths), or some hunks of one file (paths with one path, hunks by number), or some lines of one hunk (one hunk, lines by number). Files edited since are merged three ways, so later edits are kept; a file whose later edits conflict with the undo is not written. All or nothing: when any file cannot be reverted nothing is written and the error names each file (partial: true writes the clean ones). Use dry_run: true first to see the plan. The revert is recorded as a run of its own.',
  input: revertChangesInput,
  output: revertOutput,
  readOnly: false,
  destructive: true,
});

const failure = (err: AppError): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(err.toBody()) }],
  isError: true,
});

export async function callRevertChanges(remote: RemoteServer, args: unknown): Promise<CallToolResult> {
  const parsed = revertChangesInput.safeParse(args ?? {});
  if (!parsed.success) return failure(invalidInput(parsed.error));
  const input = parsed.data;
  try {
    const changeId = changeIdOf(input.change);
    const changeUrl = changeUrlOf(input.session_id, changeId);
    const get: GetJson = (p) => remote.getJson(p);
    const body: RevertRequest = {};
    if (input.dry_run !== undefined) body.dry_run = input.dry_run;
    if (input.partial !== undefined) body.partial = input.partial;
    if (input.paths) {
      const { ids, unknown } = await fileIdsOf(get, changeUrl, input.paths);
      if (unknown.length > 0)
        throw new AppError('not_found', `not changed by ${changeId}: ${unknown.join(', ')}`, {
          details: { paths: unknown },
        });
      if (input.hunks) {
        if (ids.length !== 1)
          throw new AppError('invalid_input', 'hunks are of one file: name exactly one path', {
            details: { field: 'paths' },
          });
        const found = await hunkHeadersOf(get, changeUrl, ids[0]!, input.hunks);
        if (!found.ok)
          throw new AppError(
            'not_found',
            `${input.paths[0]} has ${found.count} hunk(s) in ${changeId}, not ${found.missing}`,
          );
        body.hunks = found.headers.map((hunk) => ({ file_id: ids[0]!, hunk }));
        if (input.lines) {
          if (input.hunks.length !== 1)
            throw new AppError('invalid_input', 'lines are of one hunk: name exactly one hunk', {
              details: { field: 'hunks' },
            });
          body.hunks[0]!.lines = [...new Set(input.lines)].map((n) => n - 1);
        }
      } else if (input.lines) {
        throw new AppError('invalid_input', 'lines are of one hunk: name it in hunks', { details: { field: 'hunks' } });
      } else body.file_ids = ids;
    } else if (input.hunks || input.lines) {
      throw new AppError('invalid_input', 'hunks are of one file: name it in paths', { details: { field: 'paths' } });
    }
    const answer = await remote.postJson<RevertResponse>(`${changeUrl}/revert`, body, 'for revert_changes');
    return { content: [{ type: 'text', text: JSON.stringify(answer) }], structuredContent: { ...answer } };
  } catch (err) {
    if (err instanceof AppError) return failure(err);
    throw err;
  }
}

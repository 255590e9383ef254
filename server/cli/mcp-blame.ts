import { z } from 'zod';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { BlameOrigin, BlameResponse, Limits } from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import { invalidInput } from '../git/index.ts';
import { blameFile, resolveChangeId } from '../runs/index.ts';
import type { Store } from '../store/index.ts';
import { toolListing } from './mcp-listing.ts';
import type { RemoteServer } from './mcp-remote.ts';

/**
 * `blame_file` of `rundiff mcp`: which run and tool call last wrote each line of a file, as
 * `GET /api/hermes/sessions/:id/blame` answers it, through the server with `--server` or over the
 * database itself without one.
 */

export const blameFileInput = z.strictObject({
  session_id: z.string().min(1).max(200).describe('the recorded session'),
  path: z.string().min(1).max(4096).describe('the file, relative to the workspace'),
  at: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('a change id (or its short id): the file at the end of that change; default "current", the last one'),
});

const origin = z.object({
  kind: z.enum(['tool_call', 'run', 'outside', 'before_runs', 'not_kept', 'truncated']),
  run_id: z.string().nullable(),
  tool_call_id: z.string().nullable(),
  change_id: z.string().nullable(),
  run_title: z.string().nullable(),
  prompt: z.string().nullable(),
  agent: z.string().nullable(),
  tool_name: z.string().nullable(),
  at: z.number().nullable(),
  from: z.number().nullable(),
  to: z.number().nullable(),
});
const blameFileOutput = z.object({
  session_id: z.string(),
  path: z.string(),
  at_change_id: z.string().nullable(),
  exists: z.boolean(),
  origins: z.array(origin),
  lines: z.array(z.object({ line: z.number(), text: z.string(), origin: z.number() })),
  changes_walked: z.number(),
  truncated: z.boolean(),
  diff_gave_up: z.boolean(),
});

export const BLAME_FILE_LISTING: Tool = toolListing({
  name: 'blame_file',
  title: 'Which run wrote each line',
  description:
    "Attributes each line of a file, at the end of a recorded change (default: the session's last), to the run and tool call that last wrote it (with the run's title, prompt, agent and time), from rundiff's kept contents of the session's changes. Where the chain breaks a line says so: before_runs (there before the first recorded run), outside (edited outside rundiff between two runs, with the time window), not_kept (a content on the way was not kept), truncated (older than the changes walked).",
  input: blameFileInput,
  output: blameFileOutput,
  readOnly: true,
  idempotent: true,
});

/** The origin of a line as a short label. */
function label(o: BlameOrigin): string {
  const run = o.run_title ?? (o.run_id !== null ? `run ${o.run_id}` : '');
  switch (o.kind) {
    case 'tool_call':
      return `${run} · ${o.tool_name ?? 'tool'} ${o.tool_call_id ?? ''}`.trim();
    case 'run':
      return run;
    case 'outside':
      return `outside rundiff (before ${run})`;
    case 'before_runs':
      return 'before any recorded run';
    case 'not_kept':
      return `contents not kept (in the state ${run} left)`;
    case 'truncated':
      return 'older than the changes walked';
  }
}

/** One readable line per run of lines sharing an origin: `12-18  label`. */
export function blameText(b: BlameResponse): string {
  if (!b.exists) return `${b.path} did not exist at that point.`;
  const out: string[] = [];
  for (let i = 0; i < b.lines.length;) {
    let j = i;
    while (j + 1 < b.lines.length && b.lines[j + 1]!.origin === b.lines[i]!.origin) j++;
    const span = i === j ? `${i + 1}` : `${i + 1}-${j + 1}`;
    out.push(`${span}  ${label(b.origins[b.lines[i]!.origin]!)}`);
    i = j + 1;
  }
  if (b.truncated) out.push(`Only the newest ${b.changes_walked} changes of the file were walked.`);
  return out.length === 0 ? `${b.path} is empty.` : out.join('\n');
}

const failure = (err: AppError): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(err.toBody()) }],
  isError: true,
});

export async function callBlameFile(
  from: { remote: RemoteServer } | { store: Store; limits: Readonly<Limits> },
  args: unknown,
): Promise<CallToolResult> {
  const parsed = blameFileInput.safeParse(args ?? {});
  if (!parsed.success) return failure(invalidInput(parsed.error));
  const { session_id, path, at } = parsed.data;
  try {
    let answer: BlameResponse;
    if ('remote' in from) {
      const params = new URLSearchParams({ path });
      if (at !== undefined) params.set('at', at);
      const got = await from.remote.getJson<{ blame: BlameResponse }>(
        `/api/hermes/sessions/${encodeURIComponent(session_id)}/blame?${params.toString()}`,
      );
      answer = got.blame;
    } else {
      const change = at === undefined || at === 'current' ? null : await resolveChangeId(from.store, session_id, at);
      answer = await blameFile(from.store, session_id, path, change, from.limits);
    }
    return { content: [{ type: 'text', text: blameText(answer) }], structuredContent: { ...answer } };
  } catch (err) {
    if (err instanceof AppError) return failure(err);
    throw err;
  }
}

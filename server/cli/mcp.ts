import fs from 'node:fs';
import path from 'node:path';
// The low-level server: McpServer validates inputs itself and answers a bad one with plain text,
// while the contract wants every failure, validation included, as the JSON error result.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { resolveConfig } from '../config.ts';
import { AppError } from '../errors.ts';
import { VERSION } from '../version.ts';
import {
  callTool,
  createWorkspaceCatalog,
  findTool,
  GIT_TOOLS,
  ToolSession,
  type ToolCallResult,
  type ToolContext,
  type ToolDefinition,
} from '../git/index.ts';
import { runChangesInput, runChangesOutput, runChangesText } from '../run-changes/index.ts';
import { openStoreFrom, type Store, type StoreLocation } from '../store/index.ts';
import { argumentsText, commitOf, createCallLog, type CallLog } from '../tools-log/index.ts';
import type { GitToolName, RunChangesOutput } from '../../shared/index.ts';
import { parseArgs, UsageError } from './args.ts';
import { createRemote, type RemoteServer } from './mcp-remote.ts';
import { toolListing } from './mcp-listing.ts';
import { createReviewTools } from './mcp-review.ts';
import { callRevertChanges, REVERT_CHANGES_LISTING } from './mcp-revert.ts';
import { callSearchHistory, SEARCH_HISTORY_LISTING } from './mcp-search.ts';
import { BLAME_FILE_LISTING, callBlameFile } from './mcp-blame.ts';

const HELP = `usage: rundiff mcp [--workspace DIR]... [--server URL] [--db FILE]

An MCP server on stdio offering git tools for agents: git_status, git_diff, git_log, git_show,
git_branch and git_commit (refused unless a git_diff in the same connection showed the files);
review_comments (the code review a person sent from rundiff for sessions in these workspaces) and
review_comments_addressed.
stdout carries only protocol frames; logs go to stderr.

  --workspace DIR  a repository (or a folder holding repositories) the tools may use; repeat for
                   several. The first is the default. Default: the current folder.
  --server URL     a running rundiff server: it records the tool calls, asks a person to approve
                   commits when it runs with --require-commit-approval, and answers run_changes
                   and revert_changes (offered only with --server). Sends RUNDIFF_TOKEN when set.
  --db FILE        without --server: the database that records the tool calls
                   (default RUNDIFF_DB, else ~/.local/share/rundiff/rundiff.db)
`;

const say = (line: string) => process.stderr.write(`rundiff mcp: ${line}\n`);

/** A git tool as MCP lists it: its zod schemas and its read-only/destructive hints. */
export function mcpToolListing(tool: ToolDefinition): Tool {
  return toolListing({ ...tool, idempotent: tool.readOnly });
}

/**
 * A call's outcome as an MCP result: the output as structuredContent and JSON text; a failure as
 * `isError` with the JSON error body as text and no structuredContent (a client checks structured
 * content against the output schema, which an error body would fail).
 */
export function mcpResult(result: ToolCallResult, note?: string): CallToolResult {
  if (result.ok) {
    const text = JSON.stringify(result.output);
    return {
      content: [{ type: 'text', text }, ...(note === undefined ? [] : [{ type: 'text' as const, text: note }])],
      structuredContent: result.output as Record<string, unknown>,
    };
  }
  return { content: [{ type: 'text', text: JSON.stringify(result.error.toBody()) }], isError: true };
}

/** `run_changes` as MCP lists it (only with `--server`: the open runs' checkpoints live in the server). */
export const RUN_CHANGES_LISTING: Tool = toolListing({
  name: 'run_changes',
  title: 'Run changes',
  description:
    "What a rundiff run changed in its workspace: a finished run's stored change, or for a run still open (open: true) the files changed so far. Default run: the session's newest. tracking: false means the workspace was not watched (see reason). Files come a page at a time in path order (limit, default 50): files_total counts them all, and while next_cursor is not null, call again with cursor = next_cursor for the next page.",
  input: runChangesInput,
  output: runChangesOutput,
  readOnly: true,
});

/** The readable line of a run_changes answer (the server's answer, checked against the schema it lists). */
function runChangesNote(output: unknown, input: Record<string, unknown>): string | undefined {
  const parsed = runChangesOutput.safeParse(output);
  if (!parsed.success) return undefined;
  const cursor = typeof input.cursor === 'string' ? input.cursor : undefined;
  return runChangesText(parsed.data as unknown as RunChangesOutput, cursor);
}

/** Where calls are recorded without a server: the database, opened once; null (and said) when it cannot be. */
async function openLocalLog(where: StoreLocation): Promise<{ log: CallLog; store: Store } | null> {
  try {
    const store = await openStoreFrom(where);
    return { log: createCallLog(store), store };
  } catch (err) {
    say(`cannot record tool calls in ${where.dbPath}: ${(err as Error).message}`);
    return null;
  }
}

function checkWorkspaces(dirs: readonly string[], roots: readonly string[] | null): string[] {
  return dirs.map((dir) => {
    let real: string;
    try {
      real = fs.realpathSync(dir);
    } catch {
      throw new AppError('invalid_input', `--workspace ${dir} does not exist`);
    }
    if (!fs.statSync(real).isDirectory()) throw new AppError('invalid_input', `--workspace ${dir} is not a folder`);
    if (roots) {
      const inside = roots.some((r) => {
        const rel = path.relative(fs.existsSync(r) ? fs.realpathSync(r) : r, real);
        return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
      });
      if (!inside) throw new AppError('invalid_input', `--workspace ${dir} is outside RUNDIFF_WORKSPACE_ROOTS`);
    }
    return real;
  });
}

export async function run(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseArgs(argv, { values: ['server', 'db'], multi: ['workspace'], booleans: ['help'] });
  } catch (err) {
    if (err instanceof UsageError) {
      say(`${err.message}\n\n${HELP}`);
      return 2;
    }
    throw err;
  }
  if (args.booleans.has('help')) {
    process.stdout.write(HELP);
    return 0;
  }
  if (args.positional.length > 0) {
    say(`unexpected argument ${JSON.stringify(args.positional[0])}\n\n${HELP}`);
    return 2;
  }
  if (args.values.server !== undefined && !URL.canParse(args.values.server)) {
    say(`--server ${JSON.stringify(args.values.server)} is not a URL`);
    return 2;
  }
  const config = resolveConfig({ db: args.values.db });
  const workspaces = checkWorkspaces(args.multi.workspace ?? [process.cwd()], config.workspaceRoots);

  // stdout belongs to the protocol: anything printed by accident goes to stderr instead.
  console.log = console.error;
  console.info = console.error;

  const remote: RemoteServer | null =
    args.values.server !== undefined ? createRemote(args.values.server, config.token) : null;
  const local = remote ? null : await openLocalLog(config);

  const ctx: ToolContext = {
    session: new ToolSession(),
    repositories: createWorkspaceCatalog({ workspaces, workspaceRoots: config.workspaceRoots }),
  };

  /** Every call of an offered tool is recorded: through the server, or into the database. */
  const record = async (result: ToolCallResult, input: unknown, approvalId: string | null = null): Promise<void> => {
    const details = {
      arguments: argumentsText(input),
      commit: commitOf(result.tool, result.ok, result.ok ? result.output : null),
    };
    if (remote) {
      const failed = await remote.recordCall(result, {
        ...details,
        ...(approvalId === null ? {} : { approval_id: approvalId }),
      });
      if (failed) say(`could not record the call at ${remote.url}: ${failed.message}`);
      return;
    }
    try {
      await local?.log.record({
        tool: result.tool as GitToolName,
        repository: result.repository,
        ok: result.ok,
        error_code: result.ok ? null : result.error.code,
        duration_ms: result.duration_ms,
        created_at: Date.now(),
        ...details,
      });
    } catch (err) {
      say(`could not record the call: ${(err as Error).message}`);
    }
  };
  /** The MCP client's own name (`claude-code 1.2.3`), at most 200 printable characters; none when absent. */
  const clientName = (info: { name?: string; version?: string } | undefined): string | undefined => {
    const name = [info?.name, info?.version].filter(Boolean).join(' ');
    const clean = [...name]
      .filter((c) => c >= ' ' && c !== '\u007f')
      .join('')
      .slice(0, 200)
      .trim();
    return clean === '' ? undefined : clean;
  };
  const server = new Server(
    { name: 'rundiff', version: VERSION },
    {
      capabilities: { tools: {} },
      instructions:
        'Git tools for the workspace repositories. Check your work with git_status and git_diff; git_commit only commits files a git_diff in this connection showed (use staged: true for the staged set). review_comments returns the code review the user sent you through rundiff; mark what you addressed with review_comments_addressed. search_history finds earlier prompts, replies, commands and changed lines of every recorded session. blame_file tells which recorded run and tool call wrote each line of a file.',
    },
  );
  const reviewTools = createReviewTools({ workspaces, remote, store: local?.store ?? null });
  const offersReviews = remote !== null || local !== null;
  const listing = [
    ...GIT_TOOLS.map(mcpToolListing),
    ...(remote ? [RUN_CHANGES_LISTING, REVERT_CHANGES_LISTING] : []),
    ...(offersReviews ? reviewTools.listings : []),
    ...(offersReviews ? [SEARCH_HISTORY_LISTING, BLAME_FILE_LISTING] : []),
  ];
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    const input = request.params.arguments ?? {};
    if (offersReviews && reviewTools.handles(name)) {
      const answer = await reviewTools.call(name, input, clientName(server.getClientVersion()));
      say(`${name} ${answer.isError ? 'failed' : 'ok'}`);
      return answer;
    }
    if (name === SEARCH_HISTORY_LISTING.name && offersReviews) {
      const from = remote ? { remote } : { store: local!.store, limits: config.limits };
      const answer = await callSearchHistory(from, input);
      say(`${name} ${answer.isError ? 'failed' : 'ok'}`);
      return answer;
    }
    if (name === BLAME_FILE_LISTING.name && offersReviews) {
      const from = remote ? { remote } : { store: local!.store, limits: config.limits };
      const answer = await callBlameFile(from, input);
      say(`${name} ${answer.isError ? 'failed' : 'ok'}`);
      return answer;
    }
    if (name === REVERT_CHANGES_LISTING.name && remote) {
      const answer = await callRevertChanges(remote, input);
      say(`${name} ${answer.isError ? 'failed' : 'ok'}`);
      return answer;
    }
    let result: ToolCallResult;
    if (name === 'run_changes' && remote) {
      result = await remote.runChanges(input); // the server logs it
    } else {
      // With a server, a commit's plan goes to it first: it knows whether a person must approve.
      // The session the agent names (validated with the rest of the input before any plan) is shown
      // to that person; the approval id then puts the commit in that session's timeline.
      let approvalId: string | null = null;
      const sessionId = typeof input.session_id === 'string' ? input.session_id : undefined;
      const callCtx: ToolContext = remote
        ? {
            ...ctx,
            approve: async (plan, repo) => {
              const agent = clientName(server.getClientVersion());
              approvalId = await remote.approve(plan, extra.signal, { agent, sessionId, root: repo.root });
            },
          }
        : ctx;
      result = await callTool(name, input, callCtx);
      if (findTool(name)) await record(result, input, approvalId);
    }
    const outcome = result.ok ? 'ok' : result.error.code;
    say(`${result.tool} ${result.repository ?? '-'} ${outcome} ${result.duration_ms} ms`);
    return mcpResult(
      result,
      result.ok && result.tool === 'run_changes' ? runChangesNote(result.output, input) : undefined,
    );
  });

  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await server.connect(transport);
  say(
    `serving ${listing.length} tools for ${workspaces.join(', ')}; calls recorded ${remote ? `by ${remote.url}` : local ? `in ${config.dbPath}` : 'nowhere'}`,
  );
  await closed;
  await server.close().catch(() => undefined);
  await local?.store.close();
  return 0;
}

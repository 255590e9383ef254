// The low-level server: McpServer validates inputs itself and answers a bad one with plain text,
// while the contract wants every failure, validation included, as the JSON error result.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type JSONRPCMessage,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../config.ts';
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
import type { ServerIdentity, StdioFront } from './mcp-front.ts';
import { createRemote, type RemoteServer } from './mcp-remote.ts';
import { toolListing } from './mcp-listing.ts';
import { createReviewTools } from './mcp-review.ts';
import { callRevertChanges, REVERT_CHANGES_LISTING } from './mcp-revert.ts';
import { callSearchHistory, SEARCH_HISTORY_LISTING } from './mcp-search.ts';
import { BLAME_FILE_LISTING, callBlameFile } from './mcp-blame.ts';

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
async function openLocalLog(
  where: StoreLocation,
  say: (line: string) => void,
): Promise<{ log: CallLog; store: Store } | null> {
  try {
    const store = await openStoreFrom(where);
    return { log: createCallLog(store), store };
  } catch (err) {
    say(`cannot record tool calls in ${where.dbPath}: ${(err as Error).message}`);
    return null;
  }
}

export interface ServeToolsOptions {
  /** `--server URL`, when given. */
  server: string | undefined;
  config: Config;
  /** The checked `--workspace` folders, real paths, the default first. */
  workspaces: string[];
  front: StdioFront;
  /** Who the server says it is: what the front answered `initialize` with. */
  identity: ServerIdentity;
  say: (line: string) => void;
}

/**
 * What `rundiff mcp` serves once it has loaded, behind the stdio front (mcp-front.ts) that has
 * answered `initialize` already: the git tools, and with a server or a database the review, search
 * and run tools. Returns the exit code when the client goes away.
 */
export async function serveTools({
  server: serverUrl,
  config,
  workspaces,
  front,
  identity,
  say,
}: ServeToolsOptions): Promise<number> {
  const remote: RemoteServer | null = serverUrl !== undefined ? createRemote(serverUrl, config.token) : null;
  const local = remote ? null : await openLocalLog(config, say);

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
  const server = new Server(identity.info, {
    capabilities: identity.capabilities,
    instructions: identity.instructions,
  });
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

  const transport = new StdioServerTransport(front.input, front.output);
  // Requests read and not yet answered. At the end of input (a client that wrote its requests and
  // closed, `... | rundiff mcp`) they are answered before the server closes, not dropped.
  const unanswered = new Set<string | number>();
  let drained: (() => void) | null = null;
  transport.onmessage = (message) => {
    if ('method' in message && 'id' in message) unanswered.add(message.id);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message: JSONRPCMessage) => {
    await send(message);
    if (!('method' in message) && 'id' in message && message.id !== undefined) {
      unanswered.delete(message.id);
      if (unanswered.size === 0) drained?.();
    }
  };
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    front.input.once('end', () => {
      if (unanswered.size === 0) resolve();
      else drained = resolve;
    });
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

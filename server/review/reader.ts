import type { ReviewReader, RunSource } from '../../shared/index.ts';
import { isInside } from '../paths/index.ts';
import type { Store } from '../store/index.ts';

/** Workspaces whose MCP reader the server remembers (the least recently seen are forgotten first). */
export const MAX_MCP_WORKSPACES = 256;

/** What the hook side can say about an agent (the hook runtime; nothing here imports it). */
export interface HookAgents {
  /** rundiff has hooks for this agent (`claude-code`, `cursor`, ...). */
  knows(agent: string): boolean;
  /** Its hook answers can carry a review to it. */
  delivers(agent: string): boolean;
}

/** What is known of one session, gathered by `createReviewReaders`. */
export interface ReaderFacts {
  /** The agent whose hooks report the session (its id is `<agent>:<agent's session id>`), if any. */
  hookAgent: string | null;
  hookDelivers: boolean;
  /** An MCP client that fetched reviews for the session's workspace (seen by this server, or a delivery recorded by MCP). */
  mcp: { agent: string | null } | null;
  /** The sources of the session's runs. */
  sources: readonly RunSource[];
}

/** Pure: who reads a review sent from a session with these facts, in words. */
export function reviewReaderOf(f: ReaderFacts): ReviewReader {
  if (f.hookAgent !== null && f.hookDelivers) {
    return {
      channel: 'hook',
      agent: f.hookAgent,
      text: `${f.hookAgent} gets it through its rundiff hook with its next prompt (or, sent "now", when it ends its turn).`,
    };
  }
  if (f.mcp !== null) {
    const who = f.mcp.agent ?? 'An MCP client';
    return {
      channel: 'mcp',
      agent: f.mcp.agent,
      text: `${who} reads reviews of this workspace through rundiff mcp: it gets this one the next time it calls review_comments.`,
    };
  }
  const why =
    f.hookAgent !== null
      ? `${f.hookAgent}'s hooks cannot carry a review to it, and no MCP client has read reviews of this workspace.`
      : f.sources.length > 0 && f.sources.every((s) => s === 'run' || s === 'revert')
        ? 'This is a rundiff run session: no agent reads reviews from it.'
        : 'No agent hook or MCP client that takes reviews is known for this session.';
  return {
    channel: 'none',
    agent: f.hookAgent,
    text: `${why} Copy the review text and give it to your agent, or connect rundiff mcp (its review_comments tool).`,
  };
}

export interface ReviewReadersDeps {
  hooks: HookAgents;
  store: Pick<Store, 'sessions' | 'runs' | 'reviews'>;
  maxWorkspaces?: number;
}

/**
 * Who reads a session's reviews. MCP readers are remembered in memory, per workspace they asked
 * for, as they fetch (`mcpSeen`); a review of the session delivered by MCP counts too (it outlives a
 * restart, and an MCP server writing the database directly never asks this server).
 */
export function createReviewReaders(deps: ReviewReadersDeps) {
  const max = deps.maxWorkspaces ?? MAX_MCP_WORKSPACES;
  const mcp = new Map<string, { agent: string | null }>();
  return {
    /** An MCP client fetched (or addressed) reviews of these workspaces. */
    mcpSeen(workspaces: readonly string[], agent: string | null): void {
      for (const w of workspaces) {
        mcp.delete(w);
        mcp.set(w, { agent });
        while (mcp.size > max) mcp.delete(mcp.keys().next().value!);
      }
    },
    /** The session's reader; null for an unknown session. */
    async readerOf(sessionId: string): Promise<ReviewReader | null> {
      const s = await deps.store.sessions.get(sessionId);
      if (!s) return null;
      const sources = (await deps.store.runs.listRuns(sessionId)).map((r) => r.source);
      const colon = sessionId.indexOf(':');
      const prefix = colon > 0 ? sessionId.slice(0, colon) : null;
      const hookAgent = prefix !== null && deps.hooks.knows(prefix) ? prefix : null;
      let seen: { agent: string | null } | null = null;
      if (s.workspace !== null) for (const [w, v] of mcp) if (isInside(w, s.workspace)) seen = v;
      if (seen === null) {
        const byMcp = (await deps.store.reviews.reviews(sessionId)).reverse().find((r) => r.delivered_via === 'mcp');
        if (byMcp) seen = { agent: byMcp.delivered_to };
      }
      return reviewReaderOf({
        hookAgent,
        hookDelivers: hookAgent !== null && deps.hooks.delivers(hookAgent),
        mcp: seen,
        sources,
      });
    },
  };
}

export type ReviewReaders = ReturnType<typeof createReviewReaders>;

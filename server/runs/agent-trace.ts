import { randomUUID } from 'node:crypto';
import type { BlameOrigin, BlameResponse } from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import type { Store } from '../store/index.ts';
import { blameFile, rowsOf, type BlameLimits } from './blame.ts';

/**
 * A session's attributions as one Agent Trace record (the published spec "Agent Trace", version
 * 0.1.0, an RFC of January 2026): every file the session changed, at its current recorded state,
 * its lines grouped per run ("conversation") into 1-based ranges. A run's and a tool call's lines
 * are `ai`; an edit made outside rundiff between runs is `unknown` (a person or another program);
 * lines before any recorded run, and lines whose chain was broken, are left out, as the spec
 * attributes only what is known. rundiff's own fields go under `metadata["dev.rundiff"]`.
 */

/** Files one export attributes; the rest are named in `metadata["dev.rundiff"].omitted`. */
export const AGENT_TRACE_MAX_FILES = 500;
export const AGENT_TRACE_VERSION = '0.1.0';

export interface AgentTraceRange {
  start_line: number;
  end_line: number;
}
export interface AgentTraceConversation {
  contributor: { type: 'ai' | 'unknown' };
  ranges: AgentTraceRange[];
  metadata: Record<string, unknown>;
}
export interface AgentTraceRecord {
  version: string;
  id: string;
  timestamp: string;
  tool: { name: string; version: string };
  files: { path: string; conversations: AgentTraceConversation[] }[];
  metadata: Record<string, unknown>;
}

function conversationsOf(b: BlameResponse): AgentTraceConversation[] {
  const byKey = new Map<string, AgentTraceConversation>();
  const out: AgentTraceConversation[] = [];
  for (const l of b.lines) {
    const o: BlameOrigin = b.origins[l.origin]!;
    if (o.kind !== 'run' && o.kind !== 'tool_call' && o.kind !== 'outside') continue;
    const type = o.kind === 'outside' ? 'unknown' : 'ai';
    const key = `${type}\u0000${o.run_id ?? ''}`;
    let c = byKey.get(key);
    if (!c) {
      c = {
        contributor: { type },
        ranges: [],
        metadata: {
          'dev.rundiff': {
            kind: o.kind === 'outside' ? 'outside' : 'run',
            run_id: o.run_id,
            run_title: o.run_title,
            prompt: o.prompt,
            agent: o.agent,
            ...(o.kind === 'outside' ? { from: o.from, to: o.to } : {}),
          },
        },
      };
      byKey.set(key, c);
      out.push(c);
    }
    const last = c.ranges[c.ranges.length - 1];
    if (last && last.end_line === l.line - 1) last.end_line = l.line;
    else c.ranges.push({ start_line: l.line, end_line: l.line });
  }
  return out;
}

/** The Agent Trace record of a session's current recorded state; `not_found` for an unknown session. */
export async function agentTrace(
  store: Store,
  sessionId: string,
  limits: BlameLimits,
  tool: { name: string; version: string },
  now: () => Date = () => new Date(),
): Promise<AgentTraceRecord> {
  if (!(await store.sessions.exists(sessionId)))
    throw new AppError('not_found', `no session ${JSON.stringify(sessionId)}`);
  const paths = new Set<string>();
  for (const c of await store.changes.listForSession(sessionId)) {
    for (const r of await rowsOf(store, sessionId, c)) if (r.path_base64 === undefined) paths.add(r.path);
  }
  const sorted = [...paths].sort();
  const files: AgentTraceRecord['files'] = [];
  const omitted: { path: string; reason: string }[] = [];
  for (const p of sorted.slice(AGENT_TRACE_MAX_FILES)) omitted.push({ path: p, reason: 'max_files' });
  for (const p of sorted.slice(0, AGENT_TRACE_MAX_FILES)) {
    try {
      const b = await blameFile(store, sessionId, p, null, limits);
      if (!b.exists) continue;
      const conversations = conversationsOf(b);
      if (conversations.length > 0) files.push({ path: p, conversations });
      if (b.truncated) omitted.push({ path: p, reason: 'truncated' });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      omitted.push({ path: p, reason: err.code });
    }
  }
  return {
    version: AGENT_TRACE_VERSION,
    id: randomUUID(),
    timestamp: now().toISOString(),
    tool,
    files,
    metadata: { 'dev.rundiff': { session_id: sessionId, omitted } },
  };
}

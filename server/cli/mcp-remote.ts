import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import {
  ERROR_STATUS,
  type CommitPlan,
  type ErrorCode,
  type ReviewComment,
  type ToolCallRecord,
} from '../../shared/index.ts';
import { AppError } from '../errors.ts';
import type { ToolCallResult } from '../git/index.ts';
import type { Delivery } from '../review/index.ts';

/**
 * `rundiff mcp --server URL`: the git tools run here, on this process's `--workspace` folders (the
 * server may not know them), and the server is asked for what only it has: the call log, commit
 * approval (a person at the web UI) and `run_changes` (its live checkpoints). Plain node:http, not
 * fetch: an approval may wait longer than fetch's fixed 300 s header timeout.
 */

interface JsonAnswer {
  status: number;
  body: unknown;
}

function requestJson(
  url: URL,
  method: string,
  body: unknown,
  opts: { token: string | null; timeoutMs: number | null; signal?: AbortSignal | undefined },
): Promise<JsonAnswer> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
  const headers: Record<string, string> = { accept: 'application/json' };
  if (payload) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(payload.length);
  }
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, { method, headers, ...(opts.signal ? { signal: opts.signal } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = null;
        try {
          parsed = text === '' ? null : JSON.parse(text);
        } catch {
          parsed = null;
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    if (opts.timeoutMs !== null) req.setTimeout(opts.timeoutMs, () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(payload);
  });
}

/** The server's error body as an AppError (an unknown code or shape becomes `internal`). */
function errorFrom(answer: JsonAnswer): AppError {
  const e = (answer.body as { error?: { code?: string; message?: string; hint?: string; details?: unknown } } | null)
    ?.error;
  const code = e?.code && e.code in ERROR_STATUS ? (e.code as ErrorCode) : 'internal';
  const opts: { hint?: string; details?: Record<string, unknown> } = {};
  if (typeof e?.hint === 'string') opts.hint = e.hint;
  if (e?.details && typeof e.details === 'object') opts.details = e.details as Record<string, unknown>;
  return new AppError(code, typeof e?.message === 'string' ? e.message : `the server answered ${answer.status}`, opts);
}

export interface ApprovalAsker {
  agent?: string | undefined;
  sessionId?: string | undefined;
  root?: string | undefined;
}

export interface RemoteServer {
  readonly url: string;
  /** Reports a call that ran here for the server's log; a failure is returned, never thrown. */
  /**
   * `details`: the call's arguments (bounded JSON) and a commit's hash and summary, for the log, and
   * the approval id the commit went ahead on.
   */
  recordCall(
    result: ToolCallResult,
    details?: Pick<ToolCallRecord, 'arguments' | 'commit'> & { approval_id?: string },
  ): Promise<Error | null>;
  /**
   * Asks the server whether a person must approve the plan, and waits for them when so. `from` says
   * who asks: the agent (the MCP client's name), the session the agent named, and the repository's
   * top folder (the server names the session at work there when none was named). Resolves with the
   * approval id when a person approved (null when no approval is required): reported with the commit,
   * it puts the commit in the plan's session timeline.
   */
  approve(plan: CommitPlan, signal?: AbortSignal, from?: ApprovalAsker): Promise<string | null>;
  /** `run_changes`, run (and logged) by the server. */
  runChanges(args: unknown): Promise<ToolCallResult>;
  /** A JSON route's 200 answer; anything else throws the server's error. */
  getJson<T>(p: string): Promise<T>;
  /** A JSON POST's 200 answer; anything else throws the server's error (its details kept). */
  postJson<T>(p: string, body: unknown, what: string): Promise<T>;
  /** The pending reviews of sessions in `workspaces`, marked delivered by `mcp` to `agent`. */
  deliverReviews(workspaces: readonly string[], agent: string | undefined): Promise<Delivery[]>;
  /** Marks comments of sessions in `workspaces` addressed. */
  addressComments(
    workspaces: readonly string[],
    ids: readonly string[],
  ): Promise<{ comments: ReviewComment[]; not_found: string[] }>;
}

export function createRemote(base: string, token: string | null): RemoteServer {
  const at = (p: string) => new URL(p, base.endsWith('/') ? base : `${base}/`);
  const unreachable = (err: unknown, what: string) =>
    new AppError('internal', `the rundiff server at ${base} could not be reached ${what}`, {
      hint: 'Start it (rundiff serve), or check --server and RUNDIFF_TOKEN.',
      details: { server: base, cause: err instanceof Error ? err.message : String(err) },
    });

  /** A JSON POST whose 200 answer is returned; anything else throws the server's error. */
  async function postJson<T>(p: string, body: unknown, what: string): Promise<T> {
    let answer: JsonAnswer;
    try {
      answer = await requestJson(at(p), 'POST', body, { token, timeoutMs: 30_000 });
    } catch (err) {
      throw unreachable(err, what);
    }
    if (answer.status !== 200) throw errorFrom(answer);
    return answer.body as T;
  }

  async function getJson<T>(p: string): Promise<T> {
    let answer: JsonAnswer;
    try {
      answer = await requestJson(at(p.replace(/^\//, '')), 'GET', undefined, { token, timeoutMs: 30_000 });
    } catch (err) {
      throw unreachable(err, `for ${p}`);
    }
    if (answer.status !== 200) throw errorFrom(answer);
    return answer.body as T;
  }

  return {
    url: base,
    getJson,
    postJson: (p, body, what) => postJson(p.replace(/^\//, ''), body, what),
    async deliverReviews(workspaces, agent) {
      const body = { workspaces, ...(agent ? { agent } : {}) };
      return (await postJson<{ deliveries: Delivery[] }>('api/reviews/deliver', body, 'for review_comments'))
        .deliveries;
    },
    addressComments: (workspaces, ids) =>
      postJson('api/reviews/addressed', { workspaces, comment_ids: ids }, 'for review_comments_addressed'),
    async recordCall(result, details) {
      try {
        const answer = await requestJson(
          at('api/tools/calls'),
          'POST',
          {
            tool: result.tool,
            repository: result.repository,
            ok: result.ok,
            error_code: result.ok ? null : result.error.code,
            duration_ms: result.duration_ms,
            ...(details ?? {}),
          },
          { token, timeoutMs: 5_000 },
        );
        return answer.status === 201 ? null : errorFrom(answer);
      } catch (err) {
        return err instanceof Error ? err : new Error(String(err));
      }
    },
    async approve(plan, signal, from = {}) {
      let answer: JsonAnswer;
      const body = {
        ...plan,
        ...(from.agent ? { agent: from.agent } : {}),
        ...(from.sessionId ? { session_id: from.sessionId } : {}),
        ...(from.root ? { repository_root: from.root } : {}),
      };
      try {
        // No client deadline: the server answers at its own RUNDIFF_APPROVAL_TIMEOUT_MS.
        answer = await requestJson(at('api/tools/approvals'), 'POST', body, { token, timeoutMs: null, signal });
      } catch (err) {
        // Fail closed: without an answer nobody can say the commit was allowed.
        throw unreachable(err, 'to ask for commit approval; nothing was committed');
      }
      if (answer.status !== 200) throw errorFrom(answer);
      const id = (answer.body as { approval_id?: unknown } | null)?.approval_id;
      return typeof id === 'string' ? id : null;
    },
    async runChanges(args) {
      const started = performance.now();
      const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
      try {
        const answer = await requestJson(at('api/tools/run_changes'), 'POST', args ?? {}, {
          token,
          timeoutMs: 120_000,
        });
        if (answer.status !== 200) {
          return { ok: false, tool: 'run_changes', error: errorFrom(answer), repository: null, duration_ms: elapsed() };
        }
        const workspace = (answer.body as { change?: { workspace?: unknown } } | null)?.change?.workspace;
        const repository = typeof workspace === 'string' ? path.basename(workspace) : null;
        return { ok: true, tool: 'run_changes', output: answer.body, repository, duration_ms: elapsed() };
      } catch (err) {
        return {
          ok: false,
          tool: 'run_changes',
          error: unreachable(err, 'for run_changes'),
          repository: null,
          duration_ms: elapsed(),
        };
      }
    },
  };
}

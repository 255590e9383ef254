import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import {
  ERROR_STATUS,
  GIT_TOOL_NAMES,
  MAX_CALL_ARGUMENTS_CHARS,
  MAX_DENY_REASON_CHARS,
  type ApprovalRequester,
  type ErrorCode,
  type GitCommitOutput,
  type GitToolName,
  type PendingApprovalsResponse,
  type ToolCallsResponse,
} from '../../shared/index.ts';
import type { Approvals } from '../approvals/index.ts';
import type { CheckpointEngine } from '../checkpoint/types.ts';
import type { Config } from '../config.ts';
import { AppError, toAppError } from '../errors.ts';
import {
  callTool,
  invalidInput,
  labelFor,
  ToolSession,
  ToolSessionStore,
  type ToolCallResult,
  type ToolContext,
} from '../git/index.ts';
import { runChanges, runChangesInput } from '../run-changes/index.ts';
import type { Store } from '../store/index.ts';
import { argumentsText, CALLS_PAGE, commitOf, type CallLog } from '../tools-log/index.ts';
import { isValidId, type Recorder } from '../runs/index.ts';
import { intQuery } from './params.ts';
import { sessionAtWork } from './commit-session.ts';
import { restCatalog } from './tools-catalog.ts';

/**
 * The git tools over REST (docs/contract.md section 5): `POST /api/tools/<name>` with the tool input plus
 * `tool_session` (the commit gate's scope) and `session_id` (whose workspace is the default
 * repository); the call log; commit approval. Mounted at `/api/tools` behind the app-wide Host,
 * Origin, token and JSON guards. Every call of a known tool is logged, failures included.
 */

export interface ToolsRouterDeps {
  config: Pick<Config, 'workspaceRoots' | 'homeDir' | 'requireCommitApproval'>;
  store: Store;
  engine: CheckpointEngine;
  callLog: CallLog;
  approvals: Approvals;
  /** Where an approved commit is told to its session's timeline (a message of the session). */
  recorder?: Pick<Recorder, 'handle'>;
  log?: (message: string) => void;
  /** REST tool sessions (`tool_session`). Default: a fresh bounded store. */
  toolSessions?: ToolSessionStore;
  now?: () => number;
}

const TOOL_NAMES = new Set<string>(GIT_TOOL_NAMES);
/** Approved plans remembered until their commit is reported (a commit that fails is never reported). */
const APPROVED_REMEMBERED = 500;
/** Tools whose calls only make sense inside a tool session (the review and the commit it allows). */
const NEEDS_TOOL_SESSION = new Set<string>(['git_diff', 'git_commit']);

const idField = (name: string, value: unknown): string | undefined => {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !isValidId(value)) {
    throw new AppError('invalid_input', `${name} must be 1-200 printable characters`, {
      details: { issues: [{ path: name, message: 'must be 1-200 printable characters' }] },
    });
  }
  return value;
};

function plainObject(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new AppError('invalid_input', 'the request body must be a JSON object (the tool input)');
  }
  return body as Record<string, unknown>;
}

/** An AbortSignal that fires when the client goes away before its answer is sent. */
function clientGone(req: Request, res: Response): AbortSignal {
  const ctrl = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) ctrl.abort();
  });
  req.on('aborted', () => ctrl.abort());
  return ctrl.signal;
}

const errorCodes = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

/** `POST /api/tools/calls`: a call run elsewhere (`rundiff mcp --server`) reported for the log. */
const reportedCall = z.strictObject({
  tool: z.enum(GIT_TOOL_NAMES as [GitToolName, ...GitToolName[]]),
  repository: z.string().min(1).max(4096).nullable(),
  ok: z.boolean(),
  error_code: z.enum(errorCodes).nullable(),
  duration_ms: z.number().min(0).max(86_400_000),
  arguments: z.string().max(MAX_CALL_ARGUMENTS_CHARS).nullable().optional(),
  /** The approval this commit went ahead on: an approved commit joins that plan's session timeline. */
  approval_id: z.string().min(1).max(200).optional(),
  commit: z
    .strictObject({ hash: z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/), summary: z.string().max(4096) })
    .nullable()
    .optional(),
});

/** `POST /api/tools/approvals`: a commit plan from `rundiff mcp --server`, waiting for a decision. */
const commitPlan = z.strictObject({
  repository: z.string().min(1).max(4096),
  message: z.string().max(1024 * 1024),
  files: z
    .array(
      z.strictObject({
        path: z.string().min(1).max(4096),
        additions: z.number().int().min(0),
        deletions: z.number().int().min(0),
        new: z.boolean(),
        /** Absent from older clients: then counted lines are taken as given. */
        binary: z.boolean().default(false),
      }),
    )
    .max(100_000),
  /** What the commit records (`staged`: HEAD to index; `paths`: HEAD to work tree); null when not said. */
  commit: z.enum(['staged', 'paths']).nullable().default(null),
  /** Who asks (optional): shown to the person deciding. */
  agent: z.string().min(1).max(200).optional(),
  session_id: z.string().min(1).max(200).optional(),
  /** The repository's top folder: without session_id, the session at work there is named. */
  repository_root: z.string().min(1).max(4096).optional(),
});

const decisionBody = z.strictObject({
  decision: z.enum(['approve', 'deny']),
  /** Why a commit is denied; sent back to the agent in git_commit's answer. */
  reason: z.string().max(MAX_DENY_REASON_CHARS).optional(),
});

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body ?? {});
  if (!r.success) throw invalidInput(r.error);
  return r.data;
}

export function toolsRouter(deps: ToolsRouterDeps): Router {
  const router = Router();
  const now = deps.now ?? Date.now;
  const toolSessions = deps.toolSessions ?? new ToolSessionStore();
  const roots = deps.config.workspaceRoots ?? [];
  /** Approved plans whose commit is made elsewhere (`rundiff mcp --server`), by approval id: their session. */
  const approvedElsewhere = new Map<string, { sessionId: string; repository: string }>();

  /**
   * Who asks for a commit, for the person deciding: the session (with its title) and the agent.
   * Without a session, the one session at work in the repository (`root`) is named, if any.
   */
  async function requesterOf(
    sessionId: string | undefined,
    agent: string | undefined,
    root?: string,
  ): Promise<ApprovalRequester> {
    const session = sessionId !== undefined ? sessionId : root === undefined ? null : await sessionAtWork(deps, root);
    return {
      session_id: session,
      session_title: session === null ? null : ((await deps.store.sessions.get(session))?.title ?? null),
      agent: agent ?? null,
    };
  }

  /** A session named by a caller must exist: the prompt links to it and the commit joins its timeline. */
  async function knownSession(sessionId: string | undefined): Promise<void> {
    if (sessionId !== undefined && !(await deps.store.sessions.exists(sessionId))) {
      throw new AppError('not_found', `no session ${JSON.stringify(sessionId)}`, {
        details: { session_id: sessionId },
      });
    }
  }

  async function record(result: ToolCallResult, input: unknown): Promise<void> {
    await deps.callLog.record({
      tool: result.tool as GitToolName,
      repository: result.repository,
      ok: result.ok,
      error_code: result.ok ? null : result.error.code,
      duration_ms: result.duration_ms,
      created_at: now(),
      arguments: argumentsText(input),
      commit: commitOf(result.tool, result.ok, result.ok ? result.output : null),
    });
  }

  async function runGitTool(name: string, body: Record<string, unknown>, signal: AbortSignal): Promise<ToolCallResult> {
    const { tool_session: rawToolSession, session_id: rawSessionId, agent: rawAgent, ...input } = body;
    const toolSessionId = idField('tool_session', rawToolSession);
    if (toolSessionId === undefined && NEEDS_TOOL_SESSION.has(name)) {
      throw new AppError('invalid_input', `${name} needs tool_session: the id that scopes reviews and commits`, {
        hint: 'Send the same tool_session (any id of yours) with the git_diff that reviews and the git_commit that follows.',
        details: { issues: [{ path: 'tool_session', message: 'required' }] },
      });
    }
    const sessionId = idField('session_id', rawSessionId);
    const agent = idField('agent', rawAgent);
    const requested = typeof input.repository === 'string' ? input.repository : undefined;
    // The session the plan was shown for: the one named, else the one at work in the repository.
    let planSession: string | null = null;
    const ctx: ToolContext = {
      session: toolSessionId === undefined ? new ToolSession() : toolSessions.get(toolSessionId),
      repositories: await restCatalog(deps.store, deps.config, sessionId, requested),
      ...(deps.config.requireCommitApproval
        ? {
            approve: async (plan, repo) => {
              const requester = await requesterOf(sessionId, agent, repo.root);
              planSession = requester.session_id;
              await deps.approvals.request(plan, signal, requester);
            },
          }
        : {}),
    };
    const result = await callTool(name, input, ctx);
    if (result.ok && result.tool === 'git_commit' && planSession !== null) {
      await announceCommit(planSession, result.repository, result.output as GitCommitOutput);
    }
    return result;
  }

  /**
   * An approved commit joins its session's timeline as a message, so the session shows what was
   * committed where. A session that is gone (or a refused message) leaves the commit as it is: it
   * is logged, the caller still gets its answer.
   */
  async function announceCommit(
    sessionId: string,
    repository: string | null,
    out: Pick<GitCommitOutput, 'hash' | 'summary'>,
  ): Promise<void> {
    if (!deps.recorder || !(await deps.store.sessions.exists(sessionId))) return;
    // git's own summary line: `[main 1a2b3c4] Fix the parser (2 files changed, +4 -1)`.
    const content = `Commit approved and made${repository ? ` in ${repository}` : ''}: ${out.summary}`;
    try {
      await deps.recorder.handle({ type: 'message', session_id: sessionId, role: 'tool', content });
    } catch (err) {
      deps.log?.(`could not add commit ${out.hash} to session ${sessionId}: ${(err as Error).message}`);
    }
  }

  async function runChangesTool(body: Record<string, unknown>): Promise<ToolCallResult> {
    const started = performance.now();
    const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
    const { tool_session: rawToolSession, ...input } = body;
    let repository: string | null = null;
    try {
      idField('tool_session', rawToolSession);
      const args = parse(runChangesInput, input);
      const output = await runChanges({ store: deps.store, engine: deps.engine, now }, args);
      if (output.change.workspace) repository = labelFor(output.change.workspace, roots);
      return { ok: true, tool: 'run_changes', output, repository, duration_ms: elapsed() };
    } catch (err) {
      return { ok: false, tool: 'run_changes', error: toAppError(err), repository, duration_ms: elapsed() };
    }
  }

  router.get('/calls', async (req, res) => {
    const limit = intQuery(req.query.limit, 'limit', { min: 1, max: CALLS_PAGE.max }) ?? CALLS_PAGE.default;
    const body: ToolCallsResponse = { calls: await deps.callLog.list(limit) };
    res.json(body);
  });

  router.post('/calls', async (req, res) => {
    const { approval_id: approvalId, ...call } = parse(reportedCall, req.body);
    const logged = await deps.callLog.record({ ...call, created_at: now() });
    // A commit made after an approval given here joins the session the plan named, once.
    const approved = approvalId === undefined ? undefined : approvedElsewhere.get(approvalId);
    if (approved && call.tool === 'git_commit' && call.ok && call.commit) {
      approvedElsewhere.delete(approvalId!);
      await announceCommit(approved.sessionId, call.repository ?? approved.repository, call.commit);
    }
    res.status(201).json({ call: logged });
  });

  router.get('/approvals', (_req, res) => {
    const body: PendingApprovalsResponse = { approvals: deps.approvals.pending() };
    res.json(body);
  });

  // A plan from a commit run elsewhere: answers at once when approval is off, else once decided.
  router.post('/approvals', async (req, res) => {
    const { agent, session_id: sessionId, repository_root: root, ...plan } = parse(commitPlan, req.body);
    if (!deps.config.requireCommitApproval) {
      res.json({ required: false });
      return;
    }
    idField('session_id', sessionId);
    await knownSession(sessionId);
    const requester = await requesterOf(sessionId, agent, root);
    const approvalId = await deps.approvals.request(plan, clientGone(req, res), requester);
    if (requester.session_id !== null) {
      approvedElsewhere.set(approvalId, { sessionId: requester.session_id, repository: plan.repository });
      for (const old of approvedElsewhere.keys()) {
        if (approvedElsewhere.size <= APPROVED_REMEMBERED) break;
        approvedElsewhere.delete(old);
      }
    }
    res.json({ required: true, decision: 'approve', approval_id: approvalId, session_id: requester.session_id });
  });

  router.post('/approvals/:approval_id', (req, res) => {
    const id = idField('approval_id', req.params.approval_id)!;
    const { decision, reason } = parse(decisionBody, req.body);
    res.json(deps.approvals.decide(id, decision, reason));
  });

  router.post('/:name', async (req, res) => {
    const name = req.params.name;
    if (!TOOL_NAMES.has(name)) {
      throw new AppError('not_found', `no tool ${JSON.stringify(name)}`, { details: { tools: [...GIT_TOOL_NAMES] } });
    }
    const signal = clientGone(req, res);
    const started = performance.now();
    let result: ToolCallResult;
    try {
      const body = plainObject(req.body);
      result = name === 'run_changes' ? await runChangesTool(body) : await runGitTool(name, body, signal);
    } catch (err) {
      const duration = Math.round((performance.now() - started) * 10) / 10;
      result = { ok: false, tool: name, error: toAppError(err), repository: null, duration_ms: duration };
    }
    await record(result, req.body);
    if (!result.ok) throw result.error;
    res.json(result.output);
  });

  return router;
}

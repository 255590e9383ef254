import { hookBodyOverLimit, SESSION_NO_LONGER_FOLLOWED, type RunUsage } from '../../shared/index.ts';
import { parseBridgeEvent, type Recorder } from '../runs/index.ts';
import { MAPPERS } from './agents/index.ts';
import type { OversizeFields } from './oversize.ts';
import { hookSessionId } from './agents/kit.ts';
import { createHookStateStore, MAX_HOOK_SESSIONS } from './state.ts';
import { transcriptUsage } from './transcript.ts';
import {
  HOOK_AGENTS,
  initialHookState,
  type AgentMapper,
  type HookAgent,
  type HookMapping,
  type HookReply,
  type HookSessionState,
} from './types.ts';

/** What a payload over the body limit may send: ends only. */
const END_EVENTS: ReadonlySet<string> = new Set(['tool.completed', 'run.completed', 'run.failed']);
/** What makes such a payload unusable: it would open something on a guess. */
const OPEN_EVENTS: ReadonlySet<string> = new Set(['run.started', 'tool.started']);

export interface HookRuntimeDeps {
  recorder: Pick<Recorder, 'handle'>;
  log: (message: string) => void;
  maxSessions?: number;
  /** The mappings by agent; default every agent's. */
  mappers?: Partial<Record<HookAgent, AgentMapper>>;
}

/** What one payload led to: the rundiff session, how many events were stored, and what was refused. */
export interface HookOutcome {
  sessionId: string | null;
  sent: number;
  failures: string[];
}

/**
 * Runs an agent's hook payloads: finds the agent session's state, maps the payload, and sends the
 * events through the recorder in order, each answered before the next (so a tool's checkpoint exists
 * when the answer reaches the agent). Payloads of one agent session run one after another; nothing
 * here throws: a bad payload or a refused event is logged and reported in the outcome.
 */
export function createHookRuntime(deps: HookRuntimeDeps) {
  const mappers = deps.mappers ?? MAPPERS;
  const queues = new Map<string, Promise<unknown>>();
  /** Runs `work` after the session's payloads in flight, before any that come later. */
  function queued<T>(key: string, work: () => Promise<T>): Promise<T> {
    const mine = (queues.get(key) ?? Promise.resolve()).then(work);
    const settled = mine.catch(() => undefined);
    queues.set(key, settled);
    void settled.then(() => {
      if (queues.get(key) === settled) queues.delete(key);
    });
    return mine;
  }

  /**
   * A session dropped as the least recently used is no longer followed: its open run fails with
   * the reason (the recorder closes the run's open tool calls with it), so its change is stored and
   * its checkpoints no longer keep the workspace busy.
   */
  function closeEvicted(key: string, state: HookSessionState): void {
    if (state.runId === null) return;
    const runId = state.runId;
    void queued(key, async () => {
      try {
        await deps.recorder.handle(
          parseBridgeEvent({ type: 'run.failed', session_id: key, run_id: runId, error: SESSION_NO_LONGER_FOLLOWED }),
        );
      } catch (err) {
        deps.log(`hook (${key}): the run ${runId} of a session no longer followed was not closed: ${String(err)}`);
      }
    });
  }
  const states = createHookStateStore(deps.maxSessions ?? MAX_HOOK_SESSIONS, closeEvicted);

  const mapperOf = (agent: string): AgentMapper | undefined =>
    (HOOK_AGENTS as readonly string[]).includes(agent) ? mappers[agent as HookAgent] : undefined;

  function safeMap(mapper: AgentMapper, payload: unknown, key: string | null): HookMapping | Error {
    try {
      return mapper.map(payload, key === null ? initialHookState() : states.get(key));
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
  }

  /** A run's end with the tokens its agent's transcript reports for it, when the agent has one. */
  function usageFor(mapper: AgentMapper, payload: unknown, e: HookMapping['events'][number]): { usage?: RunUsage } {
    if (e.type !== 'run.completed' || mapper.transcript === undefined) return {};
    const transcript = mapper.transcript.pathOf(payload);
    if (transcript === null) return {};
    try {
      const usage = transcriptUsage(transcript, e.run_id, mapper.transcript.usage);
      return usage === null ? {} : { usage };
    } catch (err) {
      deps.log(`hook ${mapper.agent}: the transcript of run ${e.run_id} was not read: ${String(err)}`);
      return {};
    }
  }

  async function run(mapper: AgentMapper, payload: unknown, key: string): Promise<HookOutcome> {
    const outcome: HookOutcome = { sessionId: key, sent: 0, failures: [] };
    const mapping = safeMap(mapper, payload, key);
    if (mapping instanceof Error) {
      outcome.failures.push(`the ${mapper.agent} mapping failed: ${mapping.message}`);
      return outcome;
    }
    states.set(key, mapping.state);
    for (const raw of mapping.events) {
      try {
        // The session is always the agent's own: a payload cannot write into another agent's sessions.
        const event = parseBridgeEvent({ ...raw, session_id: key, ...usageFor(mapper, payload, raw) });
        await deps.recorder.handle(event);
        outcome.sent++;
      } catch (err) {
        outcome.failures.push(`${raw.type} refused: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return outcome;
  }

  async function handle(agent: string, payload: unknown): Promise<HookOutcome> {
    const mapper = mapperOf(agent);
    if (!mapper) return { sessionId: null, sent: 0, failures: [`no hook mapping for agent ${JSON.stringify(agent)}`] };
    // The session id comes from a first, state-free mapping; the mapping that counts runs in the queue.
    const probe = safeMap(mapper, payload, null);
    const agentSession = probe instanceof Error ? null : probe.sessionId;
    let outcome: HookOutcome;
    if (agentSession === null) {
      outcome = {
        sessionId: null,
        sent: 0,
        failures: [
          probe instanceof Error
            ? `the ${agent} mapping failed: ${probe.message}`
            : `not a ${agent} hook payload (no session id)`,
        ],
      };
    } else {
      const key = hookSessionId(mapper.agent, agentSession);
      outcome = await queued(key, () => run(mapper, payload, key));
    }
    for (const f of outcome.failures)
      deps.log(`hook ${agent}${outcome.sessionId ? ` (${outcome.sessionId})` : ''}: ${f}`);
    return outcome;
  }

  /**
   * A payload over the body limit, of which only `fields` (its top-level scalars and the agent's
   * `overLimitPaths`, see `oversize.ts`) were read: it may only close what it refers to. The fields
   * go through the agent's mapping; if that yields ends (of tool calls, of the run) and nothing that
   * opens anything (a pre-tool or prompt event opens nothing on a guess), the ends are sent and the
   * state moves on; otherwise nothing is sent and the state stays. A tool call's end carries only
   * its ids and the error saying why (its answer was not read); a run's end is sent as the agent
   * gave it (its own close ends the run's tool calls still open); what else the payload meant (the
   * reply's message) is not stored.
   */
  async function closeOversized(agent: string, fields: OversizeFields, bytes: number): Promise<HookOutcome> {
    const mapper = mapperOf(agent);
    if (!mapper) return { sessionId: null, sent: 0, failures: [`no hook mapping for agent ${JSON.stringify(agent)}`] };
    const probe = safeMap(mapper, fields, null);
    const agentSession = probe instanceof Error ? null : probe.sessionId;
    const over = `a payload over the body limit (${bytes} bytes)`;
    if (agentSession === null) {
      deps.log(`hook ${agent}: ${over} names no session: nothing closed`);
      return { sessionId: null, sent: 0, failures: [] };
    }
    const key = hookSessionId(mapper.agent, agentSession);
    const outcome = await queued(key, async (): Promise<HookOutcome> => {
      const done: HookOutcome = { sessionId: key, sent: 0, failures: [] };
      const mapping = safeMap(mapper, fields, key);
      if (mapping instanceof Error) {
        done.failures.push(`the ${mapper.agent} mapping failed on ${over}: ${mapping.message}`);
        return done;
      }
      const ends = mapping.events.filter((e) => END_EVENTS.has(e.type));
      const opens = mapping.events.filter((e) => OPEN_EVENTS.has(e.type));
      if (opens.length > 0 || ends.length === 0) {
        const what = opens.length > 0 ? opens.map((e) => e.type).join(', ') : 'nothing to close';
        done.failures.push(`${over} was not used (it would mean ${what}): only ends are taken from one`);
        return done;
      }
      states.set(key, mapping.state);
      for (const end of ends) {
        const event =
          end.type === 'tool.completed'
            ? {
                type: end.type,
                session_id: key,
                run_id: end.run_id,
                tool_call_id: end.tool_call_id,
                error: hookBodyOverLimit(bytes),
              }
            : end.type === 'run.completed' || end.type === 'run.failed'
              ? {
                  type: end.type,
                  session_id: key,
                  run_id: end.run_id,
                  ...(end.error === undefined ? {} : { error: end.error }),
                }
              : null;
        if (event === null) continue;
        try {
          await deps.recorder.handle(parseBridgeEvent(event));
          done.sent++;
          deps.log(
            event.type === 'tool.completed'
              ? `hook ${agent} (${key}): ${over}: closed the tool call ${event.tool_call_id} without its answer`
              : `hook ${agent} (${key}): ${over}: ended the run ${event.run_id} (${event.type}); its reply, if any, was not stored`,
          );
        } catch (err) {
          done.failures.push(`${end.type} of ${over} refused: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      return done;
    });
    for (const f of outcome.failures) deps.log(`hook ${agent} (${key}): ${f}`);
    return outcome;
  }

  return {
    handle,
    closeOversized,
    knows: (agent: string): boolean => mapperOf(agent) !== undefined,
    /** The nested fields to read from the agent's payloads over the body limit. */
    overLimitPathsOf: (agent: string): readonly string[] => mapperOf(agent)?.overLimitPaths ?? [],
    /** How the agent's hook answers can carry text to it, when they can. */
    replyOf: (agent: string): HookReply | undefined => mapperOf(agent)?.reply,
    states,
  };
}

export type HookRuntime = ReturnType<typeof createHookRuntime>;

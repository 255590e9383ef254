import path from 'node:path';
import { jsonDepth, MAX_JSON_DEPTH, type BridgeEvent, type RunUsage } from '../../../shared/index.ts';
import { isValidId, MAX_ERROR_BYTES, MAX_MESSAGE_BYTES } from '../../runs/index.ts';
import type { HookAgent, HookMapping, HookSessionState } from '../types.ts';

/**
 * The toolkit every agent mapping is made of: the readers of a payload, the bounded summaries and
 * texts the events carry (one bound and one marker for every agent), and the steps: open the
 * session, start and end a prompt's run, start and end a tool call (by the agent's call id, or
 * paired in order when the agent gives none). Pure: it only builds events and the next state.
 */

/** A tool card's name: the tool and a short summary of its input, one line, in characters. */
export const MAX_SUMMARY_CHARS = 200;
/** A session title, in characters (the bridge's bound). */
export const MAX_TITLE_CHARS = 500;

/** What ends a text that was cut, for every agent and every field. */
export const TRUNCATED = ' … [truncated]';

/**
 * A text bound: characters (code points) for one-line names, UTF-8 bytes for message and error
 * texts (the unit the bridge measures them in).
 */
export type TextBound = { chars: number } | { bytes: number };

/** Prompts, replies and tool messages: the bridge's own 1 MiB, so a hook keeps what any client could send. */
export const MESSAGE_BOUND: TextBound = { bytes: MAX_MESSAGE_BYTES };
/** Error texts of runs and tool calls: the bridge's own 64 KiB. */
export const ERROR_BOUND: TextBound = { bytes: MAX_ERROR_BYTES };

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

/** The transcript a payload names (`transcript_path`, as Claude Code, Codex and Gemini CLI name it). */
export const transcriptPathOf = (payload: unknown): string | null =>
  isObject(payload) ? (str(payload.transcript_path) ?? null) : null;

/** The rundiff session id of an agent's session: agents never share a session. */
export const hookSessionId = (agent: HookAgent, agentSessionId: string): string => `${agent}:${agentSessionId}`;

/**
 * A text within `bound`, cut on a character boundary and ending in `TRUNCATED` when it was cut
 * (the marker counts against the bound).
 */
export function bounded(text: string, bound: TextBound): string {
  const size = 'chars' in bound ? (s: string) => [...s].length : (s: string) => Buffer.byteLength(s, 'utf8');
  const max = 'chars' in bound ? bound.chars : bound.bytes;
  if (size(text) <= max) return text;
  const budget = max - size(TRUNCATED);
  let out = '';
  let used = 0;
  for (const ch of text) {
    const n = size(ch);
    if (used + n > budget) break;
    out += ch;
    used += n;
  }
  return out + TRUNCATED;
}

/** One line: control characters, lone surrogates and runs of white space become one space. */
export function oneLine(text: string): string {
  return text.replace(/[\p{Cc}\p{Cs}\p{Zl}\p{Zp}\s]+/gu, ' ').trim();
}

/** Input fields that say best what a tool call does, in order of preference. */
const SUMMARY_FIELDS = [
  'command',
  'cmd',
  'commands',
  'file_path',
  'filePath',
  'notebook_path',
  'absolute_path',
  'path',
  'paths',
  'dir_path',
  'pattern',
  'query',
  'url',
];

const PATH_FIELDS = new Set(['file_path', 'filePath', 'notebook_path', 'absolute_path', 'path', 'paths', 'dir_path']);
/** A `command` given as a list is one command's argv (Codex's shell calls); other lists hold several items. */
const ARGV_FIELDS = new Set(['command', 'cmd']);

/** A path inside the workspace is shown relative to it; a path outside it stays whole. */
function shownPath(file: string, workspace: string | undefined): string {
  if (!workspace || !path.isAbsolute(file)) return file;
  const rel = path.relative(workspace, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}

/**
 * The files a patch in Codex's `apply_patch` format names (`*** Add File: a`, `*** Update File: b`,
 * `*** Move to: c`, `*** Delete File: d`), in order and once each; null when the text is not one.
 */
export function patchFilesOf(text: string): string[] | null {
  if (!/^\s*\*\*\* Begin Patch/.test(text)) return null;
  const files = new Set<string>();
  for (const m of text.matchAll(/^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+?)\s*$/gm)) files.add(m[1]!);
  return [...files];
}

/** The patch text an `apply_patch` call carries: the input itself, a field of it, or an argv item. */
function patchTextOf(input: unknown): string | null {
  const candidates: unknown[] = [input];
  if (isObject(input)) for (const key of ['input', 'patch', 'command', 'cmd']) candidates.push(input[key]);
  for (const c of candidates.flatMap((v) => (Array.isArray(v) ? v : [v])))
    if (typeof c === 'string' && patchFilesOf(c) !== null) return c;
  return null;
}

/** A short text for a tool's input: its command, path, pattern or URL when it has one, else nothing. */
export function summarizeInput(input: unknown, workspace?: string): string {
  // A patch is shown by the files it names, not by its text.
  const patch = patchTextOf(input);
  if (patch !== null)
    return oneLine(
      patchFilesOf(patch)!
        .map((f) => shownPath(f, workspace))
        .join(', '),
    );
  if (typeof input === 'string') return oneLine(input);
  if (!isObject(input)) return '';
  for (const key of SUMMARY_FIELDS) {
    const v = input[key];
    const shown = (x: string) => (PATH_FIELDS.has(key) ? shownPath(x, workspace) : x);
    if (typeof v === 'string' && v.trim()) return oneLine(shown(v));
    if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string'))
      return oneLine(v.map(shown).join(ARGV_FIELDS.has(key) ? ' ' : '; '));
  }
  // Arguments without a command or path (an MCP call's) may hold anything: the card shows the tool alone.
  return '';
}

/**
 * A tool card's name, the same for every agent: `tool: summary` (the command of a shell call, the
 * file of an edit relative to the workspace), else the tool alone; one line, bounded.
 */
export function toolSummary(tool: string, input: unknown, workspace?: string): string {
  const summary = summarizeInput(input, workspace);
  return bounded(summary ? `${oneLine(tool)}: ${summary}` : oneLine(tool), { chars: MAX_SUMMARY_CHARS });
}

/** A session title: one line, bounded. */
export const sessionTitle = (title: string): string => bounded(oneLine(title), { chars: MAX_TITLE_CHARS });

/** An absolute workspace path, or undefined (the bridge refuses anything else). */
export function workspaceOf(...candidates: unknown[]): string | undefined {
  for (const c of candidates) {
    const first = Array.isArray(c) ? c[0] : c;
    if (typeof first === 'string' && first.length > 0 && !first.includes('\0') && path.isAbsolute(first)) return first;
  }
  return undefined;
}

/**
 * Parses a JSON text when an agent hands arguments as one; anything else (and a text nested past
 * `MAX_JSON_DEPTH`, which later walks could not take) is returned as is.
 */
export function parseMaybeJson(v: unknown): unknown {
  if (typeof v !== 'string' || jsonDepth(v) > MAX_JSON_DEPTH) return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
}

/** A suffix that keeps made-up ids unique when the server forgot the session's counters. */
function stampOf(stamp: unknown): string {
  if (typeof stamp === 'number' && Number.isFinite(stamp)) return `-${stamp}`;
  if (typeof stamp === 'string' && stamp.trim()) return `-${oneLine(stamp).slice(0, 60)}`;
  return '';
}

/** The agent's own id when the bridge accepts it, else one made from a counter and a timestamp. */
function idOr(own: unknown, prefix: string, n: number, stamp: unknown): string {
  if (typeof own === 'string' && isValidId(own)) return own;
  return `${prefix}${n}${stampOf(stamp)}`;
}

const copyState = (s: HookSessionState): HookSessionState => ({
  runId: s.runId,
  prompts: s.prompts,
  tools: s.tools,
  openTools: Object.fromEntries(Object.entries(s.openTools).map(([k, v]) => [k, [...v]])),
  ...(s.announced ? { announced: true } : {}),
  ...(s.runOwner !== undefined ? { runOwner: s.runOwner } : {}),
  ...(s.lastEnded ? { lastEnded: { ...s.lastEnded } } : {}),
});

/** What a payload was not: no session, no events, the state unchanged. */
export const noMapping = (state: HookSessionState): HookMapping => ({ sessionId: null, events: [], state });

/** Why a run ended without the agent saying so. */
export const ENDED_BY_NEXT_PROMPT = 'the next prompt began before the agent reported the end of this one';

/**
 * Builds the events of one payload for one agent session. Call its steps in order and `done()`.
 */
export class Mapping {
  readonly sessionId: string;
  readonly events: BridgeEvent[] = [];
  private readonly state: HookSessionState;
  private readonly fresh: boolean;
  private ownerId: string | undefined;

  private constructor(
    readonly agentSessionId: string,
    agent: HookAgent,
    state: HookSessionState,
    readonly workspace: string | undefined,
    /** A value that differs between payloads (the agent's timestamp), for made-up ids. */
    readonly stamp: unknown,
  ) {
    this.sessionId = hookSessionId(agent, agentSessionId);
    this.state = copyState(state);
    this.fresh = !state.announced && state.runId === null && state.prompts === 0 && state.tools === 0;
  }

  /** Null when the agent's session id cannot make a valid rundiff session id. */
  static begin(
    agent: HookAgent,
    agentSessionId: unknown,
    state: HookSessionState,
    workspace: string | undefined,
    stamp?: unknown,
  ): Mapping | null {
    // An empty id would put every session of the agent into one.
    if (
      typeof agentSessionId !== 'string' ||
      agentSessionId.trim() === '' ||
      !isValidId(hookSessionId(agent, agentSessionId))
    )
      return null;
    return new Mapping(agentSessionId, agent, state, workspace, stamp);
  }

  get runId(): string | null {
    return this.state.runId;
  }

  /**
   * Whose events these are (the agent's own id for a prompt's work, such as Cline's task id): a run
   * started from now on is owned by it, so a late event of an earlier owner can be told apart.
   */
  ownedBy(owner: string | undefined): this {
    this.ownerId = owner;
    return this;
  }

  /** The owner of the open run: undefined when no run is open or its start named none. */
  get openRunOwner(): string | undefined {
    return this.state.runId === null ? undefined : this.state.runOwner;
  }

  /** True when a run is open and another owner started it (this event is not the open run's). */
  get openRunIsOthers(): boolean {
    const owner = this.openRunOwner;
    return owner !== undefined && this.ownerId !== undefined && owner !== this.ownerId;
  }

  /**
   * The reply of a run that already ended (its end reported after the next prompt's start): kept as
   * the assistant's message of that run. Nothing when the last ended run is not this owner's.
   */
  lateReply(reply: string | undefined): this {
    const last = this.state.lastEnded;
    if (!last || this.ownerId === undefined || last.owner !== this.ownerId) return this;
    return this.say('assistant', reply, last.runId);
  }

  /** The session, once: on its first payload (or always when `force`, e.g. the agent's own start event). */
  openSession(force = false, title?: string): this {
    if (!force && (!this.fresh || this.state.announced)) return this;
    this.state.announced = true;
    this.events.push({
      type: 'session.upsert',
      session_id: this.sessionId,
      ...(title ? { title: sessionTitle(title) } : {}),
      ...(this.workspace ? { workspace: this.workspace } : {}),
    });
    return this;
  }

  /** A prompt: its user message and its run. A run still open is ended first (its end was never reported). */
  startRun(ownRunId: unknown, prompt: string | undefined): this {
    this.openSession();
    if (this.state.runId !== null) this.endRun({ failed: ENDED_BY_NEXT_PROMPT });
    this.state.prompts += 1;
    const runId = idOr(ownRunId, 'prompt-', this.state.prompts, this.stamp);
    this.state.runId = runId;
    if (this.ownerId !== undefined) this.state.runOwner = this.ownerId;
    else delete this.state.runOwner;
    this.say('user', prompt, runId);
    this.events.push({
      type: 'run.started',
      session_id: this.sessionId,
      run_id: runId,
      source: 'coding-agent',
      ...(this.workspace ? { workspace: this.workspace } : {}),
    });
    return this;
  }

  /** A tool call before it runs; outside a run (a prompt the agent did not report) a run is started for it. */
  startTool(tool: string, input: unknown, ownCallId?: unknown): this {
    if (this.state.runId === null) this.startRun(undefined, undefined);
    this.state.tools += 1;
    const callId = idOr(ownCallId, 'tool-', this.state.tools, this.stamp);
    (this.state.openTools[tool] ??= []).push(callId);
    this.events.push({
      type: 'tool.started',
      session_id: this.sessionId,
      run_id: this.state.runId!,
      tool_call_id: callId,
      name: toolSummary(tool, input, this.workspace),
      ...(this.workspace ? { workspace: this.workspace } : {}),
    });
    return this;
  }

  /**
   * A tool call after it ran: the call with the agent's id, or without one the oldest open call of
   * the same tool. A post event with nothing open to pair with maps to nothing.
   */
  endTool(tool: string, error?: string, ownCallId?: unknown): this {
    const open = this.state.openTools[tool];
    if (!open || open.length === 0 || this.state.runId === null) return this;
    let at = 0;
    if (typeof ownCallId === 'string' && isValidId(ownCallId)) {
      at = open.indexOf(ownCallId);
      if (at < 0) return this;
    }
    const [callId] = open.splice(at, 1);
    if (open.length === 0) delete this.state.openTools[tool];
    this.events.push({
      type: 'tool.completed',
      session_id: this.sessionId,
      run_id: this.state.runId,
      tool_call_id: callId!,
      ...(error ? { error: bounded(error, ERROR_BOUND) } : {}),
    });
    return this;
  }

  /**
   * A message of the user, the assistant or about a tool, in the open run when there is one (a
   * prompt's text that arrives after its first tool call opened its run goes there too).
   */
  message(role: 'user' | 'assistant' | 'tool', content: string | undefined): this {
    return this.say(role, content, this.state.runId);
  }

  /** A message (nothing when it is empty), in the run `runId` when there is one. */
  private say(role: 'user' | 'assistant' | 'tool', content: string | undefined, runId: string | null): this {
    if (!content) return this;
    this.events.push({
      type: 'message',
      session_id: this.sessionId,
      role,
      content: bounded(content, MESSAGE_BOUND),
      ...(runId ? { run_id: runId } : {}),
    });
    return this;
  }

  /**
   * The end of the prompt's turn: the reply is stored and the run completes (with the tokens the
   * agent reported in the payload, when it did) or fails. Tool calls
   * still open are forgotten here: the run's own close ends them (`TOOL_ENDED_WITH_RUN`, in
   * `runs/`), as it does for a run from any client. Without an open run nothing happens.
   */
  endRun(outcome: { reply?: string; failed?: string; usage?: RunUsage | null }): this {
    const runId = this.state.runId;
    if (runId === null) return this;
    this.message('assistant', outcome.reply);
    this.events.push(
      outcome.failed !== undefined
        ? {
            type: 'run.failed',
            session_id: this.sessionId,
            run_id: runId,
            error: bounded(outcome.failed || 'failed', ERROR_BOUND),
          }
        : {
            type: 'run.completed',
            session_id: this.sessionId,
            run_id: runId,
            ...(outcome.usage ? { usage: outcome.usage } : {}),
          },
    );
    if (this.state.runOwner !== undefined) this.state.lastEnded = { owner: this.state.runOwner, runId };
    else delete this.state.lastEnded;
    delete this.state.runOwner;
    this.state.runId = null;
    this.state.openTools = {};
    return this;
  }

  done(): HookMapping {
    return { sessionId: this.agentSessionId, events: this.events, state: this.state };
  }
}

/** Runs a mapping body; a payload it cannot read maps to nothing instead of throwing into the server. */
export function safely(state: HookSessionState, body: () => HookMapping): HookMapping {
  try {
    return body();
  } catch {
    return noMapping(state);
  }
}

/** Lower-case name lookup for the read-only tool lists. */
export const nameSet = (...names: string[]): ReadonlySet<string> => new Set(names.map((n) => n.toLowerCase()));
export const isIn = (set: ReadonlySet<string>, tool: string): boolean => set.has(tool.toLowerCase());

/**
 * Pairing for a mapping that keeps its own state (Claude Code's shape) when the agent gives no
 * tool-call id: a pre event opens an id under its tool's name, the next post event of the same tool
 * closes the oldest one.
 */
export function openTool(state: HookSessionState, toolName: string, id: string): HookSessionState {
  const open = state.openTools[toolName] ?? [];
  return { ...state, openTools: { ...state.openTools, [toolName]: [...open, id] } };
}
export function closeTool(state: HookSessionState, toolName: string): { id: string | null; state: HookSessionState } {
  const open = state.openTools[toolName] ?? [];
  if (open.length === 0) return { id: null, state };
  const rest = open.slice(1);
  const openTools = { ...state.openTools };
  if (rest.length === 0) delete openTools[toolName];
  else openTools[toolName] = rest;
  return { id: open[0]!, state: { ...state, openTools } };
}

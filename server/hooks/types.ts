import type { BridgeEvent, ReviewTextBound } from '../../shared/index.ts';
import type { TranscriptUsage } from './transcript.ts';

/**
 * Agent hooks: what each supported agent's hook payload means for the bridge. One pure mapping
 * per agent (`agents/<agent>.ts`), fixture-tested with payloads taken from the agent itself or its
 * documentation. The server runs a mapping for every payload posted to `POST /api/hooks/:agent`.
 */

/** The agents `rundiff hooks install` knows. */
export const HOOK_AGENTS = [
  'claude-code',
  'codex',
  'gemini',
  'cursor',
  'copilot',
  'opencode',
  'cline',
  'hermes',
] as const;
export type HookAgent = (typeof HOOK_AGENTS)[number];

/**
 * What a mapping remembers about one agent session between payloads: the open run (a prompt's
 * turn) and, for agents without tool-call ids, the tool calls started and not yet finished, in
 * order per tool name (a post event pairs with the oldest open pre event of the same tool).
 */
export interface HookSessionState {
  /** The run of the prompt being answered, null between prompts. */
  runId: string | null;
  /** Prompts seen in this session (to make run ids when the agent gives none). */
  prompts: number;
  /** Tool calls seen in this session (to make tool-call ids when the agent gives none). */
  tools: number;
  /** Open tool calls by tool name, oldest first, for agents without tool-call ids. */
  openTools: Record<string, string[]>;
  /** The session has been announced (session.upsert sent); optional so a mapping may ignore it. */
  announced?: boolean;
  /**
   * For agents whose hooks can arrive out of order (each a process of its own, some not awaited):
   * the agent's own id of what the open run answers (Cline's task id), so an event of another one
   * is told apart from one of the open run.
   */
  runOwner?: string;
  /** The run ended last and its owner, so a late report of its end still reaches it. */
  lastEnded?: { owner: string; runId: string };
}

export const initialHookState = (): HookSessionState => ({ runId: null, prompts: 0, tools: 0, openTools: {} });

/** What one payload means: the bridge events to send in order, and the session's next state. */
export interface HookMapping {
  /** The agent's own session id (the rundiff session id is derived from it). Null: not a payload of this agent. */
  sessionId: string | null;
  events: BridgeEvent[];
  state: HookSessionState;
}

/**
 * Where a hook's answer can carry a review to the agent: `prompt`, the answer to the hook that runs
 * when a prompt is submitted adds context to that prompt; `stop`, the answer to the hook that runs
 * when the agent finishes its turn asks it to continue.
 */
export type ReplySlot = 'prompt' | 'stop';

/** How an agent's hook answers can carry text to the agent (only agents with a documented way have one). */
export interface HookReply {
  /**
   * The most text one answer may carry so that the agent hands it to its model whole (an agent
   * replaces a longer text with a preview or a file path); a delivery carries what fits and the
   * rest of the review follows with the next answer.
   */
  bound: ReviewTextBound;
  /** Pure: which slot this payload's answer is, or null when its answer cannot carry text. */
  slot(payload: unknown): ReplySlot | null;
  /**
   * The answer carrying `text` in that slot, as an object: the server serialises it with
   * JSON.stringify, so the text is one JSON string value and cannot add other fields.
   */
  answer(slot: ReplySlot, text: string): Record<string, unknown>;
}

export interface AgentMapper {
  agent: HookAgent;
  /** How this agent's hook answers can carry a review; absent when they cannot. */
  reply?: HookReply;
  /**
   * The nested fields (dotted paths) read from a payload over the body limit besides the top-level
   * ones: where this agent puts the ids of what a payload ends (`oversize.ts`). Absent: top-level only.
   */
  overLimitPaths?: readonly string[];
  /**
   * Where the agent reports what a run cost: `pathOf` (pure) names its transcript from a payload
   * that ends a run (`transcript_path`), and `usage` finds the run's figures in it (`transcript.ts`,
   * `transcripts/`). Absent: the agent reports none, and its runs show none.
   */
  transcript?: { pathOf(payload: unknown): string | null; usage: TranscriptUsage };
  /** The version of the agent's hook format this mapping was written and checked against. */
  checkedVersion: string;
  /** Pure: one parsed hook payload and the session's state so far -> what it means. Never throws. */
  map(payload: unknown, state: HookSessionState): HookMapping;
}

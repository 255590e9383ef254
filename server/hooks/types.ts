import type { BridgeEvent } from '../../shared/index.ts';

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
}

export const initialHookState = (): HookSessionState => ({ runId: null, prompts: 0, tools: 0, openTools: {} });

/** What one payload means: the bridge events to send in order, and the session's next state. */
export interface HookMapping {
  /** The agent's own session id (the rundiff session id is derived from it). Null: not a payload of this agent. */
  sessionId: string | null;
  events: BridgeEvent[];
  state: HookSessionState;
}

export interface AgentMapper {
  agent: HookAgent;
  /** The version of the agent's hook format this mapping was written and checked against. */
  checkedVersion: string;
  /** Pure: one parsed hook payload and the session's state so far -> what it means. Never throws. */
  map(payload: unknown, state: HookSessionState): HookMapping;
}

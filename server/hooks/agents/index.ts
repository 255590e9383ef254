import type { AgentMapper, HookAgent } from '../types.ts';
import { claudeCodeMapper } from './claude-code.ts';
import { codexMapper } from './codex.ts';

/** The mapping of each agent the server accepts hooks from (one line per agent). */
export const MAPPERS: Partial<Record<HookAgent, AgentMapper>> = {
  'claude-code': claudeCodeMapper,
  codex: codexMapper,
};

import type { AgentMapper, HookAgent } from '../types.ts';
import { claudeCodeMapper } from './claude-code.ts';
import { clineMapper } from './cline.ts';
import { codexMapper } from './codex.ts';
import { copilotMapper } from './copilot.ts';
import { cursorMapper } from './cursor.ts';
import { geminiMapper } from './gemini.ts';
import { hermesMapper } from './hermes.ts';
import { opencodeMapper } from './opencode.ts';

/** The mapping of each agent the server accepts hooks from (one line per agent). */
export const MAPPERS: Partial<Record<HookAgent, AgentMapper>> = {
  'claude-code': claudeCodeMapper,
  codex: codexMapper,
  gemini: geminiMapper,
  cursor: cursorMapper,
  copilot: copilotMapper,
  opencode: opencodeMapper,
  cline: clineMapper,
  hermes: hermesMapper,
};

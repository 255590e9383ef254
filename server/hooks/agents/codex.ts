import type { AgentMapper } from '../types.ts';
import { claudeShapedMapper } from './claude-shaped.ts';
import { codexReply } from './replies.ts';

/** Codex CLI's hooks: Claude Code's payload shape, with `turn_id` naming a prompt's turn. */
export const codexMapper: AgentMapper = {
  ...claudeShapedMapper({
    agent: 'codex',
    label: 'Codex',
    checkedVersion: '0.169.0',
    promptIdField: 'turn_id',
  }),
  reply: codexReply,
};

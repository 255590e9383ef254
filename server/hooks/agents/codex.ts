import type { AgentMapper } from '../types.ts';
import { claudeShapedMapper } from './claude-shaped.ts';
import { codexUsage } from '../transcripts/codex.ts';
import { transcriptPathOf } from './kit.ts';
import { codexReply } from './replies.ts';

/**
 * Codex CLI's hooks: Claude Code's payload shape, with `turn_id` naming a prompt's turn. Codex also
 * fires them for `view_image` (reads a picture: no checkpoint, no block) and `apply_patch` (its
 * card names the patch's files, see `summarizeInput`). A run's tokens are read from Codex's
 * session log at its Stop (`transcripts/codex.ts`).
 */
export const codexMapper: AgentMapper = {
  ...claudeShapedMapper({
    agent: 'codex',
    label: 'Codex',
    checkedVersion: '0.169.0',
    promptIdField: 'turn_id',
    readOnlyTools: ['view_image'],
  }),
  reply: codexReply,
  transcript: { pathOf: transcriptPathOf, usage: codexUsage },
};

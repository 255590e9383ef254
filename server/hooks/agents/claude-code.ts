import type { AgentMapper } from '../types.ts';
import { claudeShapedMapper } from './claude-shaped.ts';
import { claudeCodeUsage } from '../transcripts/claude-code.ts';
import { transcriptPathOf } from './kit.ts';
import { claudeCodeReply } from './replies.ts';

/** Claude Code's hooks (2.1.x): its `type: "http"` hooks POST these payloads straight to the server. */
export const claudeCodeMapper: AgentMapper = {
  ...claudeShapedMapper({
    agent: 'claude-code',
    label: 'Claude Code',
    checkedVersion: '2.1.328',
    promptIdField: 'prompt_id',
  }),
  reply: claudeCodeReply,
  transcript: { pathOf: transcriptPathOf, usage: claudeCodeUsage },
};

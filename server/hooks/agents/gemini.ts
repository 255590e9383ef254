import type { AgentMapper, HookMapping, HookSessionState } from '../types.ts';
import { geminiReply } from './replies.ts';
import { geminiUsage } from '../transcripts/gemini.ts';
import { Mapping, isIn, isObject, nameSet, noMapping, safely, str, transcriptPathOf, workspaceOf } from './kit.ts';

/**
 * Gemini CLI command hooks, checked against Gemini CLI 0.61.0 run offline (and its hooks
 * documentation). Every payload carries the session id, the transcript path, the working folder,
 * the event name and a timestamp. The prompt arrives with BeforeAgent, a tool's name and input
 * with BeforeTool, its response (with an error field when it failed) with AfterTool, and the reply
 * with AfterAgent in its prompt response field. Gemini gives no tool-call id and no turn id, so a
 * tool's end pairs with the oldest open call of the same tool, and the timestamp keeps made-up ids
 * unique. SessionStart and SessionEnd open and close the session. A run's tokens are read from
 * Gemini's chat log when it ends (`transcripts/gemini.ts`).
 */

/** Tools that only read: no checkpoint, no card. */
const READ_ONLY = nameSet(
  'read_file',
  'read_many_files',
  'list_directory',
  'glob',
  'grep_search',
  'search_file_content',
  'web_fetch',
  'google_web_search',
);

function errorOf(response: unknown): string | undefined {
  if (!isObject(response)) return undefined;
  const e = response.error;
  if (typeof e === 'string' && e) return e;
  if (isObject(e)) return str(e.message) ?? 'the tool reported an error';
  return undefined;
}

function map(payload: unknown, state: HookSessionState): HookMapping {
  if (!isObject(payload)) return noMapping(state);
  const event = payload.hook_event_name;
  const m = Mapping.begin('gemini', payload.session_id, state, workspaceOf(payload.cwd), payload.timestamp);
  if (!m) return noMapping(state);
  const tool = str(payload.tool_name);
  switch (event) {
    case 'SessionStart':
      m.openSession(true);
      break;
    case 'BeforeAgent':
      m.startRun(undefined, str(payload.prompt));
      break;
    case 'BeforeTool':
      if (!tool) return noMapping(state);
      if (!isIn(READ_ONLY, tool)) m.startTool(tool, payload.tool_input);
      break;
    case 'AfterTool':
      if (!tool) return noMapping(state);
      if (!isIn(READ_ONLY, tool)) m.endTool(tool, errorOf(payload.tool_response));
      break;
    case 'AfterAgent':
      m.endRun({ reply: str(payload.prompt_response) });
      break;
    case 'SessionEnd':
      m.endRun({ failed: 'the session ended before the agent finished its turn' });
      break;
    default:
      return noMapping(state);
  }
  return m.done();
}

export const geminiMapper: AgentMapper = {
  agent: 'gemini',
  checkedVersion: '@google/gemini-cli 0.61.0',
  reply: geminiReply,
  transcript: { pathOf: transcriptPathOf, usage: geminiUsage },
  map: (payload, state) => safely(state, () => map(payload, state)),
};

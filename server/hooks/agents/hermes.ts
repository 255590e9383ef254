import type { AgentMapper, HookMapping, HookSessionState } from '../types.ts';
import { Mapping, isIn, isObject, nameSet, noMapping, safely, str, workspaceOf, type Json } from './kit.ts';

/**
 * Hermes Agent (NousResearch's hermes-agent) shell hooks: commands declared under `hooks:` in the
 * profile's config.yaml, run with a JSON payload on stdin. Checked against the "Event Hooks" page
 * of hermes-agent's documentation and its shell-hook wire protocol (November 2026; Hermes is not on
 * a registry reachable here, so the fixtures follow its documented payloads). Every payload has the
 * event name, the tool's name and input (null outside tool events), the session id, the working
 * folder, the profile and an `extra` object with the event's own fields: the turn id, the user
 * message and whether it is the first turn for pre_llm_call; the tool-call id for pre_tool_call;
 * the tool-call id, result, status and error message for post_tool_call; the assistant response for
 * post_llm_call; and completed, failed, interrupted and the turn's exit reason for on_session_end,
 * which fires at the end of every turn. A post_tool_call without a tool-call id pairs with the
 * oldest open call of the same tool.
 */

/** Tools that only read, search or talk: no checkpoint, no card. */
const READ_ONLY = nameSet(
  'read_file',
  'search_files',
  'web_search',
  'web_extract',
  'session_search',
  'skills_list',
  'skill_view',
  'todo',
  'clarify',
  'vision_analyze',
);

const SUCCESS = new Set(['success', 'ok', 'completed']);

const obj = (v: unknown): Json => (isObject(v) ? v : {});

function toolError(extra: Json): string | undefined {
  const status = str(extra.status);
  if (status === undefined || SUCCESS.has(status.toLowerCase())) return undefined;
  const message = str(extra.error_message) ?? str(extra.error_type);
  return message ? `${status}: ${message}` : status;
}

function turnEnd(extra: Json): string | undefined {
  if (extra.completed === true && extra.failed !== true && extra.interrupted !== true) return undefined;
  const reason = str(extra.turn_exit_reason) ?? str(extra.reason);
  const what = extra.interrupted === true ? 'interrupted' : 'the turn did not complete';
  return reason && reason !== what ? `${what} (${reason})` : what;
}

function map(payload: unknown, state: HookSessionState): HookMapping {
  if (!isObject(payload)) return noMapping(state);
  const extra = obj(payload.extra);
  const m = Mapping.begin('hermes', payload.session_id, state, workspaceOf(payload.cwd), extra.turn_id);
  if (!m) return noMapping(state);
  const tool = str(payload.tool_name);
  switch (payload.hook_event_name) {
    case 'on_session_start':
      m.openSession(true);
      break;
    case 'pre_llm_call':
      m.startRun(extra.turn_id, str(extra.user_message));
      break;
    case 'pre_tool_call':
      if (!tool) return noMapping(state);
      if (!isIn(READ_ONLY, tool)) m.startTool(tool, payload.tool_input, extra.tool_call_id);
      break;
    case 'post_tool_call':
      if (!tool) return noMapping(state);
      if (!isIn(READ_ONLY, tool)) m.endTool(tool, toolError(extra), extra.tool_call_id);
      break;
    case 'post_llm_call':
      m.endRun({ reply: str(extra.assistant_response) });
      break;
    case 'on_session_end': {
      // After a good turn post_llm_call has ended the run already; an open run here did not end well.
      const failed = turnEnd(extra);
      m.endRun(failed === undefined ? {} : { failed });
      break;
    }
    case 'on_session_finalize':
      m.endRun({ failed: 'the session was closed before the turn finished' });
      break;
    default:
      return noMapping(state);
  }
  return m.done();
}

export const hermesMapper: AgentMapper = {
  agent: 'hermes',
  // The tool-call id and how a turn ended are in `extra`, after the tool's input (and in
  // post_tool_call its arguments and result).
  overLimitPaths: [
    'extra.tool_call_id',
    'extra.completed',
    'extra.failed',
    'extra.interrupted',
    'extra.turn_exit_reason',
    'extra.reason',
  ],
  checkedVersion: 'hermes-agent shell hooks (Event Hooks documentation), November 2026',
  map: (payload, state) => safely(state, () => map(payload, state)),
};

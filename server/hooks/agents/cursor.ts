import type { AgentMapper, HookMapping, HookSessionState } from '../types.ts';
import { Mapping, isObject, noMapping, parseMaybeJson, safely, str, workspaceOf } from './kit.ts';

/**
 * Cursor agent hooks (hooks.json version 1), checked against Cursor's hooks documentation as of
 * Cursor 1.7-2.x (no Cursor CLI runs here; the fixtures follow the documented payloads). Every
 * payload carries the conversation id, the generation id of the prompt being answered, the event
 * name and the workspace roots. beforeSubmitPrompt has the prompt, beforeShellExecution and
 * afterShellExecution the command (and its output), beforeMCPExecution and afterMCPExecution the
 * MCP tool's name and input, afterFileEdit the edited file's path and its edits, afterAgentResponse
 * the reply text, and stop a status of completed, aborted or error.
 *
 * Cursor reports a file edit only after it happened (there is no hook before an edit), so an edit
 * gets no block of its own: it is stored as a tool message, and its change is in the prompt's run,
 * whose checkpoint was taken when the prompt was submitted. beforeReadFile only reads and maps to
 * nothing. Shell and MCP calls carry no call id and pair in order per tool.
 */

const SHELL = 'shell';

function map(payload: unknown, state: HookSessionState): HookMapping {
  if (!isObject(payload)) return noMapping(state);
  const m = Mapping.begin(
    'cursor',
    payload.conversation_id ?? payload.session_id,
    state,
    workspaceOf(payload.workspace_roots, payload.cwd),
    // the prompt's generation id keeps made-up tool ids unique should the server forget the counters
    payload.generation_id,
  );
  if (!m) return noMapping(state);
  const mcpTool = str(payload.tool_name) ? `mcp ${str(payload.tool_name)}` : undefined;
  switch (payload.hook_event_name) {
    case 'beforeReadFile':
      // Reading changes nothing: no checkpoint, no card.
      break;
    case 'sessionStart':
      m.openSession(true);
      break;
    case 'beforeSubmitPrompt':
      m.startRun(payload.generation_id, str(payload.prompt));
      break;
    case 'beforeShellExecution':
      if (!str(payload.command)) return noMapping(state);
      m.startTool(SHELL, { command: payload.command });
      break;
    case 'afterShellExecution':
      m.endTool(SHELL);
      break;
    case 'beforeMCPExecution':
      if (!mcpTool) return noMapping(state);
      m.startTool(mcpTool, parseMaybeJson(payload.tool_input));
      break;
    case 'afterMCPExecution':
      if (!mcpTool) return noMapping(state);
      m.endTool(mcpTool);
      break;
    case 'afterFileEdit': {
      // Whether a run is open depends on the state: decide inside the mapping, not before it.
      const file = str(payload.file_path);
      if (file && m.runId !== null) m.message('tool', `Edited ${file}`);
      break;
    }
    case 'afterAgentResponse':
      if (m.runId !== null) m.message('assistant', str(payload.text));
      break;
    case 'stop': {
      const status = payload.status;
      if (status === 'completed') m.endRun({});
      else if (status === 'aborted') m.endRun({ failed: 'aborted: the prompt was stopped before it finished' });
      else if (status === 'error') m.endRun({ failed: 'the agent stopped with an error' });
      else return noMapping(state);
      break;
    }
    case 'sessionEnd':
      m.endRun({ failed: 'the session ended before the agent finished its turn' });
      break;
    default:
      return noMapping(state);
  }
  return m.done();
}

export const cursorMapper: AgentMapper = {
  agent: 'cursor',
  checkedVersion: 'Cursor hooks documentation (hooks.json version 1), November 2026',
  map: (payload, state) => safely(state, () => map(payload, state)),
};

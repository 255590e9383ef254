import type { AgentMapper, HookMapping, HookSessionState } from '../types.ts';
import {
  ENDED_BY_NEXT_PROMPT,
  Mapping,
  isIn,
  isObject,
  nameSet,
  noMapping,
  parseMaybeJson,
  safely,
  str,
  workspaceOf,
  type Json,
} from './kit.ts';

/**
 * Cline hooks (executables named after the event in a hooks folder, JSON on stdin), checked against
 * the Cline CLI 3.0.65 run offline and the hook payloads of Cline's source. Two dialects are read.
 * The CLI's: a hook name of agent_start, agent_resume, prompt_submit, tool_call, tool_result,
 * agent_end, agent_abort or session_shutdown, with the task id, the root session id, the workspace
 * roots and a timestamp; a tool call as {id, name, input}, its result as {id, name, input, output,
 * error}, the end of a turn as {outputText, status}. The VS Code extension's: a hook name of
 * TaskStart, TaskResume, UserPromptSubmit, PreToolUse, PostToolUse, TaskComplete or TaskCancel with
 * the task id, the workspace roots and per-event objects (the prompt, the tool's name and
 * parameters, its result and success); it has no tool-call id, so a post event pairs with the
 * oldest open call of the same tool. The CLI did not fire its prompt hook for a task's first
 * prompt: the task's first tool call then opens the run, without the prompt's text. The CLI gives
 * each prompt a new task id under the same `sessionContext.rootSessionId`: sessions are keyed by
 * the root (the task id where there is none, as in the extension). Cline runs its task start and
 * end hooks without waiting for them, so they can reach the server out of order with the task's tool
 * calls: each run is owned by its task, and an event of another task never ends or joins it.
 */

/** Tools that only read or talk: no checkpoint, no card. */
const READ_ONLY = nameSet(
  'read_files',
  'read_file',
  'search_codebase',
  'search_files',
  'list_files',
  'list_code_definition_names',
  'web_fetch',
  'web_search',
  'fetch_web_content',
  'ask_followup_question',
  'ask_question',
  'attempt_completion',
  'plan_mode_respond',
);

const obj = (v: unknown): Json => (isObject(v) ? v : {});

/** The editor tool's `command` is its sub-command (create, str_replace...), not a shell command: its card shows the path. */
const cardInput = (tool: string, input: unknown): unknown =>
  tool === 'editor' && isObject(input) && typeof input.path === 'string' ? { path: input.path } : input;

const FAILED_STATUSES = new Set(['error', 'failed', 'aborted', 'cancelled', 'canceled']);

function errorText(e: unknown): string | undefined {
  if (typeof e === 'string') return e || undefined;
  if (isObject(e)) return str(e.message) ?? str(e.name) ?? 'the tool failed';
  return undefined;
}

function map(payload: unknown, state: HookSessionState): HookMapping {
  if (!isObject(payload)) return noMapping(state);
  // Each prompt of the CLI is a task of its own (a new taskId) under one root session: the session
  // is the root, so a conversation's prompts are one rundiff session with a run each.
  const m = Mapping.begin(
    'cline',
    obj(payload.sessionContext).rootSessionId ?? payload.taskId,
    state,
    workspaceOf(payload.workspaceRoots, obj(payload.workspaceInfo).rootPath),
    payload.timestamp,
  );
  if (!m) return noMapping(state);
  // A run is owned by its task: Cline does not wait for every hook (a task's start and end), and each
  // hook is a process of its own, so a task's first tool call can arrive before its start and a
  // task's end after the next task's first tool call.
  const task = str(payload.taskId);
  m.ownedBy(task);
  const call = obj(payload.tool_call);
  const result = obj(payload.tool_result);
  const pre = obj(payload.preToolUse);
  const post = obj(payload.postToolUse);
  switch (payload.hookName) {
    case 'agent_start':
    case 'agent_resume':
    case 'TaskStart':
    case 'TaskResume': {
      // This task's first tool call may have opened its run already: that run goes on.
      const ownRunOpen = task !== undefined && m.openRunOwner === task;
      // A new task of the root session is the next prompt: a run its last task left open ends.
      if (!ownRunOpen && (payload.hookName === 'agent_start' || payload.hookName === 'TaskStart'))
        m.endRun({ failed: ENDED_BY_NEXT_PROMPT });
      m.openSession(true);
      // The extension names the task's text when it starts; the CLI sends its prompt separately.
      const initial = str(obj(obj(payload.taskStart).taskMetadata).initialTask);
      if (initial) {
        if (ownRunOpen) m.message('user', initial);
        else m.startRun(undefined, initial);
      }
      break;
    }
    case 'prompt_submit':
    case 'UserPromptSubmit':
      m.startRun(undefined, str(obj(payload.userPromptSubmit).prompt));
      break;
    case 'tool_call':
    case 'PreToolUse': {
      const tool = str(call.name) ?? str(pre.toolName);
      if (!tool) return noMapping(state);
      const input = 'input' in call ? call.input : parseMaybeJson(pre.parameters);
      if (isIn(READ_ONLY, tool)) break;
      // A call of a newer task while an earlier task's run is open: that task's end was not reported (yet).
      if (m.openRunIsOthers) m.endRun({ failed: ENDED_BY_NEXT_PROMPT });
      m.startTool(tool, cardInput(tool, input), call.id);
      break;
    }
    case 'tool_result':
    case 'PostToolUse': {
      const tool = str(result.name) ?? str(post.toolName);
      if (!tool) return noMapping(state);
      const error =
        errorText(result.error) ?? (post.success === false ? (str(post.result) ?? 'the tool failed') : undefined);
      if (!isIn(READ_ONLY, tool) && !m.openRunIsOthers) m.endTool(tool, error, result.id);
      break;
    }
    case 'agent_end':
    case 'TaskComplete': {
      const turn = obj(payload.turn);
      const status = str(turn.status);
      const reply = str(turn.outputText);
      // The end of a task whose run the next task already ended: only its reply is left to keep.
      if (m.runId === null || m.openRunIsOthers) m.lateReply(reply);
      else if (status && FAILED_STATUSES.has(status.toLowerCase()))
        m.endRun({ reply, failed: `the turn ended: ${status}` });
      else m.endRun({ reply });
      break;
    }
    case 'agent_abort':
    case 'TaskCancel':
      if (m.openRunIsOthers) break;
      m.endRun({ failed: `cancelled${str(payload.reason) ? `: ${str(payload.reason)}` : ''}` });
      break;
    case 'session_shutdown':
      m.endRun({
        failed: `the session shut down${str(payload.reason) ? ` (${str(payload.reason)})` : ''} before the task finished`,
      });
      break;
    default:
      return noMapping(state);
  }
  return m.done();
}

export const clineMapper: AgentMapper = {
  agent: 'cline',
  // The session is in `sessionContext`, a tool result's name and id in `tool_result` or
  // `postToolUse`, how a turn ended in `turn`.
  overLimitPaths: [
    'sessionContext.rootSessionId',
    'tool_result.name',
    'tool_result.id',
    'postToolUse.toolName',
    'turn.status',
  ],
  checkedVersion: 'cline 3.0.65 (CLI) and the extension hook payloads of its source',
  map: (payload, state) => safely(state, () => map(payload, state)),
};

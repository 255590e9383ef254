import type { AgentMapper, HookMapping, HookSessionState } from '../types.ts';
import { Mapping, isIn, isObject, nameSet, noMapping, parseMaybeJson, safely, str, workspaceOf } from './kit.ts';

/**
 * GitHub Copilot CLI command hooks (hook files of version 1), checked against GitHub's "Copilot CLI
 * hooks reference" as of November 2026 (the CLI was not run here; the fixtures follow the documented
 * payloads). Both documented dialects are read: camelCase events (sessionStart, userPromptSubmitted,
 * preToolUse, postToolUse, postToolUseFailure, agentStop, sessionEnd, errorOccurred) with
 * sessionId, timestamp (ms), cwd, toolName, toolArgs (a JSON text in older releases), toolResult
 * with its resultType, error, errorContext and recoverable; and the PascalCase, snake_case dialect
 * compatible with the VS Code extension (SessionStart, UserPromptSubmit, PreToolUse, PostToolUse,
 * PostToolUseFailure, Stop, SessionEnd, ErrorOccurred) named by hook_event_name. Copilot gives no
 * tool-call id: a post event pairs with the oldest open call of the same tool. The camelCase dialect
 * names no event, so it is told by its fields.
 */

/** Tools that only read or ask: no checkpoint, no card. */
const READ_ONLY = nameSet('view', 'glob', 'grep', 'web_fetch', 'ask_user', 'read_bash', 'list_bash');

type Kind = 'start' | 'prompt' | 'pre' | 'post' | 'postFailure' | 'stop' | 'end' | 'error' | null;

const PASCAL: Record<string, Kind> = {
  SessionStart: 'start',
  UserPromptSubmit: 'prompt',
  PreToolUse: 'pre',
  PostToolUse: 'post',
  PostToolUseFailure: 'postFailure',
  Stop: 'stop',
  SessionEnd: 'end',
  ErrorOccurred: 'error',
};

/** The camelCase payloads carry no event name; each has fields no other one has. */
function kindOf(p: Record<string, unknown>): Kind {
  const named = str(p.hook_event_name);
  if (named) return PASCAL[named] ?? null;
  if ('toolResult' in p) return 'post';
  if ('toolName' in p) return typeof p.error === 'string' ? 'postFailure' : 'pre';
  if ('errorContext' in p || isObject(p.error)) return 'error';
  if ('stopReason' in p) return 'stop';
  if ('prompt' in p) return 'prompt';
  if ('source' in p) return 'start';
  if ('reason' in p) return 'end';
  return null;
}

function resultError(result: unknown): string | undefined {
  if (!isObject(result)) return undefined;
  const type = result.resultType ?? result.result_type;
  if (type === undefined || type === 'success') return undefined;
  const text = str(result.textResultForLlm) ?? str(result.text_result_for_llm);
  const name = typeof type === 'string' ? type : JSON.stringify(type);
  return text ? `${name}: ${text}` : name;
}

function map(payload: unknown, state: HookSessionState): HookMapping {
  if (!isObject(payload)) return noMapping(state);
  const kind = kindOf(payload);
  if (!kind) return noMapping(state);
  const m = Mapping.begin(
    'copilot',
    payload.sessionId ?? payload.session_id,
    state,
    workspaceOf(payload.cwd),
    payload.timestamp,
  );
  if (!m) return noMapping(state);
  const tool = str(payload.toolName) ?? str(payload.tool_name);
  const args = parseMaybeJson(payload.toolArgs ?? payload.tool_input);
  switch (kind) {
    case 'start':
      m.openSession(true);
      break;
    case 'prompt':
      m.startRun(undefined, str(payload.prompt));
      break;
    case 'pre':
      if (!tool) return noMapping(state);
      if (!isIn(READ_ONLY, tool)) m.startTool(tool, args);
      break;
    case 'post':
    case 'postFailure':
      if (!tool) return noMapping(state);
      if (isIn(READ_ONLY, tool)) break;
      m.endTool(
        tool,
        kind === 'postFailure'
          ? (str(payload.error) ?? 'the tool failed')
          : resultError(payload.toolResult ?? payload.tool_result),
      );
      break;
    case 'stop':
      m.endRun({});
      break;
    case 'end': {
      const reason = str(payload.reason);
      if (reason === 'complete') m.endRun({});
      else
        m.endRun({ failed: `the session ended (${reason ?? 'no reason given'}) before the agent finished its turn` });
      break;
    }
    case 'error': {
      // A recoverable error lets the agent go on: its turn's own end records the outcome. It is
      // still this session's payload (not an unreadable one), so it names the session.
      if (payload.recoverable === true) break;
      const error = isObject(payload.error) ? payload.error : {};
      const context = str(payload.errorContext) ?? str(payload.error_context);
      const text = str(error.message) ?? str(error.name) ?? 'the agent reported an error';
      m.endRun({ failed: context ? `${context}: ${text}` : text });
      break;
    }
  }
  return m.done();
}

export const copilotMapper: AgentMapper = {
  agent: 'copilot',
  checkedVersion: 'GitHub Copilot CLI hooks reference, November 2026',
  map: (payload, state) => safely(state, () => map(payload, state)),
};

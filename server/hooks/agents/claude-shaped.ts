import path from 'node:path';
import type { BridgeEvent } from '../../../shared/index.ts';
import type { AgentMapper, HookAgent, HookMapping, HookSessionState } from '../types.ts';
import {
  bounded,
  closeTool,
  ERROR_BOUND,
  hookSessionId,
  isObject,
  MESSAGE_BOUND,
  noMapping,
  openTool,
  sessionTitle,
  str,
  toolSummary,
  workspaceOf,
  type Json,
} from './kit.ts';

/**
 * Tools that only read: they change no file, so they get no checkpoint and no block of their own
 * (a checkpoint costs a scan of the workspace on every call).
 */
const READ_ONLY_TOOLS: ReadonlySet<string> = new Set([
  'Read',
  'Grep',
  'Glob',
  'LS',
  'WebFetch',
  'WebSearch',
  'NotebookRead',
  'TodoWrite',
]);

/**
 * The hook payloads of Claude Code, which Codex copied: every payload carries `session_id`, `cwd`
 * and `hook_event_name`; a prompt has an id (`prompt_id`, Codex `turn_id`), a tool call
 * `tool_use_id`. SessionStart (or the first payload of a session) -> session.upsert;
 * UserPromptSubmit -> run.started + the user's message; PreToolUse -> tool.started (not for tools
 * that only read); PostToolUse / PostToolUseFailure -> tool.completed; Stop -> the reply +
 * run.completed; StopFailure -> run.failed.
 */
export interface ClaudeShapedOptions {
  agent: HookAgent;
  /** The name shown in session titles. */
  label: string;
  checkedVersion: string;
  /** The payload field that names a prompt's turn. */
  promptIdField: 'prompt_id' | 'turn_id';
  /** The agent's own tools that only read, beside Claude Code's. */
  readOnlyTools?: readonly string[];
}

export function claudeShapedMapper(opts: ClaudeShapedOptions): AgentMapper {
  const { agent, label } = opts;
  const readOnly: ReadonlySet<string> = new Set([...READ_ONLY_TOOLS, ...(opts.readOnlyTools ?? [])]);

  function map(raw: unknown, state: HookSessionState): HookMapping {
    if (!isObject(raw)) return noMapping(state);
    const p = raw;
    const agentSession = str(p.session_id);
    if (agentSession === undefined) return noMapping(state);
    const session_id = hookSessionId(agent, agentSession);
    const cwd = str(p.cwd);
    const workspace = workspaceOf(cwd);
    const at = (w: string | undefined) => (w !== undefined ? { workspace: w } : {});
    const events: BridgeEvent[] = [];
    let next = state;
    const hookEvent = str(p.hook_event_name);

    if (hookEvent === 'SessionStart' || state.announced !== true) {
      const title = sessionTitle(`${label}${cwd !== undefined ? ` · ${path.basename(cwd)}` : ''}`);
      events.push({ type: 'session.upsert', session_id, title, ...at(workspace) });
      next = { ...next, announced: true };
    }

    /** The open run, or one opened here when a tool call arrives outside a known prompt (a restart). */
    const ensureRun = (): string => {
      if (next.runId !== null) return next.runId;
      const run_id = `turn-${next.prompts + 1}`;
      next = { ...next, runId: run_id, prompts: next.prompts + 1 };
      events.push({ type: 'run.started', session_id, run_id, source: 'coding-agent', ...at(workspace) });
      return run_id;
    };

    switch (hookEvent) {
      case 'UserPromptSubmit': {
        if (next.runId !== null) {
          // The previous prompt never reported its end (interrupted, or a hook lost): close it so
          // its checkpoint is released and its change is stored, and say why.
          events.push({
            type: 'run.failed',
            session_id,
            run_id: next.runId,
            error: 'a new prompt arrived before this one reported its end (interrupted?)',
          });
        }
        const run_id = str(p[opts.promptIdField]) ?? `prompt-${next.prompts + 1}`;
        next = { ...next, runId: run_id, prompts: next.prompts + 1 };
        events.push({ type: 'run.started', session_id, run_id, source: 'coding-agent', ...at(workspace) });
        const prompt = str(p.prompt);
        if (prompt !== undefined)
          events.push({
            type: 'message',
            session_id,
            role: 'user',
            content: bounded(prompt, MESSAGE_BOUND),
            run_id,
            message_id: `${run_id}:prompt`,
          });
        break;
      }
      case 'PreToolUse': {
        const tool = str(p.tool_name) ?? 'tool';
        if (readOnly.has(tool)) break;
        const run_id = ensureRun();
        let tool_call_id = str(p.tool_use_id);
        next = { ...next, tools: next.tools + 1 };
        if (tool_call_id === undefined) {
          tool_call_id = `tool-${next.tools}`;
          next = openTool(next, tool, tool_call_id);
        }
        const name = toolSummary(tool, p.tool_input, workspace);
        events.push({ type: 'tool.started', session_id, run_id, tool_call_id, name, ...at(workspace) });
        break;
      }
      case 'PostToolUse':
      case 'PostToolUseFailure': {
        const tool = str(p.tool_name) ?? 'tool';
        const run_id = next.runId;
        if (readOnly.has(tool) || run_id === null) break;
        let tool_call_id: string | null = str(p.tool_use_id) ?? null;
        if (tool_call_id === null) {
          const closed = closeTool(next, tool);
          next = closed.state;
          tool_call_id = closed.id;
        }
        if (tool_call_id === null) break;
        const failed = hookEvent === 'PostToolUseFailure';
        events.push({
          type: 'tool.completed',
          session_id,
          run_id,
          tool_call_id,
          ...(failed ? { error: bounded(errorText(p) ?? 'the tool call failed', ERROR_BOUND) } : {}),
        });
        break;
      }
      case 'Stop': {
        if (next.runId === null) break;
        const run_id = next.runId;
        const reply = str(p.last_assistant_message);
        if (reply !== undefined)
          events.push({
            type: 'message',
            session_id,
            role: 'assistant',
            content: bounded(reply, MESSAGE_BOUND),
            run_id,
            message_id: `${run_id}:reply`,
          });
        events.push({ type: 'run.completed', session_id, run_id });
        next = { ...next, runId: null, openTools: {} };
        break;
      }
      case 'StopFailure':
      case 'SessionEnd': {
        if (next.runId === null) break;
        const error =
          hookEvent === 'SessionEnd'
            ? 'the session ended before the prompt reported its end'
            : (errorText(p) ?? 'the turn ended with an error');
        events.push({ type: 'run.failed', session_id, run_id: next.runId, error: bounded(error, ERROR_BOUND) });
        next = { ...next, runId: null, openTools: {} };
        break;
      }
    }
    return { sessionId: agentSession, events, state: next };
  }

  return { agent, checkedVersion: opts.checkedVersion, map };
}

/** The failure text of a payload: `error` as a string, or its JSON, else null. */
function errorText(p: Json): string | null {
  const e = p.error ?? p.error_details;
  if (typeof e === 'string' && e !== '') return e;
  if (e !== undefined && e !== null) return JSON.stringify(e);
  return null;
}

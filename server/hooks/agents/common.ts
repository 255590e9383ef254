import path from 'node:path';
import type { HookAgent, HookSessionState } from '../types.ts';

/** Small readers and shapes the agents' mappings share. Pure. */

export type Payload = Record<string, unknown>;

export const asObject = (v: unknown): Payload | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Payload) : null;

/** A non-empty string field, else null. */
export const str = (o: Payload | null, key: string): string | null => {
  const v = o?.[key];
  return typeof v === 'string' && v !== '' ? v : null;
};

/** The rundiff session id of an agent's session: agents never share a session. */
export const hookSessionId = (agent: HookAgent, agentSessionId: string): string => `${agent}:${agentSessionId}`;

/** The payload's working folder when it is an absolute path (the bridge refuses anything else). */
export const workspaceOf = (cwd: string | null): string | undefined =>
  cwd !== null && path.isAbsolute(cwd) && !cwd.includes('\0') ? cwd : undefined;

/**
 * Tools that only read: they change no file, so they get no checkpoint and no block of their own
 * (a checkpoint costs a scan of the workspace on every call).
 */
export const READ_ONLY_TOOLS: ReadonlySet<string> = new Set([
  'Read',
  'Grep',
  'Glob',
  'LS',
  'WebFetch',
  'WebSearch',
  'NotebookRead',
  'TodoWrite',
]);

/** The longest tool summary, in characters: a card's title, not the input. */
export const MAX_SUMMARY_CHARS = 200;

const NOT_PRINTABLE = /[\p{Cc}\p{Cs}\p{Zl}\p{Zp}]+/gu;

/** One line of at most `max` characters (code points), cut with an ellipsis. */
export function oneLine(text: string, max = MAX_SUMMARY_CHARS): string {
  const flat = text.replace(NOT_PRINTABLE, ' ').replace(/\s+/g, ' ').trim();
  const points = [...flat];
  return points.length <= max ? flat : `${points.slice(0, max - 1).join('')}…`;
}

const PATH_FIELDS = ['file_path', 'notebook_path', 'path'];
const COMMAND_FIELDS = ['command', 'cmd'];

/**
 * A short, bounded summary of a tool call for its card: the command of a shell call, the file of
 * an edit (relative to the workspace when inside it), else the tool's name alone.
 */
export function toolSummary(toolName: string, input: unknown, cwd: string | null): string {
  const o = asObject(input);
  for (const key of COMMAND_FIELDS) {
    const v = o?.[key];
    const command =
      typeof v === 'string' ? v : Array.isArray(v) ? v.filter((x) => typeof x === 'string').join(' ') : '';
    if (command !== '') return oneLine(`${toolName}: ${command}`);
  }
  for (const key of PATH_FIELDS) {
    const file = str(o, key);
    if (file === null) continue;
    const rel = cwd !== null && path.isAbsolute(file) ? path.relative(cwd, file) : file;
    return oneLine(`${toolName}: ${rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file}`);
  }
  return oneLine(toolName);
}

/** Message text within the bridge's 1 MiB, cut on a character boundary with a note. */
export const MAX_MESSAGE_BYTES = 1024 * 1024;
export function boundedText(text: string, maxBytes = MAX_MESSAGE_BYTES): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const note = '\n[cut by rundiff: the message is longer than 1 MiB]';
  const budget = maxBytes - Buffer.byteLength(note, 'utf8');
  let out = '';
  let bytes = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (bytes + n > budget) break;
    out += ch;
    bytes += n;
  }
  return out + note;
}

/** An error text within the bridge's 64 KiB. */
export const boundedError = (text: string): string => boundedText(text, 64 * 1024);

/**
 * Pairing for agents without tool-call ids: a pre event opens an id under its tool's name, the
 * next post event of the same tool closes the oldest one.
 */
export function openTool(state: HookSessionState, toolName: string, id: string): HookSessionState {
  const open = state.openTools[toolName] ?? [];
  return { ...state, openTools: { ...state.openTools, [toolName]: [...open, id] } };
}
export function closeTool(state: HookSessionState, toolName: string): { id: string | null; state: HookSessionState } {
  const open = state.openTools[toolName] ?? [];
  if (open.length === 0) return { id: null, state };
  const rest = open.slice(1);
  const openTools = { ...state.openTools };
  if (rest.length === 0) delete openTools[toolName];
  else openTools[toolName] = rest;
  return { id: open[0]!, state: { ...state, openTools } };
}

import { MAX_RUN_COST_USD, type RunUsage } from '../../../shared/index.ts';
import { sumUsage, tokenCount } from '../transcript.ts';
import type { AgentMapper, HookMapping, HookSessionState } from '../types.ts';
import { Mapping, isIn, isObject, nameSet, noMapping, safely, str, workspaceOf, type Json } from './kit.ts';

/**
 * opencode, through the small plugin `rundiff hooks install opencode` writes: it posts
 * `{hook, directory, input, output}` for the plugin hooks tool.execute.before, tool.execute.after
 * and chat.message, and `{hook: "event", directory, event, reply?}` for the session events, as
 * opencode hands them to plugins (checked against opencode 1.18.33 run offline and its plugin
 * documentation). tool.execute.before and after carry the tool, the session id and the call id in
 * their input and the arguments in the before hook's output; chat.message carries the session id
 * in its input and the user message with its parts in its output; session.created carries the new
 * session's info (id, directory, title), session.idle and session.error the session id (and the
 * error's name and data). opencode's events carry no reply text at the end of a turn, so the plugin
 * adds the last assistant text it saw for the session as `reply`, and the tokens of each model call
 * of the turn as `steps` (opencode's step-finish parts: `{input, output, reasoning, cache: {read,
 * write}, cost}`, input without the cache reads, as opencode counts them; `cost` in US dollars, 0
 * when opencode knows no price for the model).
 */

/** Tools that only read or keep opencode's own notes: no checkpoint, no card. */
const READ_ONLY = nameSet(
  'read',
  'glob',
  'grep',
  'list',
  'webfetch',
  'websearch',
  'codesearch',
  'todoread',
  'todowrite',
);

const obj = (v: unknown): Json => (isObject(v) ? v : {});

function promptText(parts: unknown): string | undefined {
  if (!Array.isArray(parts)) return undefined;
  const texts = parts.filter((p) => isObject(p) && p.type === 'text' && !p.synthetic && typeof p.text === 'string');
  return texts.map((p) => (p as Json).text as string).join('\n') || undefined;
}

function errorText(error: unknown): string {
  const e = obj(error);
  return str(obj(e.data).message) ?? str(e.message) ?? str(e.name) ?? 'the session reported an error';
}

function toolError(output: Json): string | undefined {
  const exit = obj(output.metadata).exit;
  return typeof exit === 'number' && exit !== 0 ? `exit code ${exit}` : undefined;
}

/** The most model calls of one turn the plugin sends; a turn with more reports no tokens. */
export const MAX_OPENCODE_STEPS = 10_000;

/** A price in US dollars as opencode gives it (a step's `cost`): finite, 0 to a billion; else none. */
const dollars = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_RUN_COST_USD ? v : null;

/**
 * A turn's tokens from its model calls: input, output with the reasoning tokens (the model bills
 * both as output), the cache reads and writes. None when there are no calls or any call's figures
 * are not counts: a sum missing a call would be a wrong figure.
 */
function turnUsage(steps: unknown): RunUsage | null {
  if (!Array.isArray(steps) || steps.length > MAX_OPENCODE_STEPS) return null;
  const calls: RunUsage[] = [];
  for (const step of steps) {
    if (!isObject(step)) return null;
    const cache = obj(step.cache);
    const [input, output, reasoning, read, write] = [
      step.input,
      step.output,
      step.reasoning,
      cache.read,
      cache.write,
    ].map(tokenCount);
    if (input == null || output == null || reasoning == null || read == null || write == null) return null;
    const cost = dollars(step.cost);
    calls.push({
      input,
      output: output + reasoning,
      cache_read: read,
      cache_write: write,
      ...(cost !== null ? { cost_usd: cost } : {}),
    });
  }
  return sumUsage(calls);
}

function map(payload: unknown, state: HookSessionState): HookMapping {
  if (!isObject(payload)) return noMapping(state);
  const input = obj(payload.input);
  const output = obj(payload.output);
  const event = obj(payload.event);
  const props = obj(event.properties);
  const info = obj(props.info);
  const sessionId = payload.hook === 'event' ? (props.sessionID ?? info.id) : input.sessionID;
  const m = Mapping.begin('opencode', sessionId, state, workspaceOf(payload.directory, info.directory));
  if (!m) return noMapping(state);
  const tool = str(input.tool);
  switch (payload.hook) {
    case 'chat.message':
      m.startRun(obj(output.message).id ?? input.messageID, promptText(output.parts));
      break;
    case 'tool.execute.before':
      if (!tool || !str(input.callID)) return noMapping(state);
      if (!isIn(READ_ONLY, tool)) m.startTool(tool, output.args, input.callID);
      break;
    case 'tool.execute.after':
      if (!tool || !str(input.callID)) return noMapping(state);
      if (!isIn(READ_ONLY, tool)) m.endTool(tool, toolError(output), input.callID);
      break;
    case 'event':
      switch (event.type) {
        case 'session.created':
          m.openSession(true, str(info.title));
          break;
        case 'session.idle':
          m.endRun({ reply: str(payload.reply), usage: turnUsage(payload.steps) });
          break;
        case 'session.error':
          m.endRun({ failed: errorText(props.error) });
          break;
        default:
          return noMapping(state);
      }
      break;
    default:
      return noMapping(state);
  }
  return m.done();
}

export const opencodeMapper: AgentMapper = {
  agent: 'opencode',
  // The plugin posts a call's ids in `input`, before the arguments and the answer in `output`; a
  // session event its type, session and error in `event`, before the reply it adds.
  overLimitPaths: [
    'input.tool',
    'input.sessionID',
    'input.callID',
    'event.type',
    'event.properties.sessionID',
    'event.properties.error.name',
    'event.properties.error.message',
    'event.properties.error.data.message',
  ],
  checkedVersion: 'opencode-ai 1.18.33',
  map: (payload, state) => safely(state, () => map(payload, state)),
};

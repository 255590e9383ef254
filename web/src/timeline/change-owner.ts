import type { ChangeSummary } from '../../../shared/index.ts';

/** Long generated ids (UUIDs) are cut to this many characters in labels; the full id is in the tooltip. */
const SHORT_ID_CHARS = 8;
const GENERATED_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A run or tool call id as labels show it: generated ids (UUIDs) cut to 8 characters. */
export function shortId(id: string): string {
  return GENERATED_ID.test(id) ? id.slice(0, SHORT_ID_CHARS) : id;
}

/** A prompt is quoted in a label by its first line, cut to this many characters. */
const PROMPT_CHARS = 60;

/** A prompt as a label quotes it: its first line, cut to 60 characters. */
export function promptExcerpt(prompt: string): string {
  const line = prompt.trim().split('\n')[0]!.replace(/\s+/g, ' ');
  return line.length > PROMPT_CHARS ? `${line.slice(0, PROMPT_CHARS - 1).trimEnd()}…` : line;
}

/**
 * Which run or tool call a change block belongs to, in words: `Run r1 (coding-agent) · Fix the login`
 * (the run's short id, as its marker shows it, and its prompt when known), `Run 0b6f1c2d` for a
 * wrapped command (`rundiff run`: its command line is shown once, as the message above its run),
 * `Tool call edit_file · t1 in run r1`. `toolName` is the tool call's name when the timeline knows
 * it, `prompt` the run's first user message.
 */
export function changeOwnerLabel(
  change: Pick<ChangeSummary, 'source' | 'run_id' | 'tool_call_id'>,
  toolName?: string | null,
  prompt?: string | null,
): { text: string; title: string } {
  if (change.source === 'tool' && change.tool_call_id !== null) {
    const name = toolName ? `${toolName} · ` : '';
    return {
      text: `Tool call ${name}${shortId(change.tool_call_id)} in run ${shortId(change.run_id)}`,
      title: `tool call ${change.tool_call_id} of run ${change.run_id}`,
    };
  }
  const source = change.source && change.source !== 'run' ? ` (${change.source})` : '';
  const title = prompt?.trim() ? `run ${change.run_id}: ${prompt.trim().slice(0, 500)}` : `run ${change.run_id}`;
  // A wrapped command's block sits right under its run, whose command line the timeline shows just
  // above: the label names the run by its id alone (the command stays in the tooltip).
  const excerpt = prompt && change.source !== 'run' ? promptExcerpt(prompt) : '';
  if (excerpt === '') return { text: `Run ${shortId(change.run_id)}${source}`, title };
  return {
    text: `Run ${shortId(change.run_id)}${source} · ${excerpt}`,
    title,
  };
}

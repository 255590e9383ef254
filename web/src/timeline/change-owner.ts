import type { ChangeSummary } from '../../../shared/index.ts';

/** Long generated ids (UUIDs) are cut to this many characters in labels; the full id is in the tooltip. */
const SHORT_ID_CHARS = 8;
const GENERATED_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function shortId(id: string): string {
  return GENERATED_ID.test(id) ? id.slice(0, SHORT_ID_CHARS) : id;
}

/**
 * Which run or tool call a change block belongs to, in words: `Run 0b6f1c2d`, `Run r1 (coding-agent)`,
 * `Tool call edit_file · t1 in run r1`. `toolName` is the tool call's name when the timeline knows it.
 */
export function changeOwnerLabel(
  change: Pick<ChangeSummary, 'source' | 'run_id' | 'tool_call_id'>,
  toolName?: string | null,
): { text: string; title: string } {
  if (change.source === 'tool' && change.tool_call_id !== null) {
    const name = toolName ? `${toolName} · ` : '';
    return {
      text: `Tool call ${name}${shortId(change.tool_call_id)} in run ${shortId(change.run_id)}`,
      title: `tool call ${change.tool_call_id} of run ${change.run_id}`,
    };
  }
  const source = change.source && change.source !== 'run' ? ` (${change.source})` : '';
  return { text: `Run ${shortId(change.run_id)}${source}`, title: `run ${change.run_id}` };
}

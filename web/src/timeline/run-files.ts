import type { ChangeSummary, ToolCall } from '../../../shared/index.ts';

/**
 * A run's files are listed once, in the run's own block (its net change, where they are reviewed,
 * marked viewed and reverted); each tool call's block names the ones it made and links to them.
 */

/** The run's own change (not one of its tool calls'), or null while the run has none. */
export function runChangeOf(changes: readonly ChangeSummary[], runId: string): ChangeSummary | null {
  return changes.find((c) => c.run_id === runId && c.source !== 'tool') ?? null;
}

/** For each path a tool call of the run changed: the tools' names, in the order they ran. */
export function toolsByPath(
  changes: readonly ChangeSummary[],
  toolCalls: readonly Pick<ToolCall, 'tool_call_id' | 'name'>[],
  runId: string,
): Map<string, string[]> {
  const names = new Map(toolCalls.map((t) => [t.tool_call_id, t.name ?? 'tool call']));
  const out = new Map<string, string[]>();
  for (const c of changes) {
    if (c.run_id !== runId || c.source !== 'tool' || c.tool_call_id === null) continue;
    const name = names.get(c.tool_call_id) ?? 'tool call';
    for (const f of c.files) {
      const list = out.get(f.path) ?? [];
      if (!list.includes(name)) list.push(name);
      out.set(f.path, list);
    }
  }
  return out;
}

/**
 * Transcript lines in the shape Claude Code 2.1.x writes them (one JSON object a line): a prompt's
 * `user` line, the model's answer as one `assistant` line per content block sharing the message id
 * and usage, a tool's result as a `user` line of `tool_result` blocks. For tests.
 */
export interface TurnSpec {
  prompt: string;
  /** The prompt id written on the run's lines; omitted: a transcript that names no prompts. */
  promptId?: string;
  /** The model's messages of the turn: id, usage figures, and how many lines (content blocks) each takes. */
  messages: { id: string; input: number; output: number; cacheRead: number; cacheWrite: number; blocks: number }[];
}

export function transcriptLines(sessionId: string, turns: TurnSpec[]): string {
  const lines: unknown[] = [{ type: 'summary', summary: 'A session', leafUuid: 'u0' }];
  let n = 0;
  const base = (extra: Record<string, unknown>) => ({
    parentUuid: n === 0 ? null : `u${n}`,
    isSidechain: false,
    userType: 'external',
    cwd: '/home/dev/project',
    sessionId,
    version: '2.1.328',
    uuid: `u${++n}`,
    timestamp: new Date(1_700_000_000_000 + n * 1000).toISOString(),
    ...extra,
  });
  for (const t of turns) {
    const pid = t.promptId !== undefined ? { promptId: t.promptId } : {};
    lines.push(base({ type: 'user', message: { role: 'user', content: t.prompt }, ...pid }));
    t.messages.forEach((m, i) => {
      for (let b = 0; b < m.blocks; b++) {
        const tool = b === m.blocks - 1 && i < t.messages.length - 1;
        lines.push(
          base({
            type: 'assistant',
            requestId: `req_${m.id}`,
            message: {
              id: m.id,
              type: 'message',
              role: 'assistant',
              model: 'claude-sonnet-4-5',
              content: [
                tool
                  ? { type: 'tool_use', id: `toolu_${m.id}`, name: 'Bash', input: {} }
                  : { type: 'text', text: 'ok' },
              ],
              stop_reason: null,
              usage: {
                input_tokens: m.input,
                cache_creation_input_tokens: m.cacheWrite,
                cache_read_input_tokens: m.cacheRead,
                output_tokens: m.output,
                service_tier: 'standard',
              },
            },
          }),
        );
        if (tool)
          lines.push(
            base({
              type: 'user',
              message: {
                role: 'user',
                content: [{ type: 'tool_result', tool_use_id: `toolu_${m.id}`, content: 'done' }],
              },
              ...pid,
            }),
          );
      }
    });
  }
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

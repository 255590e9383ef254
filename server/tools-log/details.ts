import { MAX_CALL_ARGUMENTS_CHARS, type GitCommitOutput, type ToolCallRecord } from '../../shared/index.ts';

/** A call's input as the log keeps it: JSON, cut to a bound so a huge message cannot bloat the log. */
export function argumentsText(input: unknown): string | null {
  if (input === undefined) return null;
  let text: string;
  try {
    text = JSON.stringify(input) ?? 'null';
  } catch {
    return null; // not serialisable: nothing honest to show
  }
  return text.length <= MAX_CALL_ARGUMENTS_CHARS ? text : `${text.slice(0, MAX_CALL_ARGUMENTS_CHARS - 1)}…`;
}

/** The commit a successful git_commit made; null for anything else. */
export function commitOf(tool: string, ok: boolean, output: unknown): ToolCallRecord['commit'] {
  if (tool !== 'git_commit' || !ok) return null;
  const out = output as Partial<GitCommitOutput> | null;
  return typeof out?.hash === 'string' && typeof out.summary === 'string'
    ? { hash: out.hash, summary: out.summary }
    : null;
}

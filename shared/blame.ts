/**
 * Provenance ("which run wrote this line"): `GET /api/hermes/sessions/:id/blame` and the MCP tool
 * `blame_file` (docs/api.md, "Blame").
 */

/**
 * What wrote a line. `tool_call`: a tool call of a run; `run`: its run, outside any of its tool
 * calls' recorded changes; `outside`: changed between two runs by something rundiff did not record
 * (a user's edit), between `from` and `to`; `before_runs`: there when the first recorded change of
 * the file began; `not_kept`: a content on the way was not kept (evicted, too large, unreadable), so
 * the line is only known to be in the state the named run or tool call left; `truncated`: older
 * than the changes one blame walks (`RUNDIFF_BLAME_MAX_CHANGES`).
 */
export type BlameOriginKind = 'tool_call' | 'run' | 'outside' | 'before_runs' | 'not_kept' | 'truncated';

export interface BlameOrigin {
  kind: BlameOriginKind;
  /** The run (and tool call) that wrote the line; for `outside`, the run whose start saw the edit. */
  run_id: string | null;
  tool_call_id: string | null;
  /** The change whose end holds the line first (a run's or a tool call's). */
  change_id: string | null;
  run_title: string | null;
  /** The run's prompt (its first user message), cut to `BLAME_PROMPT_CHARS`. */
  prompt: string | null;
  /** The hook agent of the session (`claude-code`, ...) or the run's source (`run`, `workflow`, ...). */
  agent: string | null;
  tool_name: string | null;
  /** When the writing change ended (ms since the epoch). */
  at: number | null;
  /** `outside`: the window the edit happened in (the previous recorded end, the next start). */
  from: number | null;
  to: number | null;
}

export interface BlameLine {
  /** 1-based line number in the blamed state. */
  line: number;
  text: string;
  /** Index into `origins`. */
  origin: number;
}

export interface BlameResponse {
  session_id: string;
  path: string;
  /** The change whose end is blamed: the one asked for, or the session's last for `current`. */
  at_change_id: string | null;
  /** False when the file did not exist at that point (no lines). */
  exists: boolean;
  origins: BlameOrigin[];
  lines: BlameLine[];
  /** Changes of the file walked, and whether older ones were left out (`RUNDIFF_BLAME_MAX_CHANGES`). */
  changes_walked: number;
  truncated: boolean;
  /** A line diff hit its time bound: the lines of that step were attributed to it whole. */
  diff_gave_up: boolean;
}

/** Characters of a run's prompt a blame origin carries. */
export const BLAME_PROMPT_CHARS = 200;

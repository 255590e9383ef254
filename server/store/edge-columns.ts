import { CHANGE_FIELDS } from './changes.ts';
import { RUN_FIELDS, TOOL_CALL_FIELDS } from './runs.ts';

/**
 * The columns each kind of edge entry carries besides its keys: what an edge's outbox reads for a
 * batch and what a centre writes back (the entry names its key, the batch its session). One list
 * per kind, so the two ends cannot drift apart.
 */
export const EDGE_SESSION_COLUMNS = ['title', 'workspace', 'created_at', 'updated_at'] as const;
export const EDGE_MESSAGE_COLUMNS = ['role', 'content', 'run_id', 'tool_call_id', 'created_at'] as const;
export const EDGE_RUN_COLUMNS = RUN_FIELDS.filter((c) => c !== 'run_id' && c !== 'session_id');
/** A stored tool call also keeps its workspace, which the served record leaves out. */
export const EDGE_TOOL_CALL_COLUMNS = [
  ...TOOL_CALL_FIELDS.filter((c) => c !== 'tool_call_id' && c !== 'session_id'),
  'workspace',
] as const;
export const EDGE_CHANGE_COLUMNS = CHANGE_FIELDS.filter((c) => c !== 'change_id' && c !== 'session_id');
/** A change's file row as sent (`ord` orders them; the change and session are the entry's). */
export const EDGE_FILE_COLUMNS = [
  'id',
  'ord',
  'path',
  'old_path',
  'path_base64',
  'old_path_base64',
  'change_type',
  'additions',
  'deletions',
  'size_before',
  'size_after',
  'patch',
  'patch_bytes',
  'truncated',
  'binary',
  'omitted_reason',
  'created_at',
] as const;

/** Bridge events of docs/contract.md section 2: `POST /api/bridge/events`, one event per request. */
import type {
  ChangeSummary,
  FileSummary,
  Message,
  RunUsage,
  MessageRole,
  RunSource,
  Session,
  TruncatedReason,
  UntrackedReason,
  WorkspaceKind,
} from './dto.ts';

export interface SessionUpsertEvent {
  type: 'session.upsert';
  session_id: string;
  /** At most 500 characters. */
  title?: string;
  /** Absolute path. */
  workspace?: string;
}

export interface MessageEvent {
  type: 'message';
  session_id: string;
  role: MessageRole;
  /** At most 1 MiB. */
  content: string;
  message_id?: string;
  run_id?: string;
  tool_call_id?: string;
  created_at?: number;
}

export interface RunStartedEvent {
  type: 'run.started';
  session_id: string;
  run_id: string;
  workspace?: string;
  source?: RunSource;
  /** The run's own title, at most 500 characters; the session's title is left as it is. */
  title?: string;
}

export interface ToolStartedEvent {
  type: 'tool.started';
  session_id: string;
  run_id: string;
  tool_call_id: string;
  name?: string;
  workspace?: string;
}

export interface ToolCompletedEvent {
  type: 'tool.completed';
  session_id: string;
  run_id: string;
  tool_call_id: string;
  error?: string;
}

export interface RunFinishedEvent {
  type: 'run.completed' | 'run.failed';
  session_id: string;
  run_id: string;
  error?: string;
  /** `run.completed` only: the tokens the run used (and their price), as its agent reported them. */
  usage?: RunUsage;
}

export type BridgeEvent =
  SessionUpsertEvent | MessageEvent | RunStartedEvent | ToolStartedEvent | ToolCompletedEvent | RunFinishedEvent;

export type BridgeEventType = BridgeEvent['type'];

export const BRIDGE_EVENT_TYPES: readonly BridgeEventType[] = [
  'session.upsert',
  'message',
  'run.started',
  'tool.started',
  'tool.completed',
  'run.completed',
  'run.failed',
];

/** Response to `run.started` / `tool.started`. */
export type StartResponse =
  | {
      change_id: string;
      tracking: true;
      workspace_kind: WorkspaceKind;
      scanned_files: number;
      truncated: boolean;
      truncated_reasons: TruncatedReason[];
      duration_ms: number;
    }
  | { change_id: string; tracking: false; reason: UntrackedReason };

/** Response to `run.completed` / `run.failed` / `tool.completed`. */
export type CompleteResponse =
  | {
      change_id: string;
      tracking: true;
      changed_count: number;
      /** The first page of the stored rows; the rest through `GET .../files?after=next_file_cursor`. */
      files: FileSummary[];
      truncated: boolean;
      truncated_reasons: TruncatedReason[];
      omitted_count: number;
      /**
       * True when another run or tool call was open in the same workspace during this one, so its
       * files may include edits made by the other. Absent from answers stored by earlier releases.
       */
      overlapping?: boolean;
      /** Present only when `files` is the first page of more, as in ChangeSummary. */
      files_total?: number;
      next_file_cursor?: string;
    }
  | { change_id: string; tracking: false; reason: UntrackedReason };

export interface SessionUpsertResponse {
  session: Session;
}
export interface MessageResponse {
  message: Message;
}

/** The `change_id` of a whole run. */
export function runChangeId(runId: string): string {
  return `run:${runId}`;
}
/** The `change_id` of one tool call. */
export function toolChangeId(toolCallId: string): string {
  return `tool:${toolCallId}`;
}

export type { ChangeSummary };

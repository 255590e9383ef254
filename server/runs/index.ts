export { createRecorder, type Recorder, type RecorderDeps, type RunObserver } from './recorder.ts';
export { createHistory, type History, type DetailDocument } from './history.ts';
export { resolveChangeId, type ChangeIdResolver, MIN_PREFIX_CHARS, MAX_CANDIDATES } from './change-ids.ts';
export { silentEmitter, type RecorderEmitter, type EventPayload } from './emitter.ts';
export { diffCompletedPayload, toNewChange, toNewFile } from './payloads.ts';
export {
  parseBridgeEvent,
  bridgeEventSchema,
  isValidId,
  idSchema,
  workspaceSchema,
  errorTextSchema,
  MAX_MESSAGE_BYTES,
  MAX_ERROR_BYTES,
} from './event-schema.ts';
export { searchHistory, type SearchLimits, type SearchOptions } from './search.ts';
export { parseSearchQuery, type ParsedQuery } from './search-query.ts';
export { blameFile, type BlameLimits } from './blame.ts';
export { agentTrace, AGENT_TRACE_MAX_FILES, AGENT_TRACE_VERSION, type AgentTraceRecord } from './agent-trace.ts';

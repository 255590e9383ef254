/** The git tools' call log: every call over REST or MCP, in SQLite, newest first. */
export { CALLS_PAGE, createCallLog, type CallLog, type CallLogOptions, type NewToolCallRecord } from './call-log.ts';
export { argumentsText, commitOf } from './details.ts';

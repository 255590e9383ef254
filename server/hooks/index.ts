export { createHookRuntime, type HookRuntime, type HookOutcome } from './runtime.ts';
export { createHookStateStore, MAX_HOOK_SESSIONS } from './state.ts';
export { MAPPERS } from './agents/index.ts';
export {
  HOOK_AGENTS,
  initialHookState,
  type AgentMapper,
  type HookAgent,
  type HookReply,
  type HookSessionState,
  type ReplySlot,
} from './types.ts';

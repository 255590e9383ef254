export { createApp, type AppDeps } from './app.ts';
export { parseBridgeEvent, bridgeEventSchema, isValidId } from './bridge-schema.ts';
export {
  checkHostAndOrigin,
  tokenMatches,
  bearerToken,
  unauthorized,
  isLoopbackHost,
  isAllowedHost,
  isAllowedOrigin,
  type SecurityPolicy,
} from './security.ts';
export { DEFAULT_WEB_DIR } from './web.ts';
export { SESSIONS_PAGE, MESSAGES_PAGE } from './sessions.ts';
export { toolsRouter, type ToolsRouterDeps } from './tools.ts';

export { createApp, type AppDeps } from './app.ts';
export { DEFAULT_WEB_DIR } from './web.ts';
export { SESSIONS_PAGE, MESSAGES_PAGE } from './sessions.ts';
export { toolsRouter, type ToolsRouterDeps } from './tools.ts';

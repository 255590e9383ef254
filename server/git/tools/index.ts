export { callTool, findTool, GIT_TOOLS, invalidInput, type ToolCallResult, type ToolDefinition } from './call-tool.ts';
export type { ApproveCommit, ToolContext, ToolRun } from './context.ts';
export {
  candidateNames,
  createStaticCatalog,
  createWorkspaceCatalog,
  labelFor,
  openRepository,
  resolveRepository,
  selectRepository,
  type KnownRepository,
  type RepositoryCatalog,
  type ToolRepo,
  type WorkspaceCatalogOptions,
} from './repositories.ts';
export {
  ToolSession,
  ToolSessionStore,
  evaluateGate,
  type Review,
  type ReviewKind,
  type ToolSessionStoreOptions,
} from './review.ts';
export * as toolSchemas from './schemas.ts';

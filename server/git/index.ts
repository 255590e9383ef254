export * from './runner.ts';
export { createGitSpawner, type GitSpawner, type GitSpawnerInfo, type GitSpawnerOptions } from './helper-client.ts';
export { directLauncher } from './direct-spawn.ts';
export type { GitLauncher, GitSpawnEnd, GitSpawnRequest, SpawnedGit } from './launch.ts';
export * from './repo.ts';
export * from './diff-engine.ts';
export * from './tools/index.ts';
export * from './merge-file.ts';

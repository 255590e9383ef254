export * from './scenario.ts';
export * from './workspace.ts';

import { createGitStatusStrategy } from './git-status/index.ts';
import type { StrategyFactory } from './strategy.ts';
import { createWalkStrategy } from './walk/index.ts';

/**
 * The checkpoint strategies, in the order a workspace is offered to them: the first that takes it
 * records the checkpoint and completes it. The last one (the walk) takes any workspace, and also
 * completes the empty checkpoint of a start that could not be taken. A new strategy is a folder of
 * its own (strategy.ts is its interface) and one line here.
 */
export const STRATEGIES: readonly StrategyFactory[] = [createGitStatusStrategy, createWalkStrategy];

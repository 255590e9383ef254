/** Pure logic of the timeline: state reducers, item placement, row and patch formatting. */
export * from './change-rows.ts';
export * from './file-pages.ts';
export * from './markdown.ts';
export * from './reasons.ts';
export * from './session-state.ts';
export * from './sessions-list.ts';
export * from './timeline.ts';
export * from './net.ts';
export * from './progress.ts';
export * from './revert.ts';
export * from './windowing.ts';
export * from './file-tree.ts';
export * from './session-filter.ts';
export * from './change-owner.ts';
export * from './command-outcome.ts';
export * from './approval-text.ts';
export * from './viewed.ts';

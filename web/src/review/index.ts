/** Review comments: reducers, words for their states, grouping by file. */
export * from './review-state.ts';
export * from './review-text.ts';

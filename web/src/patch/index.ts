/** The patch viewer's logic: languages, highlighted tokens, word ranges, folded and split rows. */
export * from './lines.ts';
export * from './header.ts';
export * from './context.ts';
export * from './language.ts';
export * from './rows.ts';
export * from './tokens.ts';
export * from './whitespace.ts';
export * from './word-diff.ts';
export { loadHighlighter, type Highlighter } from './highlight.ts';
export * from './comments.ts';
export * from './blocks.ts';
export * from './enhance.ts';
export * from './undo-lines.ts';

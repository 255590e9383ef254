export { attribute, splitLines, type Attributed, type Attribution, type Snapshot } from './attribute.ts';

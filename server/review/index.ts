export { createReviews, type Reviews, type ReviewsDeps, type Delivery } from './reviews.ts';
export { reviewText, fenceFor, MAX_QUOTE_BYTES, type ReviewTextComment, type ReviewTextInput } from './text.ts';
export {
  findNearest,
  linesAt,
  patchSideLines,
  reanchor,
  splitLines,
  type AnchorToFind,
  type Reanchored,
  type SideLines,
  type Touch,
} from './anchor.ts';
export { readSideLines, type SideRead } from './side-lines.ts';

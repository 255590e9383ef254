export {
  createReviews,
  type Reviews,
  type ReviewsDeps,
  type Delivery,
  type DeliveryPart,
  type PendingDelivery,
} from './reviews.ts';
export {
  reviewText,
  fenceFor,
  escapeControls,
  DEFAULT_TEXT_BOUND,
  MAX_QUOTE_BYTES,
  type ReviewTextComment,
  type ReviewTextInput,
  type TextBound,
} from './text.ts';
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
export {
  createReviewReaders,
  reviewReaderOf,
  MAX_MCP_WORKSPACES,
  type HookAgents,
  type ReaderFacts,
  type ReviewReaders,
} from './reader.ts';

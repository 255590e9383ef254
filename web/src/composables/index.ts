/**
 * Composables returning plain objects of refs. The patch viewer's own (`usePatchWindow`,
 * `usePatchHighlight`, `useContextGaps`, `useCommentGutter`) are imported from their files by the
 * lazily loaded `PatchView.vue`, so they stay out of the page's first bundle.
 */
export { forgetPatches, usePatch, useWhitespacePatch, type PatchState, type WhitespacePatchState } from './usePatch.ts';
export { useNow } from './useNow.ts';
export { usePatchLayout } from './usePatchLayout.ts';
export { copyText, useCopy } from './useCopy.ts';
export { useRowKeys } from './useRowKeys.ts';
export { useDemo } from './useDemo.ts';
export { forgetChangeFiles, useChangeFiles, type ChangeFiles, type ChangeFilesHandle } from './useChangeFiles.ts';
export { useHideWhitespace } from './useHideWhitespace.ts';
export { useFileView, type FileView } from './useFileView.ts';
export { useFileLink, type FileLink } from './useFileLink.ts';
export { forgetFileContents, useFileContent, type SideText } from './useFileContent.ts';
export { useHideViewed } from './useHideViewed.ts';
export { useNetViewed, type NetViewedState } from './useNetViewed.ts';
export {
  COPIED_BY_HAND,
  fullTimeText,
  timeText,
  useReview,
  type Composer,
  type LineTarget,
  type ReviewHandle,
} from './useReview.ts';
export { useRevealLine, type LinePlace } from './useRevealLine.ts';
export { PATCH_COMMENTS, type PatchComments, type ThreadItem } from './usePatchComments.ts';
export { useHistorySearch } from './useHistorySearch.ts';

export { computeDelta, renameTimeoutMs } from './compute-delta.ts';
export { wholeRunPatch, wholeRunPatchParts, type FilePatchRow } from './whole-run-patch.ts';
export { blobId, countLines, isBinaryContent, BINARY_SNIFF_BYTES } from './content.ts';
export { cutToBytes, toPatchText } from './patch-text.ts';
export type * from './types.ts';
export { ignoreWhitespaceHunks, type WhitespaceHunks } from './ignore-whitespace.ts';

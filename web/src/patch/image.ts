/** Files whose before/after can be previewed as images (the server types their bytes by magic). */
const IMAGE_EXTENSIONS = ['.png', '.jpg', '.jpeg', '.gif', '.webp'];

export function isImagePath(path: string): boolean {
  const lower = path.toLowerCase();
  return IMAGE_EXTENSIONS.some((ext) => lower.endsWith(ext));
}

/**
 * One side of an image preview: loading, shown, or why not (the file is new or deleted, no bytes
 * were kept, the bytes are not an image the browser can show, the request failed).
 */
export type ImageSideState = 'loading' | 'shown' | 'added' | 'deleted' | 'absent' | 'not_image' | 'failed';

const NOTES: Record<Exclude<ImageSideState, 'shown'>, string> = {
  loading: 'Loading…',
  added: 'New image',
  deleted: 'Deleted',
  absent: 'No image kept',
  not_image: 'Not a previewable image',
  failed: 'Could not load',
};

/** What a side without a picture says. */
export function imageNote(state: ImageSideState): string {
  return state === 'shown' ? '' : NOTES[state];
}

/** Small images are drawn at least this large (their longer side, in CSS pixels)... */
export const PREVIEW_MIN_PX = 64;

/** ...by the whole factor that brings their longer side closest to it without passing it (1 for larger ones). */
export function previewScale(width: number, height: number): number {
  const longer = Math.max(width, height);
  if (longer <= 0 || longer >= PREVIEW_MIN_PX) return 1;
  return Math.max(1, Math.floor(PREVIEW_MIN_PX / longer));
}

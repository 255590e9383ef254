import { expect, it } from 'vitest';
import { imageNote, isImagePath, PREVIEW_MIN_PX, previewScale } from './image.ts';

it('previews PNG, JPEG, GIF and WebP by extension, in any case, and nothing else', () => {
  for (const p of ['a.png', 'dir/b.JPG', 'c.jpeg', 'd.gif', 'e.WebP']) expect(isImagePath(p)).toBe(true);
  for (const p of ['a.svg', 'png', 'b.png.txt', 'c.bmp', 'd.html']) expect(isImagePath(p)).toBe(false);
});

it('a side without a picture says why: new, deleted, not an image, not kept', () => {
  expect(imageNote('added')).toBe('New image');
  expect(imageNote('deleted')).toBe('Deleted');
  expect(imageNote('not_image')).toBe('Not a previewable image');
  expect(imageNote('absent')).toBe('No image kept');
});

it('small images are drawn at a whole factor up to the minimum size; others at their own', () => {
  expect(previewScale(8, 8)).toBe(8);
  expect(previewScale(3, 2)).toBe(21);
  expect(previewScale(40, 10)).toBe(1);
  expect(previewScale(PREVIEW_MIN_PX, 1)).toBe(1);
  expect(previewScale(800, 600)).toBe(1);
  expect(previewScale(0, 0)).toBe(1);
});

import { expect, it } from 'vitest';
import { isImagePath } from './image.ts';

it('previews PNG, JPEG, GIF and WebP by extension, in any case, and nothing else', () => {
  for (const p of ['a.png', 'dir/b.JPG', 'c.jpeg', 'd.gif', 'e.WebP']) expect(isImagePath(p)).toBe(true);
  for (const p of ['a.svg', 'png', 'b.png.txt', 'c.bmp', 'd.html']) expect(isImagePath(p)).toBe(false);
});

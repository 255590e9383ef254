import { runGit } from '../../git/index.ts';

/** Sizes of objects by id, from one `git cat-file --batch-check` (objects only, no filter runs); missing ids are absent. */
export async function blobSizes(
  cwd: string,
  oids: readonly string[],
  timeoutMs: number,
  env?: Record<string, string>,
): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  const unique = [...new Set(oids)];
  if (unique.length === 0) return sizes;
  const res = await runGit({
    cwd,
    args: ['cat-file', '--batch-check=%(objectname) %(objectsize)'],
    ...(env ? { env } : {}),
    input: unique.join('\n') + '\n',
    timeoutMs,
  });
  const text = res.stdout.toString('latin1');
  let pos = 0;
  while (pos < text.length) {
    let nl = text.indexOf('\n', pos);
    if (nl === -1) nl = text.length;
    const sp = text.indexOf(' ', pos);
    if (sp !== -1 && sp < nl) {
      const size = Number(text.slice(sp + 1, nl));
      if (Number.isFinite(size)) sizes.set(text.slice(pos, sp), size);
    }
    pos = nl + 1;
  }
  return sizes;
}

/** Whether a blob of `blobSize` bytes can be the file the index recorded `indexSize` for (low 32 bits). */
export function sizeAgrees(blobSize: number | undefined, indexSize: number): boolean {
  return blobSize !== undefined && blobSize % 2 ** 32 === indexSize % 2 ** 32;
}

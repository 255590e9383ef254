import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder of rundiff's own `package.json`: the checkout, or the installed package. The files
 * rundiff ships beside its code (the built web UI, the migrations, the hook client) are found from
 * here, so they resolve the same from the TypeScript sources and from the compiled `dist/server/`.
 */
export const PACKAGE_ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown };
      if (pkg.name === 'rundiff') return dir;
    } catch {
      // no package.json here (or not readable): look further up
    }
    if (path.dirname(dir) === dir) throw new Error(`rundiff's package.json was not found above ${from}`);
  }
}

/** A path inside the package. */
export const inPackage = (...parts: string[]): string => path.join(PACKAGE_ROOT, ...parts);

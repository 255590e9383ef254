import { readFileSync } from 'node:fs';
import { inPackage } from './package-root.ts';

/** The package version, served by `GET /api/health`. */
export const VERSION: string = (JSON.parse(readFileSync(inPackage('package.json'), 'utf8')) as { version: string })
  .version;

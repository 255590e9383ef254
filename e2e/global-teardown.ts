import fs from 'node:fs';

/** Removes the temporary folder holding the test servers' databases. */
export default function globalTeardown(): void {
  const dir = process.env.RUNDIFF_E2E_DIR;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}

import fs from 'node:fs';

/** Removes the temporary folder holding the screenshot server's database. */
export default function teardown(): void {
  const dir = process.env.RUNDIFF_SHOTS_DIR;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}

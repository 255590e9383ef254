import fs from 'node:fs';

/** Removes the temporary folder holding the web benchmark's database. */
export default function teardown(): void {
  const dir = process.env.RUNDIFF_BENCH_WEB_DIR;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}

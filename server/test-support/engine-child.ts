import fs from 'node:fs';
import readline from 'node:readline';
import { wholeRunPatch } from '../delta/whole-run-patch.ts';
import { resolved, testEngine } from './engine-harness.ts';

/**
 * Test support, run as its own process (possibly as another user): takes a checkpoint of the
 * folder in argv[2], says `started`, waits for one line on stdin, completes and prints the delta and
 * its whole-run patch as one JSON line. argv[3..] are paths it also tries to read by name, so a test
 * can show that this user really cannot read them (the positive control of a permission test).
 */

const [dir, ...probes] = process.argv.slice(2);
if (!dir) throw new Error('usage: engine-child.ts DIR [PROBE...]');
const engine = testEngine({}, { inThread: true });
await engine.start({ sessionId: 's', changeId: 'c', runId: 'c', workspace: await resolved(dir) });
process.stdout.write('started\n');
const lines = readline.createInterface({ input: process.stdin });
for await (const _line of lines) break;
lines.close();
const delta = await engine.complete('s', 'c');
const probeErrors = probes.map((p) => {
  try {
    fs.readFileSync(p);
    return null;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? 'error';
  }
});
process.stdout.write(
  JSON.stringify({ delta, patch: delta ? wholeRunPatch(delta.files) : null, probeErrors, uid: process.getuid?.() }) +
    '\n',
);
await engine.close();

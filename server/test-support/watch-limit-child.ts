import fs from 'node:fs';
import path from 'node:path';
import type { DiffProgressPayload } from '../../shared/index.ts';
import { fsFeedIgnore, LiveFeed } from '../live/index.ts';
import { resolved, testEngine } from './engine-harness.ts';

/**
 * Test support, run as its own process (in a user namespace whose inotify watch limit the test has
 * lowered): follows a run on the folder in argv[2] with the real engine and the live feed, writes
 * `after.txt` once the feed has settled on a mode, waits until a progress event lists it, and prints
 * `{mode, events, logs}` as one JSON line.
 */

const [dir] = process.argv.slice(2);
if (!dir) throw new Error('usage: watch-limit-child.ts DIR');
const engine = testEngine({}, { inThread: true });
const ws = await resolved(dir);
await engine.start({ sessionId: 's', changeId: 'run:r', runId: 'r', workspace: ws });
const events: DiffProgressPayload[] = [];
const logs: string[] = [];
const feed = new LiveFeed({
  maxWatches: 10_000,
  emit: (p) => events.push(p),
  log: (m) => logs.push(m),
  changedSoFar: async (run) => {
    const d = await engine.peek(run.sessionId, run.changeId);
    return d ? d.files.map((f) => f.path) : null;
  },
});
feed.open({ sessionId: 's', runId: 'r', changeId: 'run:r', root: ws.root }, fsFeedIgnore(ws.root));
const watching = await feed.ready('s', 'run:r');
const mode = watching ? 'watch' : feed.mode('s', 'run:r');
fs.writeFileSync(path.join(ws.root, 'after.txt'), 'a\n');
const end = Date.now() + 20_000;
while (!events.some((e) => e.touched.includes('after.txt')) && Date.now() < end)
  await new Promise((r) => setTimeout(r, 20));
const handles = feed.handles();
await feed.closeAll();
await engine.close();
process.stdout.write(JSON.stringify({ mode, events, logs, handles }) + '\n');

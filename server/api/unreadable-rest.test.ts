import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { io as connect } from 'socket.io-client';
import { afterEach, expect, it } from 'vitest';
import {
  createTempDir,
  createTempRepo,
  readableWithoutOverride,
  withoutPermissionOverride,
} from '../test-support/index.ts';
import { RUNDIFF_BIN } from '../test-support/cli-process.ts';

/**
 * End to end over REST and socket.io: the real server, run without the power to override file
 * permissions (as root: without CAP_DAC_OVERRIDE) so `chmod 000` really denies it, reports a file made unreadable during a
 * run as `modified` with `omitted_reason: "unreadable"`, never `deleted`, in the stored rows, the
 * live event and the whole-run patch.
 */

const BIN = RUNDIFF_BIN;
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

/** Starts `rundiff serve` as the unprivileged user; resolves with its URL once it says it serves. */
function serveAsOther(dbDir: string): Promise<string> {
  const [cmd, args] = withoutPermissionOverride(process.execPath, [
    BIN,
    'serve',
    '--port',
    '0',
    '--db',
    path.join(dbDir, 'r.db'),
  ]);
  const child = spawn(cmd, args, {
    env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent-home' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.push(() => child.kill('SIGTERM'));
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      const url = /serving on (http:\/\/\S+)/.exec(stderr)?.[1];
      if (url) resolve(url);
    });
    child.on('exit', (code) => reject(new Error(`server exited (${code}): ${stderr}`)));
  });
}

it.each([
  ['a git workspace', true],
  ['a filesystem workspace', false],
])(
  'in %s, a file made unreadable during a run is `modified` / `unreadable` in REST rows, the live event and the whole-run patch, never deleted',
  async (_label, useGit) => {
    const repo = createTempRepo({ git: useGit, files: { 'keep.txt': 'readable at the start\n', 'edit.txt': 'one\n' } });
    cleanups.push(() => repo.cleanup());
    const dbDir = createTempDir('rundiff-unreadable-db-');
    cleanups.push(() => fs.rmSync(dbDir, { recursive: true, force: true }));
    const url = await serveAsOther(dbDir);
    const post = async (event: object) => {
      const res = await fetch(`${url}/api/bridge/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(event),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as Record<string, unknown>;
    };
    const socket = connect(url, { transports: ['websocket'] });
    cleanups.push(() => socket.close());
    const live = new Promise<{ files: Array<{ path: string; change_type: string; omitted_reason: string | null }> }>(
      (resolve) => socket.on('workspace.diff.completed', resolve),
    );
    await post({ type: 'session.upsert', session_id: 's' });
    expect(await socket.emitWithAck('session.subscribe', { session_id: 's' })).toMatchObject({ ok: true });

    expect(await post({ type: 'run.started', session_id: 's', run_id: 'r', workspace: repo.dir })).toMatchObject({
      tracking: true,
    });
    fs.chmodSync(path.join(repo.dir, 'keep.txt'), 0o000);
    fs.writeFileSync(path.join(repo.dir, 'edit.txt'), 'two\n');
    // Positive control: the server's user really cannot read it now.
    expect(readableWithoutOverride(path.join(repo.dir, 'keep.txt'))).toBe(false);
    const done = await post({ type: 'run.completed', session_id: 's', run_id: 'r' });
    expect(done).toMatchObject({ changed_count: 2 });

    const stored = (
      (await (await fetch(`${url}/api/hermes/sessions/s/workspace-run-changes/run%3Ar`)).json()) as {
        change: {
          deleted_count: number;
          files: Array<{ path: string; change_type: string; omitted_reason: string | null }>;
        };
      }
    ).change;
    expect(stored.deleted_count).toBe(0);
    const view = (files: Array<{ path: string; change_type: string; omitted_reason: string | null }>) =>
      files.map((f) => `${f.change_type} ${f.path} ${f.omitted_reason}`);
    expect(view(stored.files)).toEqual(['modified edit.txt null', 'modified keep.txt unreadable']);
    expect(view((await live).files)).toEqual(['modified edit.txt null', 'modified keep.txt unreadable']);

    const patch = await (await fetch(`${url}/api/hermes/sessions/s/workspace-run-changes/run%3Ar/patch`)).text();
    expect(patch).toContain('# rundiff: keep.txt unreadable\n');
    expect(patch).not.toContain('deleted file mode');
  },
);

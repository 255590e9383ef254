import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ownServer, type OwnServer, test, workspace } from './support.ts';
import type { TempRepo } from '../server/test-support/temp-repo.ts';

export interface ApprovalServer {
  /** The server's origin (set once the spec's beforeAll ran). */
  readonly url: string;
  /** POSTs to a git tool over REST; the answer's status and JSON body. */
  post(name: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
  /** A fresh repository with a committer set, removed after the spec. */
  repo(files: Record<string, string>): TempRepo;
}

/**
 * A spec's own server with RUNDIFF_REQUIRE_COMMIT_APPROVAL=1 (commits wait for a person, 20 s),
 * started before its tests and stopped after them, with the repositories it made.
 */
export function approvalServer(name: string): ApprovalServer {
  let server: OwnServer | null = null;
  let dir = '';
  const repos: TempRepo[] = [];
  test.beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), `rundiff-e2e-${name}-`));
    server = await ownServer(path.join(dir, `${name}.db`), {
      RUNDIFF_REQUIRE_COMMIT_APPROVAL: '1',
      RUNDIFF_APPROVAL_TIMEOUT_MS: '20000',
    });
  });
  test.afterAll(async () => {
    await server?.stop();
    for (const r of repos) r.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    get url() {
      if (!server) throw new Error('the approval server starts in beforeAll');
      return server.url;
    },
    async post(tool, body) {
      const res = await fetch(`${this.url}/api/tools/${tool}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    repo(files) {
      const repo = workspace(files);
      repos.push(repo);
      repo.git('config', 'user.name', 'Agent');
      repo.git('config', 'user.email', 'agent@example.invalid');
      return repo;
    },
  };
}

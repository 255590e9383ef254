import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { findRepo } from '../git/index.ts';
import { UsageError } from './args.ts';
import { quotePath } from './quote-path.ts';

/** What to suggest for a `--server` value: its host and port after `http://`, or a whole example. */
function suggestedUrl(value: string): string {
  const rest = value.replace(/^[a-z][\w+.-]*:(\/\/)?/i, '').replace(/^\/+/, '');
  return rest === '' ? 'http://127.0.0.1:7420' : `http://${rest}`;
}

/**
 * `--server` must be a whole http(s) URL. Without a scheme (`127.0.0.1:7431`) it is refused: read
 * as "no server", the run would go silently into the local database while the server is running.
 */
export function parseServerUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(
      `--server ${JSON.stringify(value)} is not a URL; write it with its scheme, e.g. ${suggestedUrl(value)}`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(
      `--server ${JSON.stringify(value)} must start with http:// or https:// (e.g. ${suggestedUrl(value)})`,
    );
  }
  return url.origin;
}

/** The server the settings name, `http://$RUNDIFF_HOST:$RUNDIFF_PORT` (the host is checked by resolveConfig). */
export function defaultServerUrl(config: Pick<Config, 'host' | 'port'>): string {
  return `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
}

/** The web page of a session on the server at `serverUrl` (an origin). */
export function sessionPageUrl(serverUrl: string, sessionId: string): string {
  return `${serverUrl}/sessions/${encodeURIComponent(sessionId)}`;
}

export interface TrackedFolder {
  workspace: string;
  /** A line for stderr when what is tracked is not simply the folder named. */
  note: string | null;
}

/**
 * The folder a run tracks. From a subfolder of a repository the repository's top level is tracked
 * (edits elsewhere in it are found, and patch paths apply at its root); a folder named with
 * `--workspace` is tracked as named, with a plain word when it is only part of a repository.
 */
export async function trackedFolder(dir: string, named: boolean): Promise<TrackedFolder> {
  const folder = path.resolve(dir);
  // A missing folder is the server's to report (the run says why it was not tracked).
  if (!fs.statSync(folder, { throwIfNoEntry: false })?.isDirectory()) return { workspace: folder, note: null };
  let repo;
  try {
    repo = await findRepo(folder);
  } catch (err) {
    return {
      workspace: folder,
      note: `could not ask git about ${quotePath(folder)} (${(err as Error).message}); tracking the folder`,
    };
  }
  if (!repo || repo.prefix === '') return { workspace: folder, note: null };
  if (named) {
    return {
      workspace: folder,
      note: `tracking only ${quotePath(folder)}, part of the repository at ${quotePath(repo.topLevel)}; paths are relative to it`,
    };
  }
  return {
    workspace: repo.topLevel,
    note: `tracking the repository at ${quotePath(repo.topLevel)} (run from ${quotePath(`${repo.prefix}/`)})`,
  };
}

/** Said after the summary when another run or tool call was open in the workspace at the same time. */
export const OVERLAP_LINE =
  'rundiff: another run or tool call was open in this workspace at the same time: the files above may include its edits';

import { type ErrorBody, type RevertRequest, type RevertFile, type RevertResponse } from '../../shared/index.ts';
import { resolveConfig } from '../config.ts';
import { parseArgs, UsageError } from './args.ts';
import { connectServer, ServerNeedsToken } from './bridge-client.ts';
import { quotePath } from './quote-path.ts';
import { changeIdOf, changeUrlOf, fileIdsOf, hunkHeadersOf, lineIndexesOf, type GetJson } from './revert-target.ts';
import { defaultServerUrl } from './run-target.ts';

const HELP = `usage: rundiff revert [--server URL] [--dry-run] [--partial] <session> <change> [paths...]
       rundiff revert [--server URL] [--dry-run] <session> <change> <path> --hunk N[,N...]
       rundiff revert [--server URL] [--dry-run] <session> <change> <path> --hunk N --lines a-b,c

Undoes what a run (or one tool call) changed, through the running server: each file whose bytes are
still the run's end gets its start back; a file edited since is merged three ways. All or nothing:
when any file cannot be reverted (the merge conflicts: the conflicting lines are printed; its
contents were not kept; its path is refused) nothing is written. The revert is recorded in the
session as a run of its own, so it can be reverted too.

  <session>        the session id
  <change>         the change: run:<run id>, tool:<tool call id>, or a bare run id; the short id
                   the timeline shows will do (run:cc3e822d), unless it starts more than one id
  [paths...]       only these files of the change (as listed by the change; a rename by either name)
  --dry-run        print the plan and the patch each file would get; write nothing
  --partial        write the files that revert cleanly and leave the others as they are
  --hunk N[,N...]  undo only these hunks of the one path named (1 is its patch's first hunk, as
                   the timeline shows the patch); the rest of the file keeps the run's edits
  --lines a-b,c    with one --hunk: undo only these lines of it (1 is the first line after its
                   header); an unchosen + line stays, an unchosen - line stays removed
  --server URL     the rundiff server (default http://$RUNDIFF_HOST:$RUNDIFF_PORT, http://127.0.0.1:7420);
                   sends RUNDIFF_TOKEN when set

Exit status: 0 when every file asked for is reverted (or already was), 1 when any conflicts or
cannot be restored, 2 on a usage error (also an ambiguous short id: the candidates are listed) or when no server answers.
`;

const say = (line: string) => process.stderr.write(`${line}\n`);
const out = (text: string) => process.stdout.write(text);

function headers(token: string | null, json = false): Record<string, string> {
  const h: Record<string, string> = { accept: 'application/json' };
  if (token) h.authorization = `Bearer ${token}`;
  if (json) h['content-type'] = 'application/json';
  return h;
}

class Refused extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody | null,
  ) {
    super(body ? `${body.error.code}: ${body.error.message}` : `the server answered ${status}`);
  }
}

async function call<T>(url: URL, init: RequestInit): Promise<T> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(120_000) });
  const body: unknown = await res.json().catch(() => null);
  if (!res.ok) throw new Refused(res.status, body as ErrorBody | null);
  return body as T;
}

const LABEL: Record<RevertFile['action'], string> = {
  restore: 'restore',
  merge: 'merge',
  conflict: 'CONFLICT',
  unchanged: 'unchanged',
  unavailable: 'unavailable',
  refused: 'refused',
};

/** One line per file, then (for conflicts) the merge with its markers, indented. */
export function planLines(files: readonly RevertFile[], dryRun: boolean): string[] {
  const lines: string[] = [];
  for (const f of files) {
    const name = f.old_path !== null ? `${quotePath(f.path)} -> ${quotePath(f.old_path)}` : quotePath(f.path);
    const state = dryRun || f.action === 'unchanged' ? '' : f.applied ? ' (done)' : f.error ? ' (failed)' : '';
    lines.push(
      `${LABEL[f.action].padEnd(11)} ${name}${state}${f.reason ? `: ${f.reason}` : ''}${f.error ? `: ${f.error}` : ''}`,
    );
    if (f.conflict !== null) for (const l of f.conflict.replace(/\n$/, '').split('\n')) lines.push(`    ${l}`);
  }
  return lines;
}

const failedFile = (f: RevertFile) =>
  f.action === 'conflict' || f.action === 'unavailable' || f.action === 'refused' || f.error !== undefined;

export async function run(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseArgs(argv, { values: ['server', 'hunk', 'lines'], booleans: ['help', 'dry-run', 'partial'] });
  } catch (err) {
    if (err instanceof UsageError) {
      say(`rundiff revert: ${err.message}\n\n${HELP}`);
      return 2;
    }
    throw err;
  }
  if (args.booleans.has('help')) {
    out(HELP);
    return 0;
  }
  const [sessionId, change, ...paths] = args.positional;
  if (sessionId === undefined || change === undefined) {
    say(`rundiff revert: name the session and the change\n\n${HELP}`);
    return 2;
  }
  const changeId = changeIdOf(change);
  const dryRun = args.booleans.has('dry-run');
  const config = resolveConfig();
  const server = args.values.server ?? defaultServerUrl(config);
  try {
    if (!(await connectServer(server, config.token))) {
      say(`rundiff revert: no server at ${server}; start one with 'rundiff serve' (a revert goes through it)`);
      return 2;
    }
  } catch (err) {
    if (err instanceof ServerNeedsToken) {
      say(`rundiff revert: ${err.message}`);
      return 2;
    }
    throw err;
  }
  const changeUrl = changeUrlOf(sessionId, changeId);
  const get: GetJson = (p) => call(new URL(p, server), { headers: headers(config.token) });
  let answer: RevertResponse;
  try {
    const body: RevertRequest = { dry_run: dryRun };
    if (args.booleans.has('partial')) body.partial = true;
    const hunkArg = args.values.hunk;
    if (hunkArg !== undefined) {
      const numbers = hunkArg.split(',').map((n) => Number(n));
      if (paths.length !== 1 || numbers.some((n) => !Number.isInteger(n) || n < 1)) {
        say(`rundiff revert: --hunk takes hunk numbers (1, 2, ...) of exactly one path\n\n${HELP}`);
        return 2;
      }
      const linesArg = args.values.lines;
      const lines = linesArg === undefined ? null : lineIndexesOf(linesArg);
      if (linesArg !== undefined && (lines === null || numbers.length !== 1)) {
        say(`rundiff revert: --lines takes line numbers and ranges (3-5,8) of exactly one --hunk\n\n${HELP}`);
        return 2;
      }
      const { ids, unknown } = await fileIdsOf(get, changeUrl, paths);
      if (unknown.length > 0) {
        say(`rundiff revert: not changed by ${changeId}: ${unknown.map(quotePath).join(', ')}`);
        return 2;
      }
      const found = await hunkHeadersOf(get, changeUrl, ids[0]!, numbers);
      if (!found.ok) {
        say(`rundiff revert: ${quotePath(paths[0]!)} has ${found.count} hunk(s) in ${changeId}, not ${found.missing}`);
        return 2;
      }
      body.hunks = found.headers.map((hunk) => ({ file_id: ids[0]!, hunk }));
      if (lines !== null) body.hunks[0]!.lines = lines;
    } else if (args.values.lines !== undefined) {
      say(`rundiff revert: --lines needs --hunk N (the one hunk they are of)\n\n${HELP}`);
      return 2;
    } else if (paths.length > 0) {
      const { ids, unknown } = await fileIdsOf(get, changeUrl, paths);
      if (unknown.length > 0) {
        say(`rundiff revert: not changed by ${changeId}: ${unknown.map(quotePath).join(', ')}`);
        return 2;
      }
      body.file_ids = ids;
    }
    answer = await call<RevertResponse>(new URL(`${changeUrl}/revert`, server), {
      method: 'POST',
      headers: headers(config.token, true),
      body: JSON.stringify(body),
    });
  } catch (err) {
    if (!(err instanceof Refused)) throw err;
    const files = err.body?.error.details?.files as RevertFile[] | undefined;
    if (files) {
      for (const line of planLines(files, dryRun)) out(`${line}\n`);
      say(`rundiff revert: nothing was reverted (${err.message})`);
      const clean = files.filter((f) => f.action === 'restore' || f.action === 'merge').length;
      if (clean > 0 && files.some((f) => f.action !== 'restore' && f.action !== 'merge' && f.action !== 'unchanged'))
        say(`rundiff revert: --partial writes the ${clean} file(s) that revert cleanly and leaves the others`);
      return 1;
    }
    say(`rundiff revert: ${err.message}`);
    return err.status === 404 || err.status === 400 || err.body?.error.code === 'change_ambiguous' ? 2 : 1;
  }
  for (const line of planLines(answer.files, dryRun)) out(`${line}\n`);
  if (dryRun) {
    for (const f of answer.files) if (f.patch) out(f.patch.endsWith('\n') ? f.patch : `${f.patch}\n`);
    say(
      `rundiff revert: dry run: ${answer.applied_count} of ${answer.files.length} files would be written; nothing was`,
    );
  } else {
    say(
      `rundiff revert: ${answer.applied_count} of ${answer.files.length} files reverted` +
        (answer.revert_change_id ? ` (recorded as ${answer.revert_change_id})` : ''),
    );
  }
  return answer.files.some(failedFile) ? 1 : 0;
}

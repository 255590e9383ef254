import fs from 'node:fs';
import path from 'node:path';
import { resolveConfig } from '../config.ts';
import { AppError } from '../errors.ts';
import { VERSION } from '../version.ts';
import { parseArgs, UsageError } from './args.ts';
import { startStdioFront, type ServerIdentity } from './mcp-front.ts';

const HELP = `usage: rundiff mcp [--workspace DIR]... [--server URL] [--db FILE]

An MCP server on stdio offering git tools for agents: git_status, git_diff, git_log, git_show,
git_branch and git_commit (refused unless a git_diff in the same connection showed the files);
review_comments (the code review a person sent from rundiff for sessions in these workspaces) and
review_comments_addressed.
stdout carries only protocol frames; logs go to stderr.

  --workspace DIR  a repository (or a folder holding repositories) the tools may use; repeat for
                   several. The first is the default. Default: the current folder.
  --server URL     a running rundiff server: it records the tool calls, asks a person to approve
                   commits when it runs with --require-commit-approval, and answers run_changes
                   and revert_changes (offered only with --server). Sends RUNDIFF_TOKEN when set.
  --db FILE        without --server: the database that records the tool calls
                   (default RUNDIFF_DB, else ~/.local/share/rundiff/rundiff.db)
`;

const say = (line: string) => process.stderr.write(`rundiff mcp: ${line}\n`);

/** Who the server says it is; the same in the early `initialize` answer and in the SDK's Server. */
const MCP_IDENTITY: ServerIdentity = {
  info: { name: 'rundiff', version: VERSION },
  capabilities: { tools: {} },
  instructions:
    'Git tools for the workspace repositories. Check your work with git_status and git_diff; git_commit only commits files a git_diff in this connection showed (use staged: true for the staged set). review_comments returns the code review the user sent you through rundiff; mark what you addressed with review_comments_addressed. search_history finds earlier prompts, replies, commands and changed lines of every recorded session. blame_file tells which recorded run and tool call wrote each line of a file.',
};

function checkWorkspaces(dirs: readonly string[], roots: readonly string[] | null): string[] {
  return dirs.map((dir) => {
    let real: string;
    try {
      real = fs.realpathSync(dir);
    } catch {
      throw new AppError('invalid_input', `--workspace ${dir} does not exist`);
    }
    if (!fs.statSync(real).isDirectory()) throw new AppError('invalid_input', `--workspace ${dir} is not a folder`);
    if (roots) {
      const inside = roots.some((r) => {
        const rel = path.relative(fs.existsSync(r) ? fs.realpathSync(r) : r, real);
        return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
      });
      if (!inside) throw new AppError('invalid_input', `--workspace ${dir} is outside RUNDIFF_WORKSPACE_ROOTS`);
    }
    return real;
  });
}

export async function run(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseArgs(argv, { values: ['server', 'db'], multi: ['workspace'], booleans: ['help'] });
  } catch (err) {
    if (err instanceof UsageError) {
      say(`${err.message}\n\n${HELP}`);
      return 2;
    }
    throw err;
  }
  if (args.booleans.has('help')) {
    process.stdout.write(HELP);
    return 0;
  }
  if (args.positional.length > 0) {
    say(`unexpected argument ${JSON.stringify(args.positional[0])}\n\n${HELP}`);
    return 2;
  }
  if (args.values.server !== undefined && !URL.canParse(args.values.server)) {
    say(`--server ${JSON.stringify(args.values.server)} is not a URL`);
    return 2;
  }
  const config = resolveConfig({ db: args.values.db });
  const workspaces = checkWorkspaces(args.multi.workspace ?? [process.cwd()], config.workspaceRoots);

  // stdout belongs to the protocol: anything printed by accident goes to stderr instead.
  console.log = console.error;
  console.info = console.error;

  // A client waits for its initialize answer: it gets it now, while the tools, the SDK and the
  // store load (most of the start-up time).
  const front = startStdioFront(MCP_IDENTITY);
  try {
    const { serveTools } = await import('./mcp-tools.ts');
    return await serveTools({ server: args.values.server, config, workspaces, front, identity: MCP_IDENTITY, say });
  } finally {
    front.close();
  }
}

/**
 * `rundiff <command>`: each command lives in its own module, loaded only when used; so do the error
 * types, so that `--version` and `--help` load nothing else.
 */
const COMMANDS: Record<string, { summary: string; load: () => Promise<{ run: (argv: string[]) => Promise<number> }> }> =
  {
    serve: { summary: 'run the server: API, socket.io and the web UI', load: () => import('./serve.ts') },
    run: { summary: 'wrap a command (an agent CLI, a script) as one tracked run', load: () => import('./run.ts') },
    mcp: { summary: 'an MCP server on stdio offering the git tools', load: () => import('./mcp.ts') },
    hooks: {
      summary: "feed rundiff from an agent's hooks: install, uninstall, status",
      load: () => import('./hooks.ts'),
    },
    revert: {
      summary: 'undo what a run or tool call changed (through the running server)',
      load: () => import('./revert.ts'),
    },
    demo: { summary: 'play a scripted agent session against a running server', load: () => import('./demo.ts') },
  };

export function usage(): string {
  const rows = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(7)} ${c.summary}`);
  return [
    'usage: rundiff <command> [options]',
    '',
    'commands:',
    ...rows,
    '',
    'rundiff <command> --help for its options.',
    '',
  ].join('\n');
}

export async function main(argv: string[]): Promise<void> {
  // A reader that went away (`rundiff run ... 2>&1 | head -1`) must not end a command midway: a
  // run would go unrecorded. What no one reads any more is dropped; other write errors still end it.
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
    });
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    process.exitCode = name === undefined ? 2 : 0;
    return;
  }
  if (name === '--version' || name === '-v') {
    const { VERSION } = await import('../version.ts');
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`rundiff: unknown command ${JSON.stringify(name)}\n\n${usage()}`);
    process.exitCode = 2;
    return;
  }
  try {
    const mod = await command.load();
    const code = await mod.run(rest);
    if (code !== undefined) process.exitCode = code;
  } catch (err) {
    const [{ SettingError }, { AppError }] = await Promise.all([import('../config.ts'), import('../errors.ts')]);
    if (err instanceof SettingError) {
      process.stderr.write(`rundiff ${name}: ${err.message}${err.hint ? `\n  ${err.hint}` : ''}\n`);
      process.exitCode = 2;
      return;
    }
    const message =
      err instanceof AppError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
    process.stderr.write(`rundiff ${name}: ${message}\n`);
    process.exitCode = 1;
  }
}

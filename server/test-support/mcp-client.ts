import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { RUNDIFF_BIN } from './cli-process.ts';

/**
 * `rundiff mcp ...args` as a child process on stdio with a bare environment (PATH, HOME, then
 * `env`), driven by the MCP SDK's own Client, which checks structured content against the listed
 * output schemas. Its stderr is collected; `close` ends both.
 */
export async function startMcpClient(
  args: string[],
  env: Record<string, string> = {},
  name = 'test',
  version = '1.0.0',
): Promise<{ client: Client; stderr: () => string; close: () => Promise<void> }> {
  let stderr = '';
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [RUNDIFF_BIN, 'mcp', ...args],
    stderr: 'pipe',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
  });
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name, version });
  await client.connect(transport);
  return { client, stderr: () => stderr, close: () => client.close() };
}

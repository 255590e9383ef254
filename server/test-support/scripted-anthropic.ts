/**
 * Test fixture: a scripted model behind the Anthropic Messages API, so the real Claude Code CLI can
 * run offline against it. It answers `POST /v1/messages` (with or without `?beta=true`) with the
 * streaming server-sent events the CLI expects. The main loop (requests that offer `tools`) follows
 * a script: for each prompt, a list of turns, each a tool call or a final text; the next turn is
 * sent each time the CLI comes back with a tool result. Side requests (no `tools`: titles,
 * summaries) get a short text.
 *
 * It runs inside the test process, on the event loop: the CLI must be started asynchronously
 * (a synchronous spawn from this process would wait for an answer this process can never send).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { scriptCursor } from './script-cursor.ts';

export type ScriptedTurn = { tool: string; input: Record<string, unknown> } | { text: string };

/** One prompt's turns: the first answers the prompt, each next one answers the previous tool's result. */
export interface ScriptedPrompt {
  /** The turns are used for the first main-loop request whose last user text contains this. */
  match: string;
  turns: ScriptedTurn[];
}

export interface ScriptedRequest {
  path: string;
  /** True for main-loop requests (they offer tools). */
  main: boolean;
  body: unknown;
}

export interface ScriptedAnthropic {
  url: string;
  /** Every request received, in order. */
  requests: ScriptedRequest[];
  /** Every tool call sent to the CLI, in order, with the id the CLI reports it under. */
  toolUses: { id: string; name: string }[];
  close(): Promise<void>;
}

const MODEL = 'claude-sonnet-4-5';

interface ContentBlock {
  type?: string;
  text?: string;
}
interface Message {
  role?: string;
  content?: string | ContentBlock[];
}

/** The text the person typed last (tool results are user messages too, without text). */
function lastUserText(messages: Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    const texts = (m.content ?? []).filter((b) => b.type === 'text').map((b) => b.text ?? '');
    if (texts.length) return texts.join('\n');
  }
  return '';
}

/** True when the last user message carries a tool result (the CLI reporting a tool's outcome). */
function isToolResult(messages: Message[]): boolean {
  const last = messages[messages.length - 1];
  return Array.isArray(last?.content) && last.content.some((b) => b.type === 'tool_result');
}

function sse(res: http.ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export interface ScriptedOptions {
  /**
   * Runs before each main-loop request is answered (the request is already in `requests`): a test
   * can change the world at a known point of the agent's turn. The answer waits for it.
   */
  beforeAnswer?: (request: ScriptedRequest) => Promise<void> | void;
}

export async function startScriptedAnthropic(
  script: ScriptedPrompt[],
  opts: ScriptedOptions = {},
): Promise<ScriptedAnthropic> {
  const requests: ScriptedRequest[] = [];
  const toolUses: { id: string; name: string }[] = [];
  let answers = 0;
  const turnAfter = scriptCursor<ScriptedTurn, ScriptedPrompt>(script, (text) => ({ text }));
  const nextTurn = (messages: Message[]): ScriptedTurn =>
    turnAfter(isToolResult(messages), () => lastUserText(messages));

  const answer = (res: http.ServerResponse, turn: ScriptedTurn): void => {
    answers++;
    // Every answer its own message id: the CLI merges answers that share one into a single turn.
    const id = `msg_scripted_${answers}`;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const usage = { input_tokens: 10, output_tokens: 10 };
    sse(res, 'message_start', {
      type: 'message_start',
      message: { id, type: 'message', role: 'assistant', model: MODEL, content: [], stop_reason: null, usage },
    });
    if ('tool' in turn) {
      const block = { type: 'tool_use', id: `toolu_scripted_${answers}`, name: turn.tool, input: {} };
      toolUses.push({ id: block.id, name: turn.tool });
      sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: block });
      sse(res, 'content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(turn.input) },
      });
    } else {
      sse(res, 'content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'text', text: '' },
      });
      sse(res, 'content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text: turn.text },
      });
    }
    sse(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
    sse(res, 'message_delta', {
      type: 'message_delta',
      delta: { stop_reason: 'tool' in turn ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: 10 },
    });
    sse(res, 'message_stop', { type: 'message_stop' });
    res.end();
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0];
      if (req.method !== 'POST' || path !== '/v1/messages') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'not scripted' } }));
        return;
      }
      let body: { tools?: unknown[]; messages?: Message[] } = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        // A body that is not JSON gets the side answer below.
      }
      const main = Array.isArray(body.tools) && body.tools.length > 0;
      const request = { path: req.url ?? '', main, body };
      requests.push(request);
      if (!main || !opts.beforeAnswer) {
        answer(res, main ? nextTurn(body.messages ?? []) : { text: 'Scripted title' });
        return;
      }
      void Promise.resolve(opts.beforeAnswer(request)).then(
        () => answer(res, nextTurn(body.messages ?? [])),
        (err: unknown) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: String(err) } }));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    toolUses,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

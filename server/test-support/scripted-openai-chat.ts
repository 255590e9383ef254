/**
 * Test fixture: a scripted model behind the OpenAI chat-completions API, so the real opencode and
 * Cline CLIs can run offline against it. It answers `POST /v1/chat/completions` with streamed
 * chunks. The main loop (requests that offer tools) follows a script as in scripted-anthropic.ts:
 * for each prompt, a list of turns, each a tool call or a final text, the next sent each time the
 * CLI comes back with a tool's result. Requests without tools (opencode's title request) get a
 * short text. `GET /v1/models` lists the one model, for clients that ask.
 *
 * It runs inside the test process: the CLI must be started asynchronously.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { scriptCursor } from './script-cursor.ts';

export type ChatTurn = { tool: string; input: Record<string, unknown> } | { text: string };

export interface ChatPrompt {
  /** The turns are used for the first main-loop request whose last user text contains this. */
  match: string;
  turns: ChatTurn[];
}

export interface ChatRequest {
  path: string;
  /** True for main-loop requests (they offer tools). */
  main: boolean;
  body: unknown;
}

export interface ScriptedChat {
  url: string;
  /** Every request received, in order. */
  requests: ChatRequest[];
  /** Every tool call sent to the CLI, in order, with the call id it was sent under. */
  toolUses: { id: string; name: string }[];
  close(): Promise<void>;
}

interface Message {
  role?: string;
  content?: string | { type?: string; text?: string }[] | null;
}
interface Body {
  model?: string;
  messages?: Message[];
  tools?: unknown[];
}

const textOf = (m: Message): string =>
  typeof m.content === 'string'
    ? m.content
    : (m.content ?? [])
        .filter((c) => c.type === 'text')
        .map((c) => c.text ?? '')
        .join('\n');

/** The text the person typed last. */
function lastUserText(messages: Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === 'user' && textOf(m)) return textOf(m);
  }
  return '';
}

/** True when the conversation ends with a tool's result (opencode and Cline both send a `tool` message). */
const isToolResult = (messages: Message[]): boolean => messages[messages.length - 1]?.role === 'tool';

export async function startScriptedChat(script: ChatPrompt[]): Promise<ScriptedChat> {
  const requests: ChatRequest[] = [];
  const toolUses: { id: string; name: string }[] = [];
  let answers = 0;
  const turnAfter = scriptCursor<ChatTurn, ChatPrompt>(script, (text) => ({ text }));
  const nextTurn = (messages: Message[]): ChatTurn => turnAfter(isToolResult(messages), () => lastUserText(messages));

  const answer = (res: http.ServerResponse, model: string, turn: ChatTurn): void => {
    answers++;
    const id = `chatcmpl-scripted-${answers}`;
    const created = Math.floor(Date.now() / 1000);
    const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [{ index: 0, delta, finish_reason: finish }],
        ...extra,
      })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if ('tool' in turn) {
      const callId = `call_scripted_${answers}`;
      toolUses.push({ id: callId, name: turn.tool });
      res.write(
        chunk(
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                index: 0,
                id: callId,
                type: 'function',
                function: { name: turn.tool, arguments: JSON.stringify(turn.input) },
              },
            ],
          },
          null,
        ),
      );
      res.write(chunk({}, 'tool_calls'));
    } else {
      res.write(chunk({ role: 'assistant', content: turn.text }, null));
      res.write(chunk({}, 'stop'));
    }
    res.write(
      `data: ${JSON.stringify({
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      })}\n\n`,
    );
    res.end('data: [DONE]\n\n');
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0];
      if (req.method === 'GET' && path === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'm', object: 'model', owned_by: 'scripted' }] }));
        return;
      }
      if (req.method !== 'POST' || path !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'not scripted' } }));
        return;
      }
      let body: Body = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Body;
      } catch {
        // A body that is not JSON gets the side answer below.
      }
      const main = (body.tools?.length ?? 0) > 0;
      requests.push({ path: req.url ?? '', main, body });
      const model = body.model ?? 'm';
      answer(res, model, main ? nextTurn(body.messages ?? []) : { text: 'Scripted title' });
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

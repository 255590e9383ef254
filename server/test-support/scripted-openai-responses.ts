/**
 * Test fixture: a scripted model behind the OpenAI Responses API, so the real Codex CLI can run
 * offline against it. It answers `POST /v1/responses` with the server-sent events Codex expects.
 * The script works as in scripted-anthropic.ts: for each prompt, a list of turns, each a tool call
 * or a final text, the next sent each time the CLI comes back with a tool's output. A turn whose
 * input is a string is a freeform tool call (Codex's `apply_patch` takes the patch text as is).
 *
 * It runs inside the test process: the CLI must be started asynchronously.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { scriptCursor } from './script-cursor.ts';

/** What an answer reports it used, as the Responses API counts: `input` includes `cached`, `output` includes `reasoning`. */
export interface ResponsesUsage {
  input: number;
  cached?: number;
  output: number;
  reasoning?: number;
}

/** A tool call or a final text; `usage` is what the answer reports (default 10 in, 10 out). */
export type ResponsesTurn = ({ tool: string; input: Record<string, unknown> | string } | { text: string }) & {
  usage?: ResponsesUsage;
};

export interface ResponsesPrompt {
  /** The turns are used for the first request whose last user text contains this. */
  match: string;
  turns: ResponsesTurn[];
}

export interface ResponsesRequest {
  path: string;
  body: unknown;
}

export interface ScriptedResponses {
  url: string;
  /** Every request received, in order. */
  requests: ResponsesRequest[];
  /** Every tool call sent to the CLI, in order, with the call id the CLI reports it under. */
  toolUses: { id: string; name: string }[];
  close(): Promise<void>;
}

interface InputItem {
  type?: string;
  role?: string;
  content?: string | { type?: string; text?: string }[];
}

/** The text the person typed last. */
function lastUserText(input: InputItem[]): string {
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i];
    if (item?.role !== 'user') continue;
    if (typeof item.content === 'string') return item.content;
    const texts = (item.content ?? []).filter((c) => c.type === 'input_text').map((c) => c.text ?? '');
    if (texts.length) return texts.join('\n');
  }
  return '';
}

/** True when the conversation ends with a tool's output (the CLI reporting a tool's outcome). */
function isToolOutput(input: InputItem[]): boolean {
  const last = input[input.length - 1];
  return last?.type === 'function_call_output' || last?.type === 'custom_tool_call_output';
}

function sse(res: http.ServerResponse, event: string, data: Record<string, unknown>): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
}

export async function startScriptedResponses(script: ResponsesPrompt[]): Promise<ScriptedResponses> {
  const requests: ResponsesRequest[] = [];
  const toolUses: { id: string; name: string }[] = [];
  let answers = 0;
  const turnAfter = scriptCursor<ResponsesTurn, ResponsesPrompt>(script, (text) => ({ text }));
  const nextTurn = (input: InputItem[]): ResponsesTurn => turnAfter(isToolOutput(input), () => lastUserText(input));

  const answer = (res: http.ServerResponse, turn: ResponsesTurn): void => {
    answers++;
    const responseId = `resp_scripted_${answers}`;
    let item: Record<string, unknown>;
    if ('tool' in turn) {
      const callId = `call_scripted_${answers}`;
      toolUses.push({ id: callId, name: turn.tool });
      item =
        typeof turn.input === 'string'
          ? { type: 'custom_tool_call', id: `ctc_${answers}`, call_id: callId, name: turn.tool, input: turn.input }
          : {
              type: 'function_call',
              id: `fc_${answers}`,
              call_id: callId,
              name: turn.tool,
              arguments: JSON.stringify(turn.input),
            };
    } else {
      item = {
        type: 'message',
        id: `msg_scripted_${answers}`,
        role: 'assistant',
        content: [{ type: 'output_text', text: turn.text }],
      };
    }
    const u = turn.usage ?? { input: 10, output: 10 };
    const usage = {
      input_tokens: u.input,
      input_tokens_details: { cached_tokens: u.cached ?? 0 },
      output_tokens: u.output,
      output_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
      total_tokens: u.input + u.output,
    };
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    sse(res, 'response.created', { response: { id: responseId } });
    sse(res, 'response.output_item.added', { output_index: 0, item });
    sse(res, 'response.output_item.done', { output_index: 0, item });
    sse(res, 'response.completed', { response: { id: responseId, output: [item], usage } });
    res.end();
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0];
      if (req.method !== 'POST' || path !== '/v1/responses') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'not scripted' } }));
        return;
      }
      let body: { input?: InputItem[] } = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        // A body that is not JSON is answered as a prompt with no text.
      }
      requests.push({ path: req.url ?? '', body });
      answer(res, nextTurn(Array.isArray(body.input) ? body.input : []));
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

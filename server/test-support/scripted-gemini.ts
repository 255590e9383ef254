/**
 * Test fixture: a scripted model behind the Gemini API, so the real Gemini CLI can run offline
 * against it. The main loop (`:streamGenerateContent`, requests that offer `write_file` among their
 * tools) follows a script as in scripted-anthropic.ts: for each prompt, a list of turns, each a
 * function call or a final text, the next sent each time the CLI comes back with a function
 * response. Side requests (`:generateContent`, or no `write_file` tool) get a short text.
 *
 * It runs inside the test process: the CLI must be started asynchronously.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { scriptCursor } from './script-cursor.ts';

/** What an answer reports it used, as the Gemini API counts: `prompt` includes `cached`. */
export interface GeminiUsage {
  prompt: number;
  cached?: number;
  candidates: number;
  thoughts?: number;
  toolUse?: number;
}

/** A function call or a final text; `usage` is what the answer reports (default 10 in, 10 out). */
export type GeminiTurn = ({ tool: string; input: Record<string, unknown> } | { text: string }) & {
  usage?: GeminiUsage;
};

export interface GeminiPrompt {
  /** The turns are used for the first main-loop request whose last user text contains this. */
  match: string;
  turns: GeminiTurn[];
}

export interface GeminiRequest {
  path: string;
  /** True for main-loop requests. */
  main: boolean;
  body: unknown;
}

export interface ScriptedGemini {
  url: string;
  /** Every request received, in order. */
  requests: GeminiRequest[];
  /** Every function call sent to the CLI, in order. */
  toolUses: { name: string }[];
  close(): Promise<void>;
}

interface Part {
  text?: string;
  functionResponse?: unknown;
}
interface Content {
  role?: string;
  parts?: Part[];
}
interface Body {
  contents?: Content[];
  tools?: { functionDeclarations?: { name?: string }[] }[];
}

/** The text the person typed last (function responses are user turns too, without text). */
function lastUserText(contents: Content[]): string {
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i];
    if (c?.role !== 'user') continue;
    const texts = (c.parts ?? []).filter((p) => typeof p.text === 'string').map((p) => p.text ?? '');
    if (texts.length) return texts.join('\n');
  }
  return '';
}

const isToolResult = (contents: Content[]): boolean =>
  (contents[contents.length - 1]?.parts ?? []).some((p) => p.functionResponse !== undefined);

const offersWriteFile = (body: Body): boolean =>
  (body.tools ?? []).some((t) => (t.functionDeclarations ?? []).some((f) => f.name === 'write_file'));

function usageMetadata(u: GeminiUsage): Record<string, number> {
  return {
    promptTokenCount: u.prompt,
    candidatesTokenCount: u.candidates,
    ...(u.cached !== undefined ? { cachedContentTokenCount: u.cached } : {}),
    ...(u.thoughts !== undefined ? { thoughtsTokenCount: u.thoughts } : {}),
    ...(u.toolUse !== undefined ? { toolUsePromptTokenCount: u.toolUse } : {}),
    totalTokenCount: u.prompt + u.candidates + (u.thoughts ?? 0) + (u.toolUse ?? 0),
  };
}

export async function startScriptedGemini(script: GeminiPrompt[]): Promise<ScriptedGemini> {
  const requests: GeminiRequest[] = [];
  const toolUses: { name: string }[] = [];
  const turnAfter = scriptCursor<GeminiTurn, GeminiPrompt>(script, (text) => ({ text }));
  const nextTurn = (contents: Content[]): GeminiTurn => turnAfter(isToolResult(contents), () => lastUserText(contents));

  const chunk = (turn: GeminiTurn) => {
    const part = 'tool' in turn ? { functionCall: { name: turn.tool, args: turn.input } } : { text: turn.text };
    if ('tool' in turn) toolUses.push({ name: turn.tool });
    return {
      candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: usageMetadata(turn.usage ?? { prompt: 10, candidates: 10 }),
    };
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      const stream = path.endsWith(':streamGenerateContent');
      if (req.method !== 'POST' || !(stream || path.endsWith(':generateContent'))) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 404, message: 'not scripted', status: 'NOT_FOUND' } }));
        return;
      }
      let body: Body = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Body;
      } catch {
        // A body that is not JSON gets the side answer below.
      }
      const main = stream && offersWriteFile(body);
      requests.push({ path: req.url ?? '', main, body });
      const answer = chunk(main ? nextTurn(body.contents ?? []) : { text: 'Scripted side answer' });
      if (stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.end(`data: ${JSON.stringify(answer)}\n\n`);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer));
      }
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

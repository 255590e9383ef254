// rundiff's plugin for opencode. `rundiff hooks install opencode` names this file in the `plugin`
// list of opencode.json, with its settings as the plugin's options: `{server, client}`, the
// server's URL and the hook client's command line (null: start no server). opencode loads it from
// here, so nothing is written into a `.opencode/` folder (opencode installs its plugin package into
// every such folder it finds). It posts opencode's prompts, tool calls, session events and the
// last reply text to rundiff, and never throws into opencode.
// Remove it with `rundiff hooks uninstall opencode`.
import { spawn } from 'node:child_process';

const TIMEOUT_MS = 30000;

// Hands a payload to the hook client (it starts a server when none answers), waiting at most TIMEOUT_MS.
function viaClient(client, body) {
  return new Promise((resolve) => {
    try {
      const [cmd, ...args] = client;
      const child = spawn(cmd, args, { stdio: ['pipe', 'ignore', 'ignore'] });
      const timer = setTimeout(() => {
        child.kill();
        resolve();
      }, TIMEOUT_MS);
      child.on('error', () => {
        clearTimeout(timer);
        resolve();
      });
      child.on('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.stdin.on('error', () => {});
      child.stdin.end(JSON.stringify(body));
    } catch {
      resolve();
    }
  });
}

async function post(settings, body) {
  try {
    const headers = { 'content-type': 'application/json' };
    if (process.env.RUNDIFF_TOKEN) headers.authorization = 'Bearer ' + process.env.RUNDIFF_TOKEN;
    const res = await fetch(settings.server + '/api/hooks/opencode', {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await res.arrayBuffer();
  } catch {
    if (Array.isArray(settings.client)) await viaClient(settings.client, body);
  }
}

const textParts = (parts) =>
  Array.isArray(parts)
    ? parts
        .filter((p) => p && p.type === 'text' && typeof p.text === 'string')
        .map((p) => ({ type: 'text', text: p.text, synthetic: p.synthetic === true }))
    : [];

export const RundiffPlugin = async ({ directory }, options) => {
  const settings = {
    server: String((options && options.server) || 'http://127.0.0.1:7420'),
    client: (options && options.client) || null,
  };
  const send = (body) => post(settings, body);
  // The last assistant text of each session, sent with session.idle (opencode's events carry none).
  const replies = new Map();
  // The tokens of each model call of a session's turn (its step-finish parts, by part id), sent
  // with session.idle; a new prompt starts the count again.
  const steps = new Map();
  const MAX_STEPS = 10000;
  const userMessages = new Set();
  const guard =
    (fn) =>
    async (...args) => {
      try {
        await fn(...args);
      } catch {
        // never into opencode
      }
    };
  return {
    'chat.message': guard(async (input, output) => {
      if (output && output.message && output.message.id) userMessages.add(output.message.id);
      steps.delete(input.sessionID);
      await send({
        hook: 'chat.message',
        directory,
        input: { sessionID: input.sessionID, messageID: input.messageID },
        output: {
          message: { id: output && output.message && output.message.id },
          parts: textParts(output && output.parts),
        },
      });
    }),
    'tool.execute.before': guard(async (input, output) => {
      await send({
        hook: 'tool.execute.before',
        directory,
        input: { tool: input.tool, sessionID: input.sessionID, callID: input.callID },
        output: { args: output && output.args },
      });
    }),
    'tool.execute.after': guard(async (input, output) => {
      const exit = output && output.metadata && output.metadata.exit;
      await send({
        hook: 'tool.execute.after',
        directory,
        input: { tool: input.tool, sessionID: input.sessionID, callID: input.callID },
        output: { title: output && output.title, metadata: typeof exit === 'number' ? { exit } : {} },
      });
    }),
    event: guard(async ({ event }) => {
      const props = event.properties || {};
      if (event.type === 'message.part.updated') {
        const part = props.part || {};
        if (part.type === 'step-finish' && part.tokens && typeof part.id === 'string') {
          const turn = steps.get(part.sessionID) || new Map();
          // One more than the bound is kept, so the server sees the turn was over it.
          // With its price in US dollars when opencode gives one (`cost`, from the model's prices).
          if (turn.size <= MAX_STEPS)
            turn.set(part.id, typeof part.cost === 'number' ? { ...part.tokens, cost: part.cost } : part.tokens);
          steps.set(part.sessionID, turn);
          return;
        }
        if (
          part.type === 'text' &&
          !part.synthetic &&
          !userMessages.has(part.messageID) &&
          typeof part.text === 'string'
        )
          replies.set(part.sessionID, part.text);
        return;
      }
      if (event.type !== 'session.created' && event.type !== 'session.idle' && event.type !== 'session.error') return;
      const body = { hook: 'event', directory, event: { type: event.type, properties: props } };
      if (event.type === 'session.idle' && replies.has(props.sessionID)) {
        body.reply = replies.get(props.sessionID);
        replies.delete(props.sessionID);
      }
      if (event.type === 'session.idle' && steps.has(props.sessionID)) {
        body.steps = [...steps.get(props.sessionID).values()];
        steps.delete(props.sessionID);
      }
      await send(body);
    }),
  };
};

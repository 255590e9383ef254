/**
 * The turn a scripted model answers next, shared by the scripted Anthropic, OpenAI Responses and
 * Gemini servers: a request that carries a tool's result continues the prompt being answered; any
 * other starts the first unused prompt whose `match` its last user text contains. Past a prompt's
 * turns the answer is "done"; a request no prompt matches is answered with a text saying so.
 */
export function scriptCursor<T, P extends { match: string; turns: T[] }>(
  script: P[],
  textTurn: (text: string) => T,
): (continuing: boolean, userText: () => string) => T {
  let current: { prompt: P; next: number } | null = null;
  const used = new Set<P>();
  return (continuing, userText) => {
    if (!continuing || !current) {
      const text = userText();
      const prompt = script.find((p) => !used.has(p) && text.includes(p.match));
      if (!prompt) return textTurn(`no scripted answer for: ${text.slice(0, 200)}`);
      used.add(prompt);
      current = { prompt, next: 0 };
    }
    const turn = current.prompt.turns[current.next] ?? textTurn('done');
    current.next++;
    return turn;
  };
}

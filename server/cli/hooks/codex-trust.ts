import { readHookText, type HookPath } from './hook-file.ts';
import type { JsonObject } from './json-file.ts';

/**
 * Whether Codex will run rundiff's hooks. Codex (0.169.0) runs a hook from `~/.codex/hooks.json`
 * only once a person has trusted it (the "Hooks need review" screen of an interactive `codex`,
 * "Trust all and continue"), or for one invocation with `--dangerously-bypass-hook-trust`; an
 * untrusted hook is skipped without a word, so `codex exec` records nothing. Codex keeps the trust
 * in its `~/.codex/config.toml`, one table per hook:
 *
 *     [hooks.state."<hooks.json path>:<event in snake case>:<group index>:<handler index>"]
 *     trusted_hash = "sha256:..."
 *
 * (and `enabled = false` for a hook turned off). The hash is of Codex's own normalised form of the
 * hook, which rundiff does not reproduce: a hook trusted and changed since (installed again with
 * another server, say) counts as trusted here, and Codex asks again.
 */
export interface CodexTrust {
  /** rundiff's hooks in the file, by Codex's key. */
  keys: string[];
  trusted: string[];
  disabled: string[];
}

/** Codex's key for each of rundiff's handlers in `settings` (the parsed hooks.json at `file`). */
export function codexHookKeys(file: string, settings: JsonObject, isOurs: (h: JsonObject) => boolean): string[] {
  const hooks = settings.hooks;
  if (typeof hooks !== 'object' || hooks === null || Array.isArray(hooks)) return [];
  const keys: string[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) continue;
    groups.forEach((g, gi) => {
      if (typeof g !== 'object' || g === null || Array.isArray(g) || !Array.isArray(g.hooks)) return;
      g.hooks.forEach((h, hi) => {
        if (typeof h === 'object' && h !== null && !Array.isArray(h) && isOurs(h))
          keys.push(`${file}:${snakeCase(event)}:${gi}:${hi}`);
      });
    });
  }
  return keys;
}

const snakeCase = (event: string) => event.replace(/(?<=[a-z0-9])([A-Z])/g, '_$1').toLowerCase();

/** What Codex's config at `config` says of `keys`; a config that is missing or unreadable trusts none. */
export function codexTrust(config: HookPath, keys: string[]): CodexTrust {
  let text: string | null = null;
  try {
    text = readHookText(config);
  } catch {
    text = null;
  }
  const states = text === null ? new Map<string, HookState>() : hookStates(text);
  return {
    keys,
    trusted: keys.filter((k) => states.get(k)?.trustedHash !== undefined),
    disabled: keys.filter((k) => states.get(k)?.enabled === false),
  };
}

/** What keeps Codex from running rundiff's hooks, or null when nothing does (or none are installed). */
export function codexTrustProblem(
  t: CodexTrust,
): { code: 'hooks_untrusted' | 'hooks_disabled'; message: string; fix: string } | null {
  if (t.keys.length === 0) return null;
  if (t.disabled.length > 0)
    return {
      code: 'hooks_disabled',
      message: `${t.disabled.length} of rundiff's ${t.keys.length} hooks are turned off in Codex (enabled = false in ~/.codex/config.toml): what they report is not recorded`,
      fix: "Turn them on in codex's /hooks.",
    };
  if (t.trusted.length === t.keys.length) return null;
  return {
    code: 'hooks_untrusted',
    message: `Codex has not trusted rundiff's hooks (${t.trusted.length} of ${t.keys.length} trusted): it skips them silently, so its runs record nothing`,
    fix: CODEX_TRUST_STEP,
  };
}

/** The status line of a Codex trust check: what the person must do, or that nothing is needed. */
export function codexTrustLine(t: CodexTrust): string | null {
  if (t.keys.length === 0) return null;
  const problem = codexTrustProblem(t);
  if (problem === null) return `trusted in ~/.codex/config.toml (if the hooks changed since, Codex asks again)`;
  if (problem.code === 'hooks_disabled')
    return `${t.disabled.length} of rundiff's ${t.keys.length} hooks are turned off in Codex (enabled = false in ~/.codex/config.toml): turn them on in codex's /hooks`;
  return `NOT TRUSTED (${t.trusted.length} of ${t.keys.length} trusted): Codex skips them silently and records nothing. ${CODEX_TRUST_STEP}`;
}

/** The step that trusts the hooks, as Codex 0.169.0 offers it. */
export const CODEX_TRUST_STEP =
  "Start `codex` once in a terminal and choose 'Trust all and continue' at 'Hooks need review' (or run `codex exec --dangerously-bypass-hook-trust`).";

interface HookState {
  trustedHash?: string;
  enabled?: boolean;
}

/**
 * The `hooks.state` tables of a TOML file, read as Codex writes them: a `[hooks.state."KEY"]`
 * header then `key = value` lines, or `"KEY".trusted_hash = ...` lines under `[hooks.state]`.
 * Only basic and literal strings and booleans are read; anything else is skipped.
 */
function hookStates(text: string): Map<string, HookState> {
  const out = new Map<string, HookState>();
  let table: string[] | null = null;
  const set = (key: string, field: string, value: string | boolean) => {
    const s = out.get(key) ?? {};
    if (field === 'trusted_hash' && typeof value === 'string') s.trustedHash = value;
    if (field === 'enabled' && typeof value === 'boolean') s.enabled = value;
    out.set(key, s);
  };
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('[')) {
      const inner = /^\[\s*([^[\]]*?)\s*\](?:\s*#.*)?$/.exec(line);
      table = inner ? dottedKey(inner[1]!) : null;
      continue;
    }
    const eq = splitAssignment(line);
    if (!eq || table === null) continue;
    const path = [...table, ...eq.key];
    if (path.length === 4 && path[0] === 'hooks' && path[1] === 'state') set(path[2]!, path[3]!, eq.value);
  }
  return out;
}

/** `a."b.c".d` -> ['a', 'b.c', 'd']; null when it is not a key. */
function dottedKey(s: string): string[] | null {
  const parts: string[] = [];
  let i = 0;
  while (i < s.length) {
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (s[i] === '"' || s[i] === "'") {
      const str = tomlString(s, i);
      if (!str) return null;
      parts.push(str.value);
      i = str.end;
    } else {
      const m = /^[A-Za-z0-9_-]+/.exec(s.slice(i));
      if (!m) return null;
      parts.push(m[0]);
      i += m[0].length;
    }
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (i >= s.length) break;
    if (s[i] !== '.') return null;
    i++;
  }
  return parts.length > 0 ? parts : null;
}

/** `key = value` with a string or boolean value; null otherwise. */
function splitAssignment(line: string): { key: string[]; value: string | boolean } | null {
  // The key ends at the first `=` outside quotes.
  let quote: string | null = null;
  let at = -1;
  for (let i = 0; i < line.length && at < 0; i++) {
    const c = line[i];
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '=') at = i;
  }
  if (at < 0) return null;
  const key = dottedKey(line.slice(0, at).trim());
  const rest = line.slice(at + 1).trim();
  if (!key) return null;
  if (/^(true|false)(\s*#.*)?$/.test(rest)) return { key, value: rest.startsWith('true') };
  const str = rest.startsWith('"') || rest.startsWith("'") ? tomlString(rest, 0) : null;
  return str ? { key, value: str.value } : null;
}

const ESCAPES: Record<string, string> = { b: '\b', t: '\t', n: '\n', f: '\f', r: '\r', '"': '"', '\\': '\\' };

/** The basic ("...") or literal ('...') string starting at `i`: its value and the index after it. */
function tomlString(s: string, i: number): { value: string; end: number } | null {
  const q = s[i];
  let value = '';
  for (let j = i + 1; j < s.length; j++) {
    const c = s[j]!;
    if (c === q) return { value, end: j + 1 };
    if (q === '"' && c === '\\') {
      const e = s[j + 1] ?? '';
      if (e === 'u' || e === 'U') {
        const len = e === 'u' ? 4 : 8;
        const hex = s.slice(j + 2, j + 2 + len);
        if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) return null;
        value += String.fromCodePoint(parseInt(hex, 16));
        j += 1 + len;
      } else if (ESCAPES[e] !== undefined) {
        value += ESCAPES[e];
        j++;
      } else return null;
    } else value += c;
  }
  return null;
}

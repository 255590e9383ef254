/**
 * A small flag parser shared by the commands: `--name value`, `--name=value`, boolean flags, repeated
 * flags, and `--` after which everything is positional. Unknown flags are an error, not a guess.
 */
export interface FlagSpec {
  /** Flags that take a value. */
  values?: readonly string[];
  /** Flags that take a value and may repeat. */
  multi?: readonly string[];
  /** Flags without a value. */
  booleans?: readonly string[];
}

export interface ParsedArgs {
  values: Record<string, string>;
  multi: Record<string, string[]>;
  booleans: Set<string>;
  /** Arguments that are not flags (and everything after `--`). */
  positional: string[];
  /** True when `--` was given. */
  dashDash: boolean;
}

export class UsageError extends Error {}

export function parseArgs(
  argv: readonly string[],
  spec: FlagSpec,
  opts: { stopAtPositional?: boolean } = {},
): ParsedArgs {
  const out: ParsedArgs = { values: {}, multi: {}, booleans: new Set(), positional: [], dashDash: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      out.dashDash = true;
      out.positional.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--') || arg === '-') {
      if (opts.stopAtPositional) {
        out.positional.push(...argv.slice(i));
        break;
      }
      out.positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = (eq === -1 ? arg : arg.slice(0, eq)).slice(2);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    if (spec.booleans?.includes(name)) {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value`);
      out.booleans.add(name);
      continue;
    }
    const isMulti = spec.multi?.includes(name) ?? false;
    if (!isMulti && !spec.values?.includes(name)) throw new UsageError(`unknown option --${name}`);
    let value = inline;
    if (value === undefined) {
      value = argv[i + 1];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      i++;
    }
    if (isMulti) (out.multi[name] ??= []).push(value);
    else out.values[name] = value;
  }
  return out;
}

/**
 * A path as `rundiff run` and `rundiff revert` print it to a terminal, quoted the way git quotes
 * names with `core.quotePath=false`: a name holding a control character (C0, DEL, C1), a double
 * quote or a backslash is printed in double quotes with C-style escapes (`\t`, `\n`, `\r`, `\"`,
 * `\\`, other control characters as octal UTF-8 bytes such as `\033`); any other name, non-ASCII
 * UTF-8 included, is printed as it is. A name can then neither recolour the terminal, nor
 * overwrite a row with a carriage return, nor split one row in two.
 */
function needsQuoting(ch: string): boolean {
  const c = ch.charCodeAt(0);
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || ch === '"' || ch === '\\';
}

const NAMED: Record<string, string> = {
  '\u0007': '\\a',
  '\b': '\\b',
  '\t': '\\t',
  '\n': '\\n',
  '\v': '\\v',
  '\f': '\\f',
  '\r': '\\r',
  '"': '\\"',
  '\\': '\\\\',
};

export function quotePath(name: string): string {
  if (![...name].some(needsQuoting)) return name;
  let out = '"';
  for (const ch of name) {
    const named = NAMED[ch];
    if (named !== undefined) out += named;
    else if (needsQuoting(ch)) {
      for (const b of Buffer.from(ch, 'utf8')) out += `\\${b.toString(8).padStart(3, '0')}`;
    } else out += ch;
  }
  return out + '"';
}

/**
 * Regular expressions written in a site and run against every host's facts. JavaScript's
 * engine backtracks, so a pattern such as `(a+)+$` can take exponential time on a short
 * value; no well-kept non-backtracking engine ships with bpa, so patterns are held to a
 * subset that cannot run away: bounded length, no backreferences or lookarounds, and no
 * repeated group that itself holds a quantifier or an alternation (the shapes of
 * catastrophic backtracking). What remains backtracks at most polynomially, on values of a
 * few dozen characters.
 */

export const MAX_PATTERN_LENGTH = 256;

/** Why the pattern is refused, or undefined when it is safe to compile and run. */
export function unsafePattern(source: string): string | undefined {
  if (source.length > MAX_PATTERN_LENGTH)
    return `it is ${source.length} characters long (at most ${MAX_PATTERN_LENGTH})`;
  try {
    new RegExp(source, 'u');
  } catch (e) {
    return `it does not compile: ${(e as Error).message.replace(/^Invalid regular expression: /, '')}`;
  }
  const groups: Array<{ risky: boolean }> = [];
  for (let i = 0; i < source.length; i++) {
    const c = source[i] as string;
    if (c === '\\') {
      const n = source[i + 1] ?? '';
      if (/[1-9]/.test(n) || n === 'k') return 'it uses a backreference';
      i++;
      continue;
    }
    if (c === '[') {
      i = classEnd(source, i);
      continue;
    }
    if (c === '(') {
      if (/^\(\?<?[=!]/.test(source.slice(i, i + 4))) return 'it uses a lookaround';
      groups.push({ risky: false });
      continue;
    }
    if (c === '|') {
      const g = groups[groups.length - 1];
      if (g) g.risky = true;
      continue;
    }
    if (c === ')') {
      const g = groups.pop();
      const repeated = repeats(source, i + 1);
      if (g?.risky && repeated)
        return 'a repeated group holds a quantifier or an alternation (it could run for ever)';
      const parent = groups[groups.length - 1];
      if (parent && (g?.risky || repeated)) parent.risky = true;
      continue;
    }
    if (repeats(source, i)) {
      const parent = groups[groups.length - 1];
      if (parent) parent.risky = true;
    }
  }
  return undefined;
}

/** The pattern compiled (searched, not anchored), after `unsafePattern` found nothing. */
export function compileSafe(source: string): RegExp | undefined {
  return unsafePattern(source) === undefined ? new RegExp(source, 'u') : undefined;
}

/** Index of the `]` closing the class opened at `start`. */
function classEnd(source: string, start: number): number {
  for (let i = start + 1; i < source.length; i++) {
    if (source[i] === '\\') i++;
    else if (source[i] === ']') return i;
  }
  return source.length;
}

/** A quantifier at `i` that repeats (`*`, `+`, `{n,}`, `{n,m}` with m > 1); `?` does not. */
function repeats(source: string, i: number): boolean {
  const c = source[i];
  if (c === '*' || c === '+') return true;
  if (c !== '{') return false;
  const m = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i, i + 24));
  if (!m) return false;
  if (m[2] === undefined) return Number(m[1]) > 1;
  return m[3] === '' || Number(m[3]) > 1;
}

/**
 * The word for a count: `word(1, 'plugin')` is plugin, `word(2, 'plugin')` plugins; with the
 * plural given, any pair agrees (`word(n, 'is', 'are')`, `word(n, 'it', 'them')`).
 */
export function word(n: number, singular: string, plural = `${singular}s`): string {
  return n === 1 ? singular : plural;
}

/** `1 error`, `2 errors`, `0 hosts`: a count with its word. */
export function pluralize(n: number, singular: string, plural?: string): string {
  return `${n} ${word(n, singular, plural)}`;
}

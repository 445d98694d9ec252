/** `1 error`, `2 errors`, `0 hosts`: a count with its noun. */
export function pluralize(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}

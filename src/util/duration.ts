/** Durations as operators write them: 30s, 5m, 1h, 1h30m, 500ms, or plain seconds. */
export function parseDuration(text: string): number {
  const t = text.trim();
  if (/^\d+$/.test(t)) return Number(t) * 1000;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let total = 0;
  let consumed = 0;
  for (const m of t.matchAll(re)) {
    const n = Number(m[1]);
    total +=
      m[2] === 'ms' ? n : m[2] === 's' ? n * 1000 : m[2] === 'm' ? n * 60_000 : n * 3_600_000;
    consumed += m[0].length;
  }
  if (consumed !== t.length || consumed === 0)
    throw new Error(`not a duration: ${JSON.stringify(text)} (use e.g. 30s, 5m, 1h)`);
  return total;
}

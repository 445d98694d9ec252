/**
 * How old an observation is, in words. Its own module: \`bpa plan\` and \`bpa diff\` print it
 * and load the rest of from-status.ts (and the YAML writer it needs) only with --from-status.
 */

/** "observed 2026-05-01T10:00:00Z (3 hours ago)". */
export function observedAge(observedAt: string, now: number): string {
  const at = Date.parse(observedAt);
  if (Number.isNaN(at)) return `observed at an unknown time (${observedAt})`;
  const s = Math.max(0, Math.round((now - at) / 1000));
  const age =
    s < 90
      ? `${s} seconds`
      : s < 90 * 60
        ? `${Math.round(s / 60)} minutes`
        : s < 36 * 3600
          ? `${Math.round(s / 3600)} hours`
          : `${Math.round(s / 86400)} days`;
  return `observed ${new Date(at).toISOString().replace(/\.000Z$/, 'Z')} (${age} ago)`;
}

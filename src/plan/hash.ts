import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level: the same data always gives the same text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(
        Object.entries(v as Record<string, unknown>).sort(([a], [b]) =>
          a < b ? -1 : a > b ? 1 : 0,
        ),
      );
    }
    if (typeof v === 'bigint') return v.toString();
    return v;
  });
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

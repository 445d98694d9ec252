/** The decrypted Secrets of a site, by name: held in memory for one run, never written out. */
export type SiteSecretValues = ReadonlyMap<string, Readonly<Record<string, string>>>;

/** A v1 Secret's values: stringData as given, data decoded from base64 (stringData wins). */
export function secretValues(doc: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  const data = doc['data'];
  if (isRecord(data))
    for (const [k, v] of Object.entries(data))
      out[k] = Buffer.from(String(v ?? ''), 'base64').toString('utf8');
  const stringData = doc['stringData'];
  if (isRecord(stringData))
    for (const [k, v] of Object.entries(stringData)) out[k] = String(v ?? '');
  return out;
}

/** Every value, for masking output that could echo one. */
export function allValues(secrets: SiteSecretValues | undefined): string[] {
  return secrets
    ? [...secrets.values()].flatMap((s) => Object.values(s)).filter((v) => v.length >= 4)
    : [];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

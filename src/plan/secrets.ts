/**
 * Which site Secrets changed since bpa last acted with them. The plan carries each Secret the
 * Site uses by the digest of its ciphertext (in the plan hash); what bpa applied records that
 * digest and, when bpa had the values, an HMAC of them under a key of its state directory.
 * A new ciphertext of the same values (a rotated data key) is then no change: both HMACs are
 * known and equal. Without the values (`bpa plan` without keys) the ciphertext decides. Pure.
 */
import type { ExecutionSettings } from '../config/execution.js';
import type { AppliedCluster, AppliedState, SecretRecord } from '../state/applied.js';

/** Whether a Secret's values are those recorded, for a ciphertext digest that may differ. */
export function sameSecret(
  name: string,
  cipher: string,
  recorded: SecretRecord | undefined,
  values: ReadonlyMap<string, string> | undefined,
): boolean {
  if (!recorded) return false;
  if (recorded.cipher === cipher) return true;
  const now = values?.get(name);
  return now !== undefined && recorded.value !== undefined && recorded.value === now;
}

/** The Secrets the Site uses whose values changed since some cluster was last applied with them. */
export function changedSecrets(
  settings: ExecutionSettings | undefined,
  applied: AppliedState,
  values: ReadonlyMap<string, string> | undefined,
): string[] {
  const out: string[] = [];
  for (const [name, cipher] of Object.entries(settings?.secrets ?? {})) {
    const records = [...applied.clusters.values()]
      .map((a: AppliedCluster) => a.secrets?.[name])
      .filter((r): r is SecretRecord => r !== undefined);
    if (records.some((r) => !sameSecret(name, cipher, r, values))) out.push(name);
  }
  return out.sort();
}

/** What an apply records of the Secrets it acted with. */
export function secretRecords(
  settings: ExecutionSettings | undefined,
  values: ReadonlyMap<string, string> | undefined,
): Record<string, SecretRecord> | undefined {
  const entries = Object.entries(settings?.secrets ?? {});
  if (!entries.length) return undefined;
  return Object.fromEntries(
    entries.map(([name, cipher]) => {
      const value = values?.get(name);
      return [name, value === undefined ? { cipher } : { cipher, value }];
    }),
  );
}

/**
 * Where bpa's age identities come from: a key file (--sops-age-key-file) and, in the bootstrap
 * cluster, a Secret whose keys ending in `.agekey` hold identities (Flux's convention). No
 * message here includes a key.
 */
import { readFile, stat } from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { StalledError, TransientError, messageOf } from '../util/errors.js';
import { ageIdentities } from './age.js';

export async function readAgeKeyFile(path: string): Promise<string[]> {
  let text: string;
  let mode: number;
  try {
    mode = (await stat(path)).mode;
    text = await readFile(path, 'utf8');
  } catch (err: unknown) {
    const why = (err as NodeJS.ErrnoException).code ?? messageOf(err);
    throw new StalledError('SOPS_KEY_UNREADABLE', `cannot read the age key file ${path} (${why})`);
  }
  if ((mode & 0o077) !== 0)
    throw new StalledError(
      'SOPS_KEY_UNREADABLE',
      `the age key file ${path} can be read by other users (mode 0${(mode & 0o777).toString(8)}); chmod 600 it`,
    );
  const ids = ageIdentities(text);
  if (!ids.length)
    throw new StalledError(
      'SOPS_KEY_UNREADABLE',
      `the age key file ${path} holds no AGE-SECRET-KEY-1… line`,
    );
  return ids;
}

export async function readAgeKeySecret(
  kc: KubeConfig,
  namespace: string,
  name: string,
): Promise<string[]> {
  const { ApiException, CoreV1Api } = await import('../kube/core-client.js');
  const source = `Secret ${namespace}/${name}`;
  let data: Record<string, string> | undefined;
  try {
    data = (await kc.makeApiClient(CoreV1Api).readNamespacedSecret({ name, namespace })).data;
  } catch (err: unknown) {
    if (err instanceof ApiException && [401, 403, 404].includes(err.code))
      throw new StalledError(
        'SOPS_KEY_UNREADABLE',
        err.code === 404
          ? `${source} does not exist`
          : `bpa may not read ${source} (HTTP ${err.code})`,
      );
    const why = err instanceof ApiException ? `HTTP ${err.code}` : messageOf(err);
    throw new TransientError('KUBE_API_ERROR', `cannot read ${source}: ${why}`, { cause: err });
  }
  const ids = Object.entries(data ?? {})
    .filter(([k]) => k.endsWith('.agekey'))
    .flatMap(([, v]) => ageIdentities(Buffer.from(v, 'base64').toString('utf8')));
  if (!ids.length)
    throw new StalledError(
      'SOPS_KEY_UNREADABLE',
      `${source} has no key ending in .agekey with an age identity`,
    );
  return ids;
}

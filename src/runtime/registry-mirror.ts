/**
 * The files that make a node's container runtime pull through the site's registry (the CNCF
 * distribution registry beside bpa): containerd's `certs.d/<registry>/hosts.toml`, one per
 * mirrored registry, and Docker's `registry-mirrors` in daemon.json. Pure: settings in,
 * file contents out, so the plan can compare them with what the nodes hold.
 *
 * Layout in the mirror: docker.io images at the root (`library/busybox`), as Docker's
 * `registry-mirrors` (docker.io only) expects; every other registry under its own name
 * (`registry.k8s.io/pause`), which containerd reaches with `override_path`.
 */
import { createHash } from 'node:crypto';
import type { RegistryMirror } from '../config/execution.js';

export type { RegistryMirror } from '../config/execution.js';

export const CERTS_D = '/etc/containerd/certs.d';
export const DOCKER_DAEMON_JSON = '/etc/docker/daemon.json';

/** Where the registry really is: docker.io's API lives at registry-1.docker.io. */
function upstream(registry: string): string {
  return registry === 'docker.io' ? 'https://registry-1.docker.io' : `https://${registry}`;
}

/**
 * hosts.toml of one registry: the mirror first, for pulls only, then the registry itself.
 * With credentials (`auth`: base64 of user:password, from a site Secret), containerd sends
 * them to the mirror as an Authorization header; plans and drift checks use MASKED_AUTH.
 */
export function hostsToml(mirror: RegistryMirror, registry: string, auth?: string): string {
  const base = mirror.url.replace(/\/+$/, '');
  const host = registry === 'docker.io' ? base : `${base}/v2/${registry}`;
  const lines = [
    '# Written by bpa (Site spec.registryMirror): pull through the site registry. Edits are undone.',
    `server = "${upstream(registry)}"`,
    '',
    `[host."${host}"]`,
    '  capabilities = ["pull", "resolve"]',
  ];
  if (registry !== 'docker.io') lines.push('  override_path = true');
  if (auth !== undefined)
    lines.push(`  [host."${host}".header]`, `    authorization = "Basic ${auth}"`);
  return `${lines.join('\n')}\n`;
}

/** What stands for the credentials wherever the files are compared rather than written. */
export const MASKED_AUTH = '***';

const AUTH_LINE = /^(\s*authorization = )"Basic [^"\n]*"$/m;

/**
 * The file bpa owns for each mirrored registry under containerd (path → content); `auth`
 * only when writing them (apply), else MASKED_AUTH when the mirror has credentials.
 */
export function containerdFiles(mirror: RegistryMirror, auth?: string): Record<string, string> {
  if (!mirror.runtimes.includes('containerd')) return {};
  const a = auth ?? (mirror.credentials ? MASKED_AUTH : undefined);
  return Object.fromEntries(
    [...mirror.registries]
      .sort()
      .map((r) => [`${CERTS_D}/${r}/hosts.toml`, hostsToml(mirror, r, a)]),
  );
}

/**
 * The keys bpa sets in Docker's daemon.json; the rest of the file is the node's own and is
 * kept. A plain-http mirror must also be an insecure registry, or Docker will not use it.
 */
export function dockerKeys(mirror: RegistryMirror): Record<string, string[]> | undefined {
  if (!mirror.runtimes.includes('docker')) return undefined;
  const url = new URL(mirror.url);
  return {
    'registry-mirrors': [mirror.url.replace(/\/+$/, '')],
    ...(url.protocol === 'http:' ? { 'insecure-registries': [url.host] } : {}),
  };
}

/** daemon.json with bpa's keys set over what the node has (`current`: its text, or null). */
export function mergeDaemonJson(
  current: string | null,
  keys: Record<string, string[]>,
): string | { error: string } {
  let doc: Record<string, unknown> = {};
  if (current !== null && current.trim() !== '') {
    try {
      const parsed: unknown = JSON.parse(current);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        return { error: `${DOCKER_DAEMON_JSON} is not a JSON object` };
      doc = parsed as Record<string, unknown>;
    } catch (err: unknown) {
      return { error: `${DOCKER_DAEMON_JSON} is not valid JSON: ${(err as Error).message}` };
    }
  }
  return `${JSON.stringify({ ...doc, ...keys }, null, 2)}\n`;
}

/** Whether daemon.json (its text, or null) already has bpa's keys as they should be. */
export function daemonJsonHas(current: string | null, keys: Record<string, string[]>): boolean {
  if (current === null) return false;
  try {
    const doc = JSON.parse(current) as Record<string, unknown>;
    return Object.entries(keys).every(([k, v]) => JSON.stringify(doc[k]) === JSON.stringify(v));
  } catch {
    return false;
  }
}

/**
 * The files whose content the plan compares on each node, from the Site's registryMirror
 * (its defaults: docker.io, containerd).
 */
export function watchedPaths(spec: { registries?: unknown; runtimes?: unknown }): string[] {
  const list = (v: unknown, dflt: string): string[] =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [dflt];
  const registries = [...new Set(list(spec.registries, 'docker.io'))].sort();
  const runtimes = list(spec.runtimes, 'containerd');
  const paths = runtimes.includes('containerd')
    ? registries.map((r) => `${CERTS_D}/${r}/hosts.toml`)
    : [];
  if (runtimes.includes('docker')) paths.push(DOCKER_DAEMON_JSON);
  return paths;
}

/** One digest of what bpa wants on a node: recorded when applied, compared when planned. */
export function mirrorDigest(mirror: RegistryMirror): string {
  return createHash('sha256')
    .update(
      JSON.stringify({
        files: containerdFiles(mirror),
        docker: dockerKeys(mirror) ?? null,
        // A changed credential (its ciphertext digest) is written again.
        ...(mirror.credentials ? { credentials: mirror.credentials } : {}),
      }),
    )
    .digest('hex')
    .slice(0, 16);
}

/** What differs on a node, from the contents it reports (path → text, null: absent). */
export function mirrorDrift(mirror: RegistryMirror, seen: Record<string, string | null>): string[] {
  const out: string[] = [];
  for (const [path, want] of Object.entries(containerdFiles(mirror))) {
    const has = seen[path];
    if (has === undefined) continue;
    if (has === null) out.push(`${path} is missing`);
    else if (has.replace(AUTH_LINE, `$1"Basic ${MASKED_AUTH}"`) !== want)
      out.push(`${path} was changed`);
  }
  const keys = dockerKeys(mirror);
  if (keys && DOCKER_DAEMON_JSON in seen && !daemonJsonHas(seen[DOCKER_DAEMON_JSON] ?? null, keys))
    out.push(`${DOCKER_DAEMON_JSON} lacks the registry mirror`);
  return out;
}

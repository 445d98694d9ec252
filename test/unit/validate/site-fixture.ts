import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A small valid site: one cluster by MAC and resources, software for both roles. */
export const BASE_SITE: Record<string, string> = {
  'cluster.yaml': `apiVersion: bpa.akraino.org/v1alpha1
kind: Cluster
metadata:
  name: cluster-a
  labels:
    cluster: cluster-a
    owner: c1
spec:
  provisioningCR: provisioning-a
  softwareCR: software-a
`,
  'provisioning.yaml': `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata:
  name: provisioning-a
  labels:
    cluster: cluster-a
    owner: c1
spec:
  masters:
    - master-1:
        mac-address: "00:c5:16:05:61:b2"
        cpu: 10
        memory: 4Gi
  workers:
    - worker-1:
        cpu: 20
        memory: 8Gi
  KUDPlugins:
    - emco
  PodSubnet: 10.244.64.0/18
`,
  'software.yaml': `apiVersion: bpa.akraino.org/v1alpha1
kind: Software
metadata:
  name: software-a
  labels:
    cluster: cluster-a
spec:
  masterSoftware:
    - htop
    - jq:
        version: 1.5+dfsg-1ubuntu0.1
  workerSoftware:
    - curl
`,
};

/** Writes files (path → content; Buffer for raw bytes) into a new temp directory. */
export async function writeSite(files: Record<string, string | Buffer>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'bpa-site-'));
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

export async function removeSite(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** Replaces `from` by `to` in one file of the base site (the text must be present). */
export function edit(file: string, from: string, to: string): Record<string, string> {
  const text = BASE_SITE[file];
  if (text === undefined || !text.includes(from))
    throw new Error(`fixture: ${file} has no ${JSON.stringify(from)}`);
  return { ...BASE_SITE, [file]: text.replace(from, to) };
}

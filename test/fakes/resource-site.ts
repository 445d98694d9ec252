/**
 * A site whose nodes are placed by resources (no MACs): which hosts the planner picks depends
 * on the inventory and on the hosts already taken, as on a real site.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface ResourceSite {
  /** Workers beyond worker-1, each asking for cpu ≥ 8. */
  workers: number;
  jq: string;
}

export const RESOURCE_HOSTS = 6;

export function resourceHostIp(i: number): string {
  return `198.18.9.${i + 11}`;
}

/** Hosts of growing size: node-1 has 4 cpus, node-6 24; node-3 is powered off. */
function bmh(i: number): string {
  const mac = `52:54:00:bb:00:${(i + 1).toString(16).padStart(2, '0')}`;
  return `apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: node-${i + 1}
  namespace: metal3
spec:
  online: true
  bootMACAddress: "${mac}"
  bmc:
    address: ipmi://10.99.0.${i + 1}
    credentialsName: node-${i + 1}-bmc
status:
  poweredOn: ${i === 2 ? 'false' : 'true'}
  operationalStatus: OK
  errorMessage: ""
  errorCount: 0
  provisioningFailCount: 0
  provisioning:
    ID: 6f1e0c2a-3b4d-4e5f-8a9b-${String(i + 1).padStart(12, '0')}
    state: provisioned
  hardware:
    cpu:
      count: ${4 * (i + 1)}
    ramMebibytes: ${8192 * (i + 1)}
    nics:
      - name: eth0
        mac: "${mac}"
        ip: ${resourceHostIp(i)}
`;
}

export async function writeResourceSite(dir: string, spec: ResourceSite): Promise<void> {
  await mkdir(join(dir, 'inventory'), { recursive: true });
  await writeFile(
    join(dir, 'inventory', 'hosts.yaml'),
    Array.from({ length: RESOURCE_HOSTS }, (_, i) => bmh(i)).join('---\n'),
  );
  const workers = Array.from(
    { length: spec.workers },
    (_, i) => `    - worker-${i + 2}:\n        cpu: 8\n`,
  ).join('');
  await writeFile(
    join(dir, 'cluster.yaml'),
    `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata:
  name: east-provisioning
  labels:
    cluster: east
spec:
  masters:
    - master-1:
        cpu: 12
  workers:
    - worker-1:
        cpu: 4
${workers}---
apiVersion: bpa.akraino.org/v1alpha1
kind: Software
metadata:
  name: east-software
  labels:
    cluster: east
spec:
  masterSoftware:
    - jq:
        version: "${spec.jq}"
  workerSoftware:
    - curl
`,
  );
}

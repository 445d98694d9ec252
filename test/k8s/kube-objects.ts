/**
 * Objects written into the real kube-apiserver of test/k8s/envtest.ts as the test's admin,
 * with their status through the status subresource: what metal3's controller, a kubelet or
 * kube-controller-manager would write where none runs.
 */
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import type { KubeTestEnv } from './envtest.js';

export interface KubeObjectIn {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string; [k: string]: unknown };
  status?: unknown;
  [k: string]: unknown;
}

const PLURAL: Record<string, string> = {
  BareMetalHost: 'baremetalhosts',
  HardwareData: 'hardwaredata',
  Namespace: 'namespaces',
  Secret: 'secrets',
  ConfigMap: 'configmaps',
  Job: 'jobs',
  Pod: 'pods',
  Lease: 'leases',
  Site: 'sites',
  Cluster: 'clusters',
  Provisioning: 'provisionings',
  Software: 'softwares',
};

/** The collection path of an object, in `namespace` unless it names its own. */
export function collectionPath(o: KubeObjectIn, namespace?: string): string {
  const plural = PLURAL[o.kind];
  if (!plural) throw new Error(`kube-objects: no collection known for ${o.kind}`);
  const base = o.apiVersion.includes('/') ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`;
  const ns = o.kind === 'Namespace' ? undefined : (o.metadata.namespace ?? namespace);
  return ns ? `${base}/namespaces/${ns}/${plural}` : `${base}/${plural}`;
}

/**
 * Creates `o` (in `namespace` unless it names one), then writes its status, if any, through
 * /status; returns the stored object. Throws with the server's answer on any refusal.
 */
export async function createObject<T = Record<string, unknown>>(
  env: KubeTestEnv,
  o: KubeObjectIn,
  namespace = env.namespace,
): Promise<T> {
  const coll = collectionPath(o, namespace);
  const { status, ...rest } = o;
  const body =
    o.kind === 'Namespace'
      ? rest
      : { ...rest, metadata: { ...o.metadata, namespace: o.metadata.namespace ?? namespace } };
  const created = await env.admin<Record<string, unknown>>('POST', coll, body);
  if (created.status !== 201)
    throw new Error(`POST ${coll}: ${created.status} ${JSON.stringify(created.body)}`);
  if (status === undefined) return created.body as T;
  const p = `${coll}/${String(o.metadata.name)}/status`;
  const updated = await env.admin<Record<string, unknown>>('PUT', p, { ...created.body, status });
  if (updated.status !== 200)
    throw new Error(`PUT ${p}: ${updated.status} ${JSON.stringify(updated.body)}`);
  return updated.body as T;
}

/** Creates many objects, a few at a time (the machine and the server are small). */
export async function createObjects(
  env: KubeTestEnv,
  objects: readonly KubeObjectIn[],
  namespace = env.namespace,
  parallel = 8,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < objects.length) {
      const o = objects[next++] as KubeObjectIn;
      await createObject(env, o, namespace);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

/** The objects of a YAML file (a site's inventory), created in `namespace` with their status. */
export async function createObjectsOf(
  env: KubeTestEnv,
  file: string,
  namespace = env.namespace,
): Promise<void> {
  const docs = parseAllDocuments(await readFile(file, 'utf8'))
    .map((d) => d.toJS() as KubeObjectIn | null)
    .filter((d): d is KubeObjectIn => d !== null && typeof d === 'object');
  await createObjects(
    env,
    docs.map((d) => ({ ...d, metadata: { ...d.metadata, namespace } })),
    namespace,
  );
}

/** A finished Job's status as the Job controller writes it: succeeded. */
export const JOB_SUCCEEDED = {
  succeeded: 1,
  conditions: [{ type: 'Complete', status: 'True' }],
};

/** A finished Job's status as the Job controller writes it: failed at its deadline. */
export const JOB_TIMED_OUT = {
  failed: 1,
  conditions: [
    {
      type: 'Failed',
      status: 'True',
      reason: 'DeadlineExceeded',
      message: 'Job was active longer than specified deadline',
    },
  ],
};

/**
 * The status of provisioned host `i` as metal3's controller writes it: every field the real
 * CRD requires, so a real API server takes it; 8 CPUs and 8 GiB.
 */
export function provisionedHostStatus(i: number): Record<string, unknown> {
  return {
    poweredOn: true,
    operationalStatus: 'OK',
    errorMessage: '',
    errorCount: 0,
    provisioningFailCount: 0,
    provisioning: {
      ID: `6f1e0c2a-3b4d-4e5f-8a9b-${String(i).padStart(12, '0')}`,
      state: 'provisioned',
    },
    hardware: { cpu: { count: 8 }, ramMebibytes: 8192 },
  };
}

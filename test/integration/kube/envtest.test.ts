// The real API server of test/k8s/envtest.ts, proven before other tests rely on it: up, with
// CRDs, RBAC as deploy/rbac.yaml grants it, metal3's schema as metal3 writes it, 1.20's paging,
// and bpa's own kubeconfig loader and client talking to it.
import assert from 'node:assert/strict';
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { httpStatus } from '../../../src/kube/api.js';
import { loadKubeConfig } from '../../../src/kube/kubeconfig.js';
import { listMetal3Objects } from '../../../src/observe/inventory/kubernetes.js';
import { useRealKube } from '../../k8s/envtest.js';

const BMH = '/apis/metal3.io/v1alpha1';

function host(name: string): Record<string, unknown> {
  return {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: { name },
    spec: { online: true, bootMACAddress: '52:54:00:00:01:01' },
  };
}

/** A status as metal3's controller writes it: every required field, errorMessage "". */
const provisionedStatus = {
  errorMessage: '',
  errorCount: 0,
  provisioningFailCount: 0,
  operationalStatus: 'OK',
  poweredOn: true,
  provisioning: { ID: '', state: 'provisioned', bootMode: 'UEFI' },
  hardware: { cpu: { count: 8, arch: 'x86_64' }, ramMebibytes: 8192, hostname: 'node-1' },
};

describe('real kube-apiserver (test/k8s/envtest.ts)', function () {
  this.timeout(120_000);
  const kube = useRealKube({ name: 'envtest', metal3: true });

  it('is up over TLS, Kubernetes 1.20, with bpa and metal3 CRDs established', async () => {
    const version = await kube.env.admin<{ gitVersion: string }>('GET', '/version');
    assert.equal(version.status, 200);
    assert.match(version.body.gitVersion, /^v1\.20\./);
    for (const name of [
      'sites.bpa.akraino.org',
      'clusters.bpa.akraino.org',
      'baremetalhosts.metal3.io',
      'hardwaredata.metal3.io',
    ]) {
      const crd = await kube.env.admin<{
        status: { conditions: { type: string; status: string }[] };
      }>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
      assert.equal(crd.status, 200, name);
      assert.ok(
        crd.body.status.conditions.some((c) => c.type === 'Established' && c.status === 'True'),
        `${name} established`,
      );
    }
  });

  it("lets bpa's service account do what deploy/rbac.yaml grants, through bpa's kubeconfig loader, and nothing more (403)", async () => {
    const { namespace, bpaKubeconfigPath } = kube.env;
    const created = await kube.env.admin(
      'POST',
      `${BMH}/namespaces/${namespace}/baremetalhosts`,
      host('rbac-1'),
    );
    assert.equal(created.status, 201);

    const kc = loadKubeConfig({ file: bpaKubeconfigPath, env: {}, what: 'the inventory' });
    assert.ok(kc);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const list = (await custom.listNamespacedCustomObject({
      group: 'metal3.io',
      version: 'v1alpha1',
      plural: 'baremetalhosts',
      namespace,
    })) as { items: { metadata: { name: string } }[] };
    assert.deepEqual(
      list.items.map((i) => i.metadata.name),
      ['rbac-1'],
    );

    // Granted: get on namespaces (cluster-wide), get/create/update on secrets in its namespace.
    const core = kc.makeApiClient(CoreV1Api);
    assert.equal((await core.readNamespace({ name: namespace })).metadata?.name, namespace);
    await core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: 'granted' }, stringData: { a: 'b' } },
    });

    // Not granted: listing Secrets, patching one (bpa replaces them), reading a single
    // BareMetalHost, Secrets of another namespace.
    const refused: [string, () => Promise<unknown>][] = [
      ['list secrets', () => core.listNamespacedSecret({ namespace })],
      [
        'patch a secret',
        () =>
          core.patchNamespacedSecret(
            { name: 'granted', namespace, body: { metadata: { labels: { a: 'b' } } } },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          ),
      ],
      [
        'get a baremetalhost',
        () =>
          custom.getNamespacedCustomObject({
            group: 'metal3.io',
            version: 'v1alpha1',
            plural: 'baremetalhosts',
            namespace,
            name: 'rbac-1',
          }),
      ],
      [
        'secrets in kube-system',
        () => core.readNamespacedSecret({ name: 'x', namespace: 'kube-system' }),
      ],
    ];
    for (const [what, call] of refused) {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof ApiException, `${what}: refused`);
      assert.equal(httpStatus(err), 403, `${what}: 403`);
    }
  });

  it('accepts a BareMetalHost status as metal3 writes it (errorMessage "", required fields) through the status subresource', async () => {
    const { namespace } = kube.env;
    const path = `${BMH}/namespaces/${namespace}/baremetalhosts`;
    const created = await kube.env.admin<Record<string, unknown>>('POST', path, host('status-1'));
    assert.equal(created.status, 201);
    const put = await kube.env.admin<{ status: typeof provisionedStatus }>(
      'PUT',
      `${path}/status-1/status`,
      { ...created.body, status: provisionedStatus },
    );
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal(put.body.status.errorMessage, '');

    // The schema is enforced: a status without the required fields is refused.
    const partial = await kube.env.admin<{ message: string }>('PUT', `${path}/status-1/status`, {
      ...put.body,
      status: { poweredOn: true },
    });
    assert.equal(partial.status, 422);
    assert.match(partial.body.message, /errorCount|provisioning/);

    // Through bpa's inventory listing, as bpa's service account: the status is there.
    const kc = loadKubeConfig({ file: kube.env.bpaKubeconfigPath, env: {}, what: 'the inventory' });
    assert.ok(kc);
    const objects = await listMetal3Objects({ kubeConfig: kc, namespaces: [namespace] });
    const got = objects.find((o) => o.metadata?.name === 'status-1') as
      { status?: { provisioning?: { state?: string } } } | undefined;
    assert.equal(got?.status?.provisioning?.state, 'provisioned');
  });

  it('pages a list of 600 BareMetalHosts at 500 with a continue token, and bpa reads them all', async () => {
    const { namespace } = kube.env;
    const ns = `${namespace}-many`;
    // A namespace of its own: the other tests' hosts do not change the count.
    assert.equal(
      (
        await kube.env.admin('POST', '/api/v1/namespaces', {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: ns },
        })
      ).status,
      201,
    );
    const path = `${BMH}/namespaces/${ns}/baremetalhosts`;
    const names = Array.from({ length: 600 }, (_, i) => `h-${String(i).padStart(3, '0')}`);
    for (let i = 0; i < names.length; i += 20) {
      const batch = await Promise.all(
        names.slice(i, i + 20).map((n) => kube.env.admin('POST', path, host(n))),
      );
      assert.ok(batch.every((r) => r.status === 201));
    }
    const first = await kube.env.admin<{ items: unknown[]; metadata: { continue?: string } }>(
      'GET',
      `${path}?limit=500`,
    );
    assert.equal(first.body.items.length, 500);
    assert.ok(first.body.metadata.continue, 'a continue token');
    const second = await kube.env.admin<{ items: unknown[]; metadata: { continue?: string } }>(
      'GET',
      `${path}?limit=500&continue=${encodeURIComponent(first.body.metadata.continue)}`,
    );
    assert.equal(second.body.items.length, 100);
    assert.ok(!second.body.metadata.continue);

    // bpa's own paging (page size 500), as its service account (the ClusterRole lists in any
    // namespace).
    const kc = loadKubeConfig({ file: kube.env.bpaKubeconfigPath, env: {}, what: 'the inventory' });
    assert.ok(kc);
    const objects = await listMetal3Objects({ kubeConfig: kc, namespaces: [ns] });
    assert.equal(objects.filter((o) => o.kind === 'BareMetalHost').length, 600);
    await kube.env.admin('DELETE', `/api/v1/namespaces/${ns}`);
  });
});

describe('real kube-apiserver with kube-controller-manager (test/k8s/envtest.ts)', function () {
  this.timeout(120_000);
  const kube = useRealKube({ name: 'envtest-kcm', controllerManager: true });

  it("runs the Job controller: a Job's pod appears, owned by the Job", async () => {
    const { namespace } = kube.env;
    const job = await kube.env.admin<{ metadata: { uid: string } }>(
      'POST',
      `/apis/batch/v1/namespaces/${namespace}/jobs`,
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'installer' },
        spec: {
          backoffLimit: 0,
          template: {
            spec: {
              restartPolicy: 'Never',
              containers: [{ name: 'run', image: 'installer:test', command: ['true'] }],
            },
          },
        },
      },
    );
    assert.equal(job.status, 201);
    const until = Date.now() + 60_000;
    let owners: string[] = [];
    while (Date.now() < until && owners.length === 0) {
      const pods = await kube.env.admin<{
        items: { metadata: { ownerReferences?: { uid: string }[] } }[];
      }>('GET', `/api/v1/namespaces/${namespace}/pods?labelSelector=job-name%3Dinstaller`);
      owners = pods.body.items.flatMap((p) => (p.metadata.ownerReferences ?? []).map((o) => o.uid));
      if (owners.length === 0) await new Promise((r) => setTimeout(r, 250));
    }
    assert.deepEqual(owners, [job.body.metadata.uid]);
  });
});

// The Kubernetes inventory source (src/observe/inventory/kubernetes.ts) through the real client
// against a real kube-apiserver with metal3's CRDs, as bpa's service account with only
// deploy/rbac.yaml's grants. Faults a real server does not give on demand (a 500, a missing
// HardwareData API, a namespace bpa may not read) stay on the fake, in
// test/unit/observe/kubernetes-inventory.test.ts.
import assert from 'node:assert/strict';
import { listMetal3Objects } from '../../../src/observe/inventory/kubernetes.js';
import { hostsFromObjects } from '../../../src/observe/inventory/hosts.js';
import { BpaError } from '../../../src/util/errors.js';
import { useRealKube, type KubeTestEnv } from '../../k8s/envtest.js';
import {
  createObject,
  createObjects,
  provisionedHostStatus,
  type KubeObjectIn,
} from '../../k8s/kube-objects.js';

function host(i: number): KubeObjectIn {
  const mac = [Math.floor(i / 256), i % 256].map((b) => b.toString(16).padStart(2, '0'));
  return {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: { name: `node-${i}` },
    spec: { online: true, bootMACAddress: `52:54:00:00:${mac.join(':')}` },
    status: provisionedHostStatus(i),
  };
}

const names = (objects: { kind?: string; metadata?: { namespace?: string; name?: string } }[]) =>
  objects
    .filter((o) => o.kind === 'BareMetalHost')
    .map((o) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`);

describe('Kubernetes inventory on a real kube-apiserver (bpa service account)', function () {
  this.timeout(180_000);
  const kube = useRealKube({ name: 'inventory', metal3: true });
  // A second inventory namespace, and one without hosts.
  let other = '';
  let empty = '';
  // useRealKube's own after() runs first and forgets its env; this one still deletes them.
  let env: KubeTestEnv | undefined;
  const HOSTS = 520;

  before(async function () {
    this.timeout(180_000);
    env = kube.env;
    other = `${kube.env.namespace}-b`;
    empty = `${kube.env.namespace}-empty`;
    for (const name of [other, empty])
      await createObject(kube.env, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await createObjects(
      kube.env,
      Array.from({ length: HOSTS }, (_, i) => host(i)),
    );
    await createObject(kube.env, {
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'HardwareData',
      metadata: { name: 'node-3' },
      spec: { hardware: { cpu: { count: 96 } } },
    });
    await createObjects(kube.env, [host(1000), host(1001)], other);
  });
  after(async () => {
    for (const ns of [other, empty]) if (ns) await env?.admin('DELETE', `/api/v1/namespaces/${ns}`);
  });

  it(`lists all ${HOSTS} hosts of a namespace across pages (limit 500, then continue), with HardwareData`, async () => {
    const objects = await listMetal3Objects({
      kubeConfig: kube.env.bpaKubeConfig(),
      namespaces: [kube.env.namespace],
    });
    const listed = names(objects);
    assert.equal(listed.length, HOSTS);
    assert.equal(new Set(listed).size, HOSTS, 'no host twice');
    const hosts = hostsFromObjects(objects);
    assert.equal(hosts.find((h) => h.name === 'node-3')?.cpuCount, 96);
    assert.equal(hosts.find((h) => h.name === 'node-519')?.cpuCount, 8);
  });

  it('lists only the configured namespaces, and all of them when none are configured', async () => {
    const kubeConfig = kube.env.bpaKubeConfig();
    assert.deepEqual(names(await listMetal3Objects({ kubeConfig, namespaces: [other] })), [
      `${other}/node-1000`,
      `${other}/node-1001`,
    ]);
    const both = names(
      await listMetal3Objects({ kubeConfig, namespaces: [other, kube.env.namespace] }),
    );
    assert.equal(both.length, HOSTS + 2);
    // All namespaces: the server's other test files may hold hosts too, so ours are a part.
    const all = new Set(names(await listMetal3Objects({ kubeConfig, namespaces: [] })));
    assert.ok(all.has(`${other}/node-1001`));
    assert.ok(all.has(`${kube.env.namespace}/node-0`));
    assert.ok(all.has(`${kube.env.namespace}/node-${HOSTS - 1}`));
  });

  it('a configured namespace that does not exist stops with a StalledError naming it', async () => {
    const missing = `${kube.env.namespace}-nope`;
    await assert.rejects(
      listMetal3Objects({
        kubeConfig: kube.env.bpaKubeConfig(),
        namespaces: [other, missing],
      }),
      (err: unknown) => {
        assert.ok(err instanceof BpaError);
        assert.equal(err.code, 'INVENTORY_UNAVAILABLE');
        assert.equal(err.retry, 'stalled');
        assert.match(err.message, new RegExp(`namespace ${missing}: the namespace does not exist`));
        assert.match(err.message, /inventory\.namespaces/);
        return true;
      },
    );
  });

  it('an existing namespace without hosts is just empty', async () => {
    assert.deepEqual(
      await listMetal3Objects({ kubeConfig: kube.env.bpaKubeConfig(), namespaces: [empty] }),
      [],
    );
  });
});

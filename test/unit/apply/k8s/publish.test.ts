import assert from 'node:assert/strict';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  nodeData,
  publishNodeConfigMap,
  storeKubeconfigSecret,
} from '../../../../src/apply/k8s/publish.js';
import { StalledError, TransientError } from '../../../../src/util/errors.js';
import { startFakeKube, type FakeKube } from '../../../fakes/kube-api-server.js';

const NS = 'bpa-system';
const SECRETS = `/api/v1/namespaces/${NS}/secrets`;
const CONFIGMAPS = `/api/v1/namespaces/${NS}/configmaps`;
const ADMIN_CONF =
  'apiVersion: v1\nkind: Config\nclusters:\n- name: edge-01\n  cluster: {server: "https://10.10.0.11:6443"}\n';

async function waitUntil(cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('publishing cluster results (against the fake API server)', () => {
  let kube: FakeKube;
  let kc: KubeConfig;

  beforeEach(async () => {
    kube = await startFakeKube();
    kc = kube.kubeConfig(NS);
  });

  afterEach(async () => {
    await kube.stop();
  });

  const writes = (prefix: string): string[] =>
    kube.requests
      .filter((r) => r.path.startsWith(prefix) && r.method !== 'GET')
      .map((r) => r.method);

  describe('kubeconfig Secret', () => {
    it('creates it, leaves it alone when unchanged, and replaces it when the content changes', async () => {
      await storeKubeconfigSecret(kc, NS, 'edge-01', ADMIN_CONF);
      const created = kube.get('v1', 'Secret', NS, 'edge-01-kubeconfig');
      assert.ok(created);
      assert.equal(created.type, 'Opaque');
      assert.deepEqual(created.data, { value: Buffer.from(ADMIN_CONF).toString('base64') });
      assert.deepEqual(created.metadata.labels, {
        'app.kubernetes.io/managed-by': 'bpa',
        'bpa.akraino.org/cluster': 'edge-01',
      });
      assert.deepEqual(writes(SECRETS), ['POST']);

      await storeKubeconfigSecret(kc, NS, 'edge-01', ADMIN_CONF);
      assert.deepEqual(writes(SECRETS), ['POST'], 'no write when nothing changed');
      assert.equal(
        kube.get('v1', 'Secret', NS, 'edge-01-kubeconfig')?.metadata.resourceVersion,
        created.metadata.resourceVersion,
      );

      const rotated = ADMIN_CONF.replace('10.10.0.11', '10.10.0.12');
      await storeKubeconfigSecret(kc, NS, 'edge-01', rotated);
      assert.deepEqual(writes(SECRETS), ['POST', 'PUT']);
      const put = kube.requests.find((r) => r.method === 'PUT' && r.path.startsWith(SECRETS));
      assert.equal(
        (put?.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion,
        created.metadata.resourceVersion,
        'the replace carries the resourceVersion it read',
      );
      const replaced = kube.get('v1', 'Secret', NS, 'edge-01-kubeconfig');
      const data = replaced?.data as { value: string } | undefined;
      assert.equal(Buffer.from(data?.value ?? '', 'base64').toString(), rotated);
      assert.equal(replaced?.metadata.uid, created.metadata.uid);
    });

    it('keeps labels and annotations others added, and drops stale keys', async () => {
      kube.put({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 'edge-01-kubeconfig',
          namespace: NS,
          labels: { team: 'edge' },
          annotations: { note: 'kept' },
        },
        type: 'Opaque',
        data: { value: Buffer.from('old').toString('base64'), stale: 'eA==' },
      });
      await storeKubeconfigSecret(kc, NS, 'edge-01', ADMIN_CONF);
      const secret = kube.get('v1', 'Secret', NS, 'edge-01-kubeconfig');
      assert.deepEqual(Object.keys(secret?.data as object), ['value']);
      assert.equal(secret?.metadata.labels?.team, 'edge');
      assert.equal(secret?.metadata.labels?.['app.kubernetes.io/managed-by'], 'bpa');
      assert.equal(secret?.metadata.annotations?.note, 'kept');
    });

    it('on a 409 from create (someone else created it meanwhile) reads it and replaces it', async () => {
      // Slow answers let the test slip another writer's create in between bpa's read (404)
      // and its create, which the server then refuses with 409 AlreadyExists.
      kube.setLatency(100);
      const call = storeKubeconfigSecret(kc, NS, 'edge-01', ADMIN_CONF);
      await waitUntil(() => writes(SECRETS).length === 1);
      kube.put({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'edge-01-kubeconfig', namespace: NS },
        data: { value: Buffer.from('written by someone else').toString('base64') },
      });
      await call;
      assert.deepEqual(writes(SECRETS), ['POST', 'PUT']);
      const value = kube.get('v1', 'Secret', NS, 'edge-01-kubeconfig')?.data as { value: string };
      assert.equal(Buffer.from(value.value, 'base64').toString(), ADMIN_CONF);
    });

    it('retries a replace that met a 409 conflict, and gives up after repeated conflicts', async () => {
      await storeKubeconfigSecret(kc, NS, 'edge-01', ADMIN_CONF);
      kube.fail(
        { method: 'PUT', pathPrefix: SECRETS, times: 1 },
        { code: 409, message: 'the object has been modified' },
      );
      await storeKubeconfigSecret(kc, NS, 'edge-01', 'v2');
      assert.deepEqual(writes(SECRETS), ['POST', 'PUT', 'PUT']);
      const value = kube.get('v1', 'Secret', NS, 'edge-01-kubeconfig')?.data as { value: string };
      assert.equal(Buffer.from(value.value, 'base64').toString(), 'v2');

      kube.fail(
        { method: 'PUT', pathPrefix: SECRETS },
        { code: 409, message: 'the object has been modified' },
      );
      await assert.rejects(storeKubeconfigSecret(kc, NS, 'edge-01', 'v3'), (err: unknown) => {
        assert.ok(err instanceof TransientError);
        assert.equal(err.code, 'PUBLISH_CONFLICT');
        return true;
      });
    });

    it('never puts the kubeconfig into an error message', async () => {
      kube.fail(
        { method: 'POST', pathPrefix: SECRETS, times: 1 },
        { code: 403, message: 'secrets is forbidden' },
      );
      await assert.rejects(
        storeKubeconfigSecret(kc, NS, 'edge-01', 'token: s3cr3t-value'),
        (err: unknown) => {
          assert.ok(err instanceof StalledError);
          assert.match(err.message, /forbidden \(403\).*grant get, create and update on secrets/);
          assert.doesNotMatch(JSON.stringify(err.toJSON()), /s3cr3t|czNjcjN0/);
          return true;
        },
      );
    });
  });

  describe('node ConfigMap', () => {
    const nodes = [
      { name: 'node-1', ip: '10.10.0.11', roles: ['master', 'worker'] as ('master' | 'worker')[] },
      { name: 'node-2', ip: '10.10.0.12', roles: ['worker'] as ('master' | 'worker')[] },
      { name: 'node-3', ip: '10.10.0.13', roles: ['worker'] as ('master' | 'worker')[] },
    ];

    it('maps MASTER_/WORKER_<node> to IPs, a dual-role node under both keys', async () => {
      await publishNodeConfigMap(kc, NS, 'edge-01', nodes);
      const cm = kube.get('v1', 'ConfigMap', NS, 'edge-01-configmap');
      assert.deepEqual(cm?.data, {
        'MASTER_node-1': '10.10.0.11',
        'WORKER_node-1': '10.10.0.11',
        'WORKER_node-2': '10.10.0.12',
        'WORKER_node-3': '10.10.0.13',
      });
      assert.equal(cm?.metadata.labels?.['bpa.akraino.org/cluster'], 'edge-01');
    });

    it('writes nothing when unchanged, and removes a node that left the cluster', async () => {
      await publishNodeConfigMap(kc, NS, 'edge-01', nodes);
      await publishNodeConfigMap(kc, NS, 'edge-01', [...nodes].reverse());
      assert.deepEqual(writes(CONFIGMAPS), ['POST'], 'order of nodes does not matter');

      await publishNodeConfigMap(kc, NS, 'edge-01', nodes.slice(0, 2));
      assert.deepEqual(writes(CONFIGMAPS), ['POST', 'PUT']);
      assert.deepEqual(kube.get('v1', 'ConfigMap', NS, 'edge-01-configmap')?.data, {
        'MASTER_node-1': '10.10.0.11',
        'WORKER_node-1': '10.10.0.11',
        'WORKER_node-2': '10.10.0.12',
      });
    });

    it('rejects one node given twice with different IPs', () => {
      assert.throws(
        () => nodeData('edge-01-configmap', [nodes[1]!, { ...nodes[1]!, ip: '10.10.0.99' }]),
        (err: unknown) => err instanceof StalledError && err.code === 'PUBLISH_INVALID',
      );
    });

    it('names the missing namespace when the write is refused with 404', async () => {
      kube.fail(
        { method: 'POST', pathPrefix: CONFIGMAPS, times: 1 },
        { code: 404, message: 'namespaces "bpa-system" not found' },
      );
      await assert.rejects(
        publishNodeConfigMap(kc, NS, 'edge-01', nodes),
        /namespaces "bpa-system" not found/,
      );
    });
  });
});

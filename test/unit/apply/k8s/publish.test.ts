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

// Creating, leaving alone and replacing the Secret and ConfigMap, and a real 403, run on a real
// kube-apiserver in test/integration/kube/publish.test.ts. Here, on the fake: what needs an
// injected answer or a timed race (a 409 on create or replace, a 403 on the create itself, a
// 404 for a missing namespace, which bpa's namespaced Role makes a 403 on a real server).
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

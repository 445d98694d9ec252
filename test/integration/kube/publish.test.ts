// Publishing an install's results (src/apply/k8s/publish.ts): the <cluster>-kubeconfig Secret
// and the <cluster>-configmap node map, written on a real kube-apiserver as bpa's service
// account with only deploy/rbac.yaml's grants. "No write" shows as an unchanged
// resourceVersion. Races and injected answers (a 409 on create or replace, a 404 for a
// missing namespace) stay on the fake in test/unit/apply/k8s/publish.test.ts.
import assert from 'node:assert/strict';
import { publishNodeConfigMap, storeKubeconfigSecret } from '../../../src/apply/k8s/publish.js';
import { StalledError } from '../../../src/util/errors.js';
import { useRealKube, type KubeTestEnv } from '../../k8s/envtest.js';
import { createObject } from '../../k8s/kube-objects.js';

const ADMIN_CONF =
  'apiVersion: v1\nkind: Config\nclusters:\n- name: edge-01\n  cluster: {server: "https://10.10.0.11:6443"}\n';

interface Stored {
  metadata: {
    uid: string;
    resourceVersion: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  type?: string;
  data?: Record<string, string>;
}

describe('publishing cluster results on a real kube-apiserver (bpa service account)', function () {
  this.timeout(60_000);
  const kube = useRealKube({ name: 'publish' });
  let cluster = 0;
  // Each test its own cluster name, so the objects of one do not meet the next.
  let name = '';
  beforeEach(() => {
    name = `edge-${++cluster}`;
  });
  const get = async (kind: 'secrets' | 'configmaps', n: string): Promise<Stored> => {
    const r = await kube.env.admin<Stored>(
      'GET',
      `/api/v1/namespaces/${kube.env.namespace}/${kind}/${n}`,
    );
    assert.equal(r.status, 200, `${kind}/${n}: ${JSON.stringify(r.body)}`);
    return r.body;
  };

  describe('kubeconfig Secret', () => {
    it('creates it, leaves it alone when unchanged, and replaces it when the content changes', async () => {
      const { namespace } = kube.env;
      const kc = kube.env.bpaKubeConfig();
      await storeKubeconfigSecret(kc, namespace, name, ADMIN_CONF);
      const created = await get('secrets', `${name}-kubeconfig`);
      assert.equal(created.type, 'Opaque');
      assert.deepEqual(created.data, { value: Buffer.from(ADMIN_CONF).toString('base64') });
      assert.deepEqual(created.metadata.labels, {
        'app.kubernetes.io/managed-by': 'bpa',
        'bpa.akraino.org/cluster': name,
      });

      await storeKubeconfigSecret(kc, namespace, name, ADMIN_CONF);
      const same = await get('secrets', `${name}-kubeconfig`);
      assert.equal(same.metadata.resourceVersion, created.metadata.resourceVersion, 'no write');

      const rotated = ADMIN_CONF.replace('10.10.0.11', '10.10.0.12');
      await storeKubeconfigSecret(kc, namespace, name, rotated);
      const replaced = await get('secrets', `${name}-kubeconfig`);
      assert.equal(Buffer.from(replaced.data?.value ?? '', 'base64').toString(), rotated);
      assert.equal(replaced.metadata.uid, created.metadata.uid, 'replaced, not recreated');
      assert.notEqual(replaced.metadata.resourceVersion, created.metadata.resourceVersion);
    });

    it('keeps labels and annotations others added, and drops stale keys', async () => {
      await createObject(kube.env, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: `${name}-kubeconfig`,
          labels: { team: 'edge' },
          annotations: { note: 'kept' },
        },
        type: 'Opaque',
        data: { value: Buffer.from('old').toString('base64'), stale: 'eA==' },
      });
      await storeKubeconfigSecret(kube.env.bpaKubeConfig(), kube.env.namespace, name, ADMIN_CONF);
      const secret = await get('secrets', `${name}-kubeconfig`);
      assert.deepEqual(Object.keys(secret.data ?? {}), ['value']);
      assert.equal(secret.metadata.labels?.['team'], 'edge');
      assert.equal(secret.metadata.labels?.['app.kubernetes.io/managed-by'], 'bpa');
      assert.equal(secret.metadata.annotations?.['note'], 'kept');
    });

    it("a namespace bpa's RBAC does not cover is refused (403), named, without the kubeconfig in the error", async () => {
      const env: KubeTestEnv = kube.env;
      const elsewhere = `${env.namespace}-x`;
      await createObject(env, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: elsewhere },
      });
      try {
        await assert.rejects(
          storeKubeconfigSecret(env.bpaKubeConfig(), elsewhere, name, 'token: s3cr3t-value'),
          (err: unknown) => {
            assert.ok(err instanceof StalledError, String(err));
            assert.match(err.message, /forbidden \(403\)/);
            assert.ok(err.message.includes(elsewhere), err.message);
            assert.match(err.message, /grant get, create and update on secrets/);
            assert.doesNotMatch(JSON.stringify(err.toJSON()), /s3cr3t|czNjcjN0/);
            return true;
          },
        );
      } finally {
        await env.admin('DELETE', `/api/v1/namespaces/${elsewhere}`);
      }
    });
  });

  describe('node ConfigMap', () => {
    const nodes = [
      { name: 'node-1', ip: '10.10.0.11', roles: ['master', 'worker'] as ('master' | 'worker')[] },
      { name: 'node-2', ip: '10.10.0.12', roles: ['worker'] as ('master' | 'worker')[] },
      { name: 'node-3', ip: '10.10.0.13', roles: ['worker'] as ('master' | 'worker')[] },
    ];

    it('maps MASTER_/WORKER_<node> to IPs, writes nothing when unchanged, and removes a node that left', async () => {
      const { namespace } = kube.env;
      const kc = kube.env.bpaKubeConfig();
      await publishNodeConfigMap(kc, namespace, name, nodes);
      const cm = await get('configmaps', `${name}-configmap`);
      assert.deepEqual(cm.data, {
        'MASTER_node-1': '10.10.0.11',
        'WORKER_node-1': '10.10.0.11',
        'WORKER_node-2': '10.10.0.12',
        'WORKER_node-3': '10.10.0.13',
      });
      assert.equal(cm.metadata.labels?.['bpa.akraino.org/cluster'], name);

      await publishNodeConfigMap(kc, namespace, name, [...nodes].reverse());
      const same = await get('configmaps', `${name}-configmap`);
      assert.equal(
        same.metadata.resourceVersion,
        cm.metadata.resourceVersion,
        'order of nodes does not matter: no write',
      );

      await publishNodeConfigMap(kc, namespace, name, nodes.slice(0, 2));
      assert.deepEqual((await get('configmaps', `${name}-configmap`)).data, {
        'MASTER_node-1': '10.10.0.11',
        'WORKER_node-1': '10.10.0.11',
        'WORKER_node-2': '10.10.0.12',
      });
    });
  });
});

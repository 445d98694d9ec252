import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { KubeNodeOps } from '../../../src/apply/rollout/kube-nodes.js';
import { BpaError } from '../../../src/util/errors.js';
import { silentLogger } from '../../../src/util/log.js';
import type { RolloutSettings } from '../../../src/validate/model.js';
import {
  readyNode,
  startFakeKube,
  type FakeKube,
  type FakeKubeOptions,
  type KubeObject,
} from '../../fakes/kube-api-server.js';

/**
 * The drain on every Kubernetes version bpa supports: the Eviction it posts is the version the
 * cluster's API server lists for `pods/eviction` (policy/v1 from 1.22, policy/v1beta1 on 1.20
 * and 1.21, which refuse a policy/v1 one), read from discovery once per cluster.
 */
describe('drain: the Eviction API version the cluster serves', function () {
  this.timeout(20_000);
  let kube: FakeKube | undefined;
  const drain: RolloutSettings['drain'] = {
    enabled: true,
    timeoutMs: 2_000,
    ignoreDaemonSets: true,
    deleteEmptyDirData: false,
  };

  const start = async (opts: FakeKubeOptions): Promise<FakeKube> => {
    const k = await startFakeKube(opts);
    for (const node of ['worker-1', 'worker-2']) {
      k.put(readyNode(node));
      k.put(pod(`web-${node}`, node));
    }
    kube = k;
    return k;
  };
  const pod = (name: string, node: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'apps', labels: { app: 'web' } },
    spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox' }] },
    status: { phase: 'Running' },
  });
  const ops = (k: FakeKube): KubeNodeOps =>
    new KubeNodeOps({
      kubeconfig: () => readFile(k.kubeconfigPath, 'utf8'),
      log: silentLogger(),
      pollMs: 10,
    });
  const evictionBodies = (k: FakeKube): unknown[] =>
    k.requests
      .filter((r) => r.method === 'POST' && r.path.endsWith('/eviction'))
      .map((r) => (r.body as { apiVersion?: unknown }).apiVersion);
  const discoveries = (k: FakeKube): number =>
    k.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1').length;

  afterEach(async () => {
    await kube?.stop();
    kube = undefined;
  });

  it('a 1.20 server (policy/v1beta1 only): evicts with policy/v1beta1, discovered once for the cluster', async () => {
    const k = await start({ policyVersion: 'v1beta1' });
    const nodes = ops(k);
    await nodes.drain('east', 'worker-1', drain);
    await nodes.drain('east', 'worker-2', drain);
    assert.deepEqual(
      k.list('v1', 'Pod').map((p) => p.metadata.name),
      [],
      'both pods evicted',
    );
    assert.deepEqual(evictionBodies(k), ['policy/v1beta1', 'policy/v1beta1']);
    assert.equal(discoveries(k), 1, 'discovery read once per cluster connection');
  });

  it('a 1.22+ server: evicts with policy/v1', async () => {
    const k = await start({});
    await ops(k).drain('east', 'worker-1', drain);
    assert.deepEqual(evictionBodies(k), ['policy/v1']);
    assert.equal(k.get('v1', 'Pod', 'apps', 'web-worker-1'), undefined);
  });

  it('a server without the Eviction API: DRAIN_FAILED saying so, and nothing evicted', async () => {
    const k = await start({ policyVersion: 'none' });
    await assert.rejects(ops(k).drain('east', 'worker-1', drain), (err: unknown) => {
      assert.ok(err instanceof BpaError, String(err));
      assert.equal(err.code, 'DRAIN_FAILED');
      assert.match(
        err.message,
        /node worker-1: cluster east serves no Eviction API bpa can use \(pods\/eviction taking policy\/v1 or policy\/v1beta1\)/,
      );
      assert.match(err.message, /1\.20 or newer/);
      return true;
    });
    assert.deepEqual(evictionBodies(k), []);
    assert.ok(k.get('v1', 'Pod', 'apps', 'web-worker-1'), 'the pod stays');
  });

  it('a discovery the server refuses: DRAIN_FAILED naming the request, and read again next time', async () => {
    const k = await start({});
    const nodes = ops(k);
    k.fail({ method: 'GET', pathPrefix: '/api/v1', times: 1 }, { code: 403, message: 'no' });
    await assert.rejects(nodes.drain('east', 'worker-1', drain), (err: unknown) => {
      assert.ok(err instanceof BpaError, String(err));
      assert.equal(err.code, 'DRAIN_FAILED');
      assert.match(err.message, /reading which Eviction API cluster east serves \(GET \/api\/v1\)/);
      assert.match(err.message, /forbidden \(403\)/);
      return true;
    });
    await nodes.drain('east', 'worker-1', drain);
    assert.equal(discoveries(k), 2, 'a failed discovery is not cached');
    assert.deepEqual(evictionBodies(k), ['policy/v1']);
  });

  it('an eviction refused with 400 (the cluster was upgraded meanwhile): the next drain discovers again', async () => {
    const k = await start({});
    const nodes = ops(k);
    await nodes.drain('east', 'worker-1', drain);
    k.fail(
      { method: 'POST', pathPrefix: '/api/v1/namespaces/apps/pods/', times: 1 },
      { code: 400, message: 'no kind "Eviction" is registered for version "policy/v1"' },
    );
    await assert.rejects(nodes.drain('east', 'worker-2', drain), /rejected \(400\)/);
    await nodes.drain('east', 'worker-2', drain);
    assert.equal(discoveries(k), 2);
    assert.equal(k.get('v1', 'Pod', 'apps', 'web-worker-2'), undefined);
  });
});

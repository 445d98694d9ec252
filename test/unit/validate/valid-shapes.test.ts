import assert from 'node:assert/strict';
import { parseSite } from '../../../src/load/index.js';
import { validateSite } from '../../../src/validate/index.js';

/** Validates in-memory files and returns the result (no fs). */
function validate(files: Record<string, string>): ReturnType<typeof validateSite> {
  return validateSite(
    parseSite(
      '/site',
      Object.entries(files).map(([path, text]) => ({ path, text })),
    ),
  );
}

function errorsOf(r: ReturnType<typeof validateSite>): string[] {
  return r.problems
    .filter((p) => p.severity === 'error')
    .map((p) => `${p.code} ${p.file} ${p.pointer}: ${p.message}`);
}

const PROV = 'apiVersion: bpa.akraino.org/v1alpha1\nkind: Provisioning\n';
const SOFT = 'apiVersion: bpa.akraino.org/v1alpha1\nkind: Software\n';
const CLUSTER = 'apiVersion: bpa.akraino.org/v1alpha1\nkind: Cluster\n';

describe('valid ICN shapes', () => {
  it('DESIGN §1 example: resources, dual-role by name, plugins, subnet, software', () => {
    const r = validate({
      'site.yaml': `${PROV}metadata: {name: provisioning-xyz, labels: {cluster: cluster-xyz, owner: c1}}
spec:
  masters:
    - master-1: {mac-address: "00:c5:16:05:61:b2", cpu: 10, memory: 4Gi}
  workers:
    - worker-1: {cpu: 20, memory: 8Gi, sriov: true}
    - master-1: {}
  KUDPlugins: [emco]
  PodSubnet: 10.244.64.0/18
---
${SOFT}metadata: {name: software-xyz, labels: {cluster: cluster-xyz, owner: c1}}
spec:
  masterSoftware: [htop, {jq: {version: 1.5+dfsg-1ubuntu0.1}}]
  workerSoftware: [curl, tmux]
---
${CLUSTER}metadata: {name: cluster-xyz, labels: {cluster: cluster-xyz, owner: c1}}
spec: {provisioningCR: provisioning-xyz, softwareCR: software-xyz}
`,
    });
    assert.deepEqual(errorsOf(r), []);
    const c = r.model?.clusters[0];
    assert.equal(c?.name, 'cluster-xyz');
    assert.equal(c?.owner, 'c1');
    assert.deepEqual(c?.plugins, ['emco']);
    assert.equal(c?.podSubnet, '10.244.64.0/18');
    assert.deepEqual(
      c?.nodes.map((n) => [n.name, n.roles, n.mac, n.cpu, n.memoryBytes]),
      [
        ['master-1', ['master', 'worker'], '00:c5:16:05:61:b2', 10, 4n << 30n],
        ['worker-1', ['worker'], undefined, 20, 8n << 30n],
      ],
    );
    assert.equal(c?.nodes[1]?.sriov, true);
    assert.deepEqual(c?.masterSoftware, [
      { name: 'htop' },
      { name: 'jq', version: '1.5+dfsg-1ubuntu0.1' },
    ]);
    assert.deepEqual(c?.workerSoftware, [{ name: 'curl' }, { name: 'tmux' }]);
  });

  it('seed 001: MAC-only nodes, a label with a null value, the same label in both roles, no Cluster document', () => {
    const r = validate({
      'p.yaml': `${PROV}metadata:
  name: provisioning-sample
  labels:
    cluster: cluster-abc
    owner: c1
spec:
  masters:
    - master-1:
        mac-address: 00:c6:14:04:61:b2
  workers:
    - worker-1:
        mac-address: 00:c6:14:04:61:b3
    - master-1:
`,
    });
    assert.deepEqual(errorsOf(r), []);
    const c = r.model?.clusters[0];
    assert.equal(c?.name, 'cluster-abc');
    assert.deepEqual(
      c?.nodes.map((n) => [n.name, n.roles]),
      [
        ['master-1', ['master', 'worker']],
        ['worker-1', ['worker']],
      ],
    );
  });

  it('seed 001: masters only, KUDPlugins, virtlet-vm cluster type', () => {
    const r = validate({
      'p.yaml': `${PROV}metadata:
  name: sample-kud-plugins
  labels:
    cluster: cluster-efg
    owner: c2
    cluster-type: virtlet-vm
spec:
  masters:
    - master-1:
        mac-address: 00:e1:ba:ce:df:bd
  KUDPlugins:
    - onap4k8s
`,
    });
    assert.deepEqual(errorsOf(r), []);
    assert.equal(r.model?.clusters[0]?.clusterType, 'virtlet-vm');
    assert.deepEqual(r.model?.clusters[0]?.plugins, ['onap4k8s']);
  });

  it('seed 001: a node given only by its label, and MAC + resources together', () => {
    const r = validate({
      'p.yaml': `${PROV}metadata: {name: provisioning-sample, labels: {cluster: cluster-xyz, owner: c2}}
spec:
  masters:
    - master-1:
        cpu: 10
        memory: 4Gi
        mac-address: 00:c5:16:05:61:b2
    - master-2:
        cpu: 10
        memory: 4Gi
        mac-address: 00:c2:14:06:61:b5
    - master-3:
  workers:
    - worker:
        cpu: 20
        memory: 8Gi
        mac-address: 00:c6:14:04:61:b2
`,
    });
    assert.deepEqual(errorsOf(r), []);
    assert.deepEqual(
      r.model?.clusters[0]?.nodes.map((n) => n.name),
      ['master-1', 'master-2', 'master-3', 'worker'],
    );
  });

  it('seed 001: Software with a cluster label and no Cluster document joins that cluster', () => {
    const r = validate({
      'p.yaml': `${PROV}metadata: {name: p, labels: {cluster: cluster-abc}}\nspec:\n  masters:\n    - master-1:\n`,
      's.yaml': `${SOFT}metadata:
  name: example-software
  labels:
    cluster: cluster-abc
    owner: c1
spec:
  masterSoftware:
    - curl
    - htop
    - jq:
        version: 1.5+dfsg-1ubuntu0.1
    - maven:
        version: 3.3.9-3
  workerSoftware:
    - curl
    - htop
    - tmux
    - jq
`,
    });
    assert.deepEqual(errorsOf(r), []);
    assert.equal(r.model?.clusters[0]?.software?.name, 'example-software');
    assert.equal(r.model?.clusters[0]?.masterSoftware.length, 4);
  });

  it('accepts MACs in upper case and with dashes, and normalizes them', () => {
    const r = validate({
      'p.yaml': `${PROV}metadata: {name: p, labels: {cluster: c}}\nspec:\n  masters:\n    - m1: {mac-address: "00-C5-16-05-61-B2"}\n`,
    });
    assert.deepEqual(errorsOf(r), []);
    assert.equal(r.model?.clusters[0]?.nodes[0]?.mac, '00:c5:16:05:61:b2');
  });

  it('warns (does not fail) on an even number of masters', () => {
    const r = validate({
      'p.yaml': `${PROV}metadata: {name: p, labels: {cluster: c}}\nspec:\n  masters:\n    - m1:\n    - m2:\n`,
    });
    assert.deepEqual(errorsOf(r), []);
    assert.ok(r.model);
    assert.deepEqual(
      r.problems.map((p) => [p.code, p.severity]),
      [['EVEN_MASTERS', 'warning']],
    );
  });

  it('allows BareMetalHost fields bpa does not read, and free metadata', () => {
    const r = validate({
      'h.yaml': `apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: node-1
  namespace: metal3
  annotations: {anything: goes}
  finalizers: [baremetalhost.metal3.io]
spec:
  online: true
  bootMACAddress: 52:54:00:00:00:01
  rootDeviceHints: {deviceName: /dev/sda}
  image: {url: "http://example.invalid/img", checksum: abc}
status:
  goodCredentials: {}
  hardware:
    firmware: {bios: {vendor: x}}
    cpu: {count: 8}
    ramMebibytes: 16384
`,
    });
    assert.deepEqual(errorsOf(r), []);
    assert.equal(r.model?.inventory.length, 1);
  });
});

describe('namespaces on bpa kinds', () => {
  it('resolves Cluster references by name whatever metadata.namespace says', () => {
    const r = validate({
      'c.yaml': `${CLUSTER}metadata: {name: c1, namespace: default, labels: {cluster: c1}}\nspec: {provisioningCR: p1, softwareCR: s1}\n`,
      'p.yaml': `${PROV}metadata: {name: p1, namespace: default, labels: {cluster: c1}}\nspec:\n  masters:\n    - m1:\n`,
      's.yaml': `${SOFT}metadata: {name: s1, namespace: other, labels: {cluster: c1}}\nspec: {masterSoftware: [htop]}\n`,
    });
    assert.deepEqual(errorsOf(r), []);
    assert.equal(r.model?.clusters[0]?.software?.name, 's1');
  });
});

import assert from 'node:assert/strict';
import type { RegistryMirror } from '../../../src/config/execution.js';
import { planRegistry } from '../../../src/plan/registry.js';
import type { Action, PlannedNode } from '../../../src/plan/types.js';
import {
  containerdFiles,
  daemonJsonHas,
  dockerKeys,
  hostsToml,
  mergeDaemonJson,
  mirrorDigest,
  mirrorDrift,
  watchedPaths,
} from '../../../src/runtime/registry-mirror.js';
import type { AppliedCluster } from '../../../src/state/applied.js';

const MIRROR: RegistryMirror = {
  url: 'http://172.22.0.2:5000',
  registries: ['docker.io', 'registry.k8s.io'],
  runtimes: ['containerd', 'docker'],
};

describe('registry mirror files', () => {
  it('docker.io: the mirror at its root, then registry-1.docker.io', () => {
    assert.equal(
      hostsToml(MIRROR, 'docker.io'),
      [
        '# Written by bpa (Site spec.registryMirror): pull through the site registry. Edits are undone.',
        'server = "https://registry-1.docker.io"',
        '',
        '[host."http://172.22.0.2:5000"]',
        '  capabilities = ["pull", "resolve"]',
        '',
      ].join('\n'),
    );
  });
  it('other registries: under their name in the mirror, with override_path', () => {
    const toml = hostsToml(MIRROR, 'registry.k8s.io');
    assert.match(toml, /^server = "https:\/\/registry\.k8s\.io"$/m);
    assert.match(toml, /^\[host\."http:\/\/172\.22\.0\.2:5000\/v2\/registry\.k8s\.io"\]$/m);
    assert.match(toml, /^ {2}override_path = true$/m);
  });
  it('one hosts.toml per registry, and daemon.json keys only for docker', () => {
    assert.deepEqual(Object.keys(containerdFiles(MIRROR)), [
      '/etc/containerd/certs.d/docker.io/hosts.toml',
      '/etc/containerd/certs.d/registry.k8s.io/hosts.toml',
    ]);
    assert.deepEqual(dockerKeys(MIRROR), {
      'registry-mirrors': ['http://172.22.0.2:5000'],
      'insecure-registries': ['172.22.0.2:5000'],
    });
    assert.equal(dockerKeys({ ...MIRROR, runtimes: ['containerd'] }), undefined);
    assert.deepEqual(
      dockerKeys({ ...MIRROR, url: 'https://reg.site.example' })?.['insecure-registries'],
      undefined,
    );
    assert.deepEqual(watchedPaths({}), ['/etc/containerd/certs.d/docker.io/hosts.toml']);
    assert.deepEqual(watchedPaths({ runtimes: ['docker'] }), ['/etc/docker/daemon.json']);
  });
  it("merges into the node's daemon.json and refuses one that is not an object", () => {
    const keys = dockerKeys(MIRROR) ?? {};
    const merged = mergeDaemonJson('{"log-driver": "journald", "registry-mirrors": ["x"]}', keys);
    assert.equal(typeof merged, 'string');
    const doc = JSON.parse(merged as string) as Record<string, unknown>;
    assert.equal(doc['log-driver'], 'journald');
    assert.deepEqual(doc['registry-mirrors'], ['http://172.22.0.2:5000']);
    assert.ok(daemonJsonHas(merged as string, keys));
    assert.equal(daemonJsonHas('{}', keys), false);
    assert.equal(daemonJsonHas(null, keys), false);
    assert.match(JSON.stringify(mergeDaemonJson('[1]', keys)), /not a JSON object/);
    assert.match(JSON.stringify(mergeDaemonJson('{', keys)), /not valid JSON/);
    assert.equal(typeof mergeDaemonJson(null, keys), 'string');
  });
  it('names what drifted', () => {
    const files = containerdFiles(MIRROR);
    const seen: Record<string, string | null> = {
      ...files,
      '/etc/containerd/certs.d/docker.io/hosts.toml': 'server = "x"\n',
      '/etc/containerd/certs.d/registry.k8s.io/hosts.toml': null,
      '/etc/docker/daemon.json': '{}',
    };
    assert.deepEqual(mirrorDrift(MIRROR, seen), [
      '/etc/containerd/certs.d/docker.io/hosts.toml was changed',
      '/etc/containerd/certs.d/registry.k8s.io/hosts.toml is missing',
      '/etc/docker/daemon.json lacks the registry mirror',
    ]);
    const ok = {
      ...files,
      '/etc/docker/daemon.json': mergeDaemonJson(null, dockerKeys(MIRROR) ?? {}) as string,
    };
    assert.deepEqual(mirrorDrift(MIRROR, ok), []);
  });
});

describe('planRegistry', () => {
  const node = (name: string, change: PlannedNode['change']): PlannedNode => ({
    name,
    roles: ['worker'],
    host: `lab/${name}`,
    mac: '02:00:00:00:00:01',
    ip: '192.0.2.1',
    ipSource: 'inventory',
    change,
    placement: '',
  });
  const applied = (registryMirror?: string): AppliedCluster => ({
    cluster: 'c',
    appliedAt: '',
    nodes: [],
    plugins: [],
    packages: { master: [], worker: [] },
    ...(registryMirror ? { registryMirror } : {}),
  });
  const settings = {
    installer: {
      mode: 'local',
      commands: { provision: '', scale: '', addon: '', remove: '', reset: '', upgrade: '' },
    },
    ssh: { user: 'root', port: 22 },
    registryMirror: MIRROR,
  };
  const plan = (
    nodes: PlannedNode[],
    a: AppliedCluster | undefined,
    facts?: Map<
      string,
      {
        reachable: boolean;
        installed: Record<string, string | null>;
        files?: Record<string, string | null>;
      }
    >,
    s: typeof settings | undefined = settings,
  ): { actions: Action[]; notes: string[] } => {
    const actions: Action[] = [];
    const notes: string[] = [];
    planRegistry('c', nodes, a, s, facts, actions, notes);
    return { actions, notes };
  };

  it('configures every node of a new cluster, and nothing once applied', () => {
    const fresh = plan([node('w1', 'add'), node('w2', 'add')], undefined);
    assert.equal(fresh.actions[0]?.kind, 'configure-registry');
    assert.deepEqual(fresh.actions[0]?.nodes, ['w1', 'w2']);
    assert.deepEqual(fresh.actions[0]?.registry, MIRROR);
    assert.deepEqual(plan([node('w1', 'keep')], applied(mirrorDigest(MIRROR))).actions, []);
  });
  it('configures only added nodes when the mirror is unchanged, all when it changed', () => {
    const a = applied(mirrorDigest(MIRROR));
    assert.deepEqual(plan([node('w1', 'keep'), node('w2', 'add')], a).actions[0]?.nodes, ['w2']);
    const changed = plan([node('w1', 'keep'), node('w2', 'keep')], applied('0000'));
    assert.deepEqual(changed.actions[0]?.nodes, ['w1', 'w2']);
    assert.match(changed.actions[0]?.reason ?? '', /registry mirror changed/);
  });
  it('repairs drift that a node reports, and leaves unreachable nodes alone', () => {
    const facts = new Map([
      [
        'c/w1',
        {
          reachable: true,
          installed: {},
          files: { '/etc/containerd/certs.d/docker.io/hosts.toml': null },
        },
      ],
      ['c/w2', { reachable: false, installed: {} }],
    ]);
    const r = plan([node('w1', 'keep'), node('w2', 'keep')], applied(mirrorDigest(MIRROR)), facts);
    assert.deepEqual(r.actions[0]?.nodes, ['w1']);
    assert.match(
      r.actions[0]?.reason ?? '',
      /w1: \/etc\/containerd\/certs\.d\/docker\.io\/hosts\.toml is missing/,
    );
  });
  it('says so when the Site no longer asks for a mirror', () => {
    const r = plan([node('w1', 'keep')], applied('abcd'), undefined, {
      ...settings,
      registryMirror: undefined,
    } as never);
    assert.deepEqual(r.actions, []);
    assert.match(r.notes[0] ?? '', /leaves the mirror configuration on the nodes/);
  });
});

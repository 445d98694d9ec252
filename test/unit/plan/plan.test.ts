import assert from 'node:assert/strict';
import { formatPlan } from '../../../src/cli/output/plan.js';
import type { ExecutionSettings } from '../../../src/config/execution.js';
import { planSite, type Plan, type PlanInput } from '../../../src/plan/index.js';
import { emptyState } from '../../../src/state/applied.js';
import type { SiteModel } from '../../../src/validate/model.js';
import { applied, appliedFrom, cluster, host, leasesFor, node } from './plan-fixture.js';

const hosts = [host(1), host(2), host(3), host(4)];
const leases = leasesFor(hosts);
const base = cluster(
  'east',
  [
    node('master-1', ['master'], { mac: '52:54:00:00:00:01' }),
    node('worker-1', ['worker'], { cpu: 8 }),
  ],
  {
    plugins: ['emco'],
    masterSoftware: [{ name: 'htop' }, { name: 'jq', version: '1.6-2' }],
    workerSoftware: [{ name: 'curl' }],
  },
);

function plan(clusters = [base], state = emptyState(), over: Partial<PlanInput> = {}): Plan {
  const model: SiteModel = { clusters, inventory: [] };
  return planSite({ model, hosts, leases, applied: state, prune: false, flavour: 'kud', ...over });
}

/** The applied state a successful apply of `p` would leave (for "nothing changed" runs). */
function afterApply(p: Plan, clusters = [base]): ReturnType<typeof appliedFrom> {
  return appliedFrom(
    p.clusters.map((c) => {
      const model = clusters.find((m) => m.name === c.cluster);
      return applied(
        c.cluster,
        c.nodes
          .filter((n) => n.change !== 'remove')
          .map((n) => ({ name: n.name, roles: n.roles, host: n.host, mac: n.mac, ip: n.ip })),
        { plugins: model?.plugins ?? [] },
        { master: model?.masterSoftware, worker: model?.workerSoftware },
      );
    }),
  );
}

const kinds = (p: Plan): string[] =>
  p.clusters.flatMap((c) => c.actions.map((a) => `${a.kind}:${a.nodes.join(',')}`));

describe('plan', () => {
  it('a new cluster: provision, then packages per role', () => {
    const p = plan();
    assert.deepEqual(p.problems, []);
    assert.deepEqual(kinds(p), [
      'provision-cluster:master-1,worker-1',
      'install-packages:master-1,worker-1',
    ]);
    const c = p.clusters[0];
    assert.deepEqual(c?.actions[0]?.plugins, ['emco']);
    assert.deepEqual(c?.actions[1]?.packages, [
      { node: 'master-1', name: 'htop', to: undefined },
      { node: 'master-1', name: 'jq', to: '1.6-2' },
      { node: 'worker-1', name: 'curl', to: undefined },
    ]);
    assert.deepEqual(
      c?.nodes.map((n) => [n.name, n.host, n.ip, n.change]),
      [
        ['master-1', 'metal3/node-1', '198.18.0.10', 'add'],
        ['worker-1', 'metal3/node-2', '198.18.0.11', 'add'],
      ],
    );
    assert.match(c?.hostsIni ?? '', /master-1 ansible_ssh_host=198\.18\.0\.10 ansible_ssh_port=22/);
  });

  it('nothing changed: no actions, and the same hash every time', () => {
    const first = plan();
    const p1 = plan([base], afterApply(first));
    const p2 = plan([base], afterApply(first));
    assert.deepEqual(kinds(p1), []);
    assert.equal(p1.hash, p2.hash);
    assert.notEqual(p1.hash, first.hash);
  });

  it('a worker added: add-nodes and its packages only', () => {
    const state = afterApply(plan());
    const more = { ...base, nodes: [...base.nodes, node('worker-2', ['worker'])] };
    const p = plan([more], state);
    assert.deepEqual(kinds(p), ['add-nodes:worker-2', 'install-packages:worker-2']);
    assert.deepEqual(p.clusters[0]?.actions[1]?.packages, [
      { node: 'worker-2', name: 'curl', to: undefined },
    ]);
    assert.equal(p.clusters[0]?.nodes.find((n) => n.name === 'master-1')?.change, 'keep');
  });

  it('a worker removed: a note without --prune, remove-nodes with it', () => {
    const state = afterApply(plan());
    const fewer = { ...base, nodes: [base.nodes[0]!] };
    const keep = plan([fewer], state);
    assert.deepEqual(kinds(keep), []);
    assert.match(
      keep.clusters[0]?.notes.join('\n') ?? '',
      /worker-1 is no longer in the site; run with --prune/,
    );
    const pruned = plan([fewer], state, { prune: true });
    assert.deepEqual(kinds(pruned), ['remove-nodes:worker-1']);
    assert.deepEqual(
      pruned.clusters[0]?.nodes.map((n) => [n.name, n.change]),
      [
        ['master-1', 'keep'],
        ['worker-1', 'remove'],
      ],
    );
    assert.doesNotMatch(pruned.clusters[0]?.hostsIni ?? '', /worker-1/);
  });

  it('a package version changed: upgrade-packages with before → after', () => {
    const state = afterApply(plan());
    const bumped = {
      ...base,
      masterSoftware: [{ name: 'htop' }, { name: 'jq', version: '1.7-1' }],
    };
    const p = plan([bumped], state);
    assert.deepEqual(kinds(p), ['upgrade-packages:master-1']);
    assert.deepEqual(p.clusters[0]?.actions[0]?.packages, [
      { node: 'master-1', name: 'jq', from: '1.6-2', to: '1.7-1' },
    ]);
  });

  it('a package dropped: removed only with --prune; packages never managed are never touched', () => {
    const state = afterApply(plan());
    const dropped = { ...base, workerSoftware: [] };
    assert.deepEqual(kinds(plan([dropped], state)), []);
    const p = plan([dropped], state, { prune: true });
    assert.deepEqual(kinds(p), ['remove-packages:worker-1']);
    assert.deepEqual(p.clusters[0]?.actions[0]?.packages, [
      { node: 'worker-1', name: 'curl', from: undefined },
    ]);
  });

  it('a plugin added: install-plugins with the new plugin only', () => {
    const state = afterApply(plan());
    const p = plan([{ ...base, plugins: ['emco', 'multus'] }], state);
    assert.deepEqual(kinds(p), ['install-plugins:']);
    assert.deepEqual(p.clusters[0]?.actions[0]?.plugins, ['multus']);
  });

  it('a node that cannot be placed blocks its cluster with a located NODE_UNPLACED', () => {
    const big = { ...base, nodes: [...base.nodes, node('worker-9', ['worker'], { cpu: 64 })] };
    const p = plan([big]);
    assert.deepEqual(
      p.problems.map((x) => [x.code, x.file, x.pointer]),
      [['NODE_UNPLACED', 'east/provisioning.yaml', '/spec/workers/0/worker-9']],
    );
    assert.match(p.problems[0]?.message ?? '', /worker-9/);
    assert.deepEqual(kinds(p), []);
    assert.match(p.clusters[0]?.notes[0] ?? '', /blocked/);
  });

  it('a placed node without any address is NO_IP', () => {
    const model: SiteModel = { clusters: [base], inventory: [] };
    const p = planSite({
      model,
      hosts,
      leases: new Map(),
      applied: emptyState(),
      prune: false,
      flavour: 'kud',
    });
    assert.deepEqual(
      p.problems.map((x) => x.code),
      ['NO_IP', 'NO_IP'],
    );
  });

  it('falls back on inventory addresses, IPv4 first', () => {
    const withIps = hosts.map((h, i) => ({
      ...h,
      nics: [{ mac: h.bootMac ?? '', ips: [`fd00::${i + 1}`, `198.18.1.${i + 1}`] }],
    }));
    const model: SiteModel = { clusters: [base], inventory: [] };
    const p = planSite({
      model,
      hosts: withIps,
      leases: new Map(),
      applied: emptyState(),
      prune: false,
      flavour: 'kubespray',
    });
    assert.deepEqual(p.problems, []);
    assert.deepEqual(
      p.clusters[0]?.nodes.map((n) => [n.ip, n.ipSource]),
      [
        ['198.18.1.1', 'inventory'],
        ['198.18.1.2', 'inventory'],
      ],
    );
    assert.match(p.clusters[0]?.hostsIni ?? '', /\[kube_control_plane\]/);
  });

  it('an IP change is shown on the node, not as an action', () => {
    const state = afterApply(plan());
    const moved = new Map(leases);
    moved.set('52:54:00:00:00:02', { mac: '52:54:00:00:00:02', ip: '198.18.0.99', origin: 'x:1' });
    const p = planSite({
      model: { clusters: [base], inventory: [] },
      hosts,
      leases: moved,
      applied: state,
      prune: false,
      flavour: 'kud',
    });
    assert.deepEqual(kinds(p), []);
    const w = p.clusters[0]?.nodes.find((n) => n.name === 'worker-1');
    assert.deepEqual([w?.change, w?.details], ['update', ['ip 198.18.0.11 → 198.18.0.99']]);
  });

  it('keeps a node on its applied host (sticky) even when a smaller host appears', () => {
    const state = appliedFrom([
      applied(
        'east',
        [
          {
            name: 'master-1',
            roles: ['master'],
            host: 'metal3/node-1',
            mac: '52:54:00:00:00:01',
            ip: '198.18.0.10',
          },
          {
            name: 'worker-1',
            roles: ['worker'],
            host: 'metal3/node-4',
            mac: '52:54:00:00:00:04',
            ip: '198.18.0.13',
          },
        ],
        { plugins: ['emco'] },
        { master: base.masterSoftware, worker: base.workerSoftware },
      ),
    ]);
    const p = plan([base], state);
    assert.deepEqual(kinds(p), []);
    assert.equal(p.clusters[0]?.nodes.find((n) => n.name === 'worker-1')?.host, 'metal3/node-4');
  });

  it('a cluster gone from the site: a note, or with --prune remove-cluster of every node (not remove-nodes of every master)', () => {
    const state = afterApply(plan());
    const kept = plan([], state);
    assert.match(kept.clusters[0]?.notes[0] ?? '', /no longer in the site; run with --prune/);
    assert.deepEqual(kinds(kept), [], 'prune off: refused, as before');
    const pruned = plan([], state, { prune: true });
    assert.deepEqual(kinds(pruned), ['remove-cluster:master-1,worker-1']);
    assert.match(
      pruned.clusters[0]?.actions[0]?.reason ?? '',
      /no longer in the site, and pruning is allowed: 2 nodes reset, and bpa forgets the cluster/,
    );
    assert.notEqual(pruned.hash, kept.hash);
    // The plan's text names it (-o json prints the clusters as they are).
    const text = formatPlan(pruned);
    assert.match(text, /remove-cluster/);
    assert.match(text, /2 to remove \(1 whole cluster reset\)/);
  });

  it('a master gone from a cluster that stays: remove-nodes of that master only', () => {
    const two = cluster('a', [
      node('master-1', ['master'], { mac: '52:54:00:00:00:01' }),
      node('master-2', ['master'], { mac: '52:54:00:00:00:02' }),
    ]);
    const state = afterApply(plan([two]), [two]);
    const one = cluster('a', [node('master-1', ['master'], { mac: '52:54:00:00:00:01' })]);
    assert.deepEqual(kinds(plan([one], state, { prune: true })), ['remove-nodes:master-2']);
  });

  it('the hash does not depend on host order', () => {
    const model: SiteModel = { clusters: [base], inventory: [] };
    const a = planSite({
      model,
      hosts,
      leases,
      applied: emptyState(),
      prune: false,
      flavour: 'kud',
    });
    const b = planSite({
      model,
      hosts: [...hosts].reverse(),
      leases,
      applied: emptyState(),
      prune: false,
      flavour: 'kud',
    });
    assert.equal(a.hash, b.hash);
    assert.match(a.hash, /^[0-9a-f]{64}$/);
  });
});

describe('plan: the Kubernetes version', () => {
  const v = (kubernetesVersion: string | undefined): typeof base =>
    kubernetesVersion === undefined ? { ...base } : { ...base, kubernetesVersion };
  /** The state after applying a cluster that runs `version`. */
  const running = (version: string | undefined): ReturnType<typeof appliedFrom> => {
    const state = afterApply(plan([v(version)]));
    const c = state.clusters.get('east');
    if (c && version !== undefined) c.kubernetesVersion = version;
    return state;
  };
  const codes = (p: Plan): string[] => p.problems.map((x) => `${x.code} ${x.pointer ?? ''}`);

  it('a new cluster gets the version in its inventory, and records it as desired', () => {
    const p = plan([v('v1.27.10')]);
    assert.deepEqual(kinds(p), [
      'provision-cluster:master-1,worker-1',
      'install-packages:master-1,worker-1',
    ]);
    assert.match(p.clusters[0]?.hostsIni ?? '', /\n\[all:vars\]\nkube_version=v1\.27\.10\n$/);
    assert.equal(p.clusters[0]?.desired.kubernetesVersion, 'v1.27.10');
    assert.doesNotMatch(plan().clusters[0]?.hostsIni ?? '', /kube_version/);
  });

  it('the next minor or patch release: upgrade-cluster of every node, nothing else', () => {
    for (const next of ['v1.27.11', 'v1.28.0']) {
      const p = plan([v(next)], running('v1.27.10'));
      assert.deepEqual(kinds(p), ['upgrade-cluster:master-1,worker-1'], next);
      assert.equal(p.clusters[0]?.actions[0]?.reason, `Kubernetes v1.27.10 → ${next}`);
      assert.match(p.clusters[0]?.hostsIni ?? '', new RegExp(`kube_version=${next}\n`));
      assert.deepEqual(p.problems, []);
    }
    assert.deepEqual(kinds(plan([v('v1.27.10')], running('v1.27.10'))), []);
  });

  it("a version set on a cluster that runs the installer's default is an upgrade to it", () => {
    const p = plan([v('v1.27.10')], running(undefined));
    assert.deepEqual(kinds(p), ['upgrade-cluster:master-1,worker-1']);
    assert.match(p.clusters[0]?.actions[0]?.reason ?? '', /the installer's default → v1\.27\.10/);
  });

  it('a downgrade or a skipped minor version is refused, and the inventory keeps the running version', () => {
    for (const [want, code] of [
      ['v1.27.9', 'KUBERNETES_DOWNGRADE'],
      ['v1.26.15', 'KUBERNETES_DOWNGRADE'],
      ['v1.29.0', 'KUBERNETES_UPGRADE_SKIPS_MINOR'],
      ['v2.27.10', 'KUBERNETES_UPGRADE_SKIPS_MINOR'],
    ] as const) {
      const p = plan([v(want)], running('v1.27.10'));
      assert.deepEqual(codes(p), [`${code} /spec/kubernetesVersion`], want);
      assert.equal(p.problems[0]?.file, 'east/provisioning.yaml');
      assert.deepEqual(kinds(p), [], want);
      assert.match(p.clusters[0]?.hostsIni ?? '', /kube_version=v1\.27\.10\n/, want);
    }
  });

  it('with node changes in the same plan, nodes join at the running version and the upgrade waits', () => {
    const more = { ...v('v1.28.2'), nodes: [...base.nodes, node('worker-2', ['worker'])] };
    const p = plan([more], running('v1.27.10'));
    assert.deepEqual(kinds(p), ['add-nodes:worker-2', 'install-packages:worker-2']);
    assert.match(p.clusters[0]?.hostsIni ?? '', /kube_version=v1\.27\.10\n/);
    assert.match(
      p.clusters[0]?.notes.join('\n') ?? '',
      /upgrade of Kubernetes v1\.27\.10 → v1\.28\.2 waits/,
    );
    // Once the node is applied, the upgrade comes, for all three nodes.
    const after = running('v1.27.10');
    const c = after.clusters.get('east')!;
    const added = p.clusters[0]!.nodes.find((n) => n.name === 'worker-2')!;
    c.nodes.push({
      name: 'worker-2',
      roles: ['worker'],
      host: added.host,
      mac: added.mac,
      ip: added.ip,
    });
    assert.deepEqual(kinds(plan([more], after)), ['upgrade-cluster:master-1,worker-1,worker-2']);
  });

  it('a version removed from the site: the cluster keeps its version, with a note', () => {
    const p = plan([v(undefined)], running('v1.27.10'));
    assert.deepEqual(kinds(p), []);
    assert.match(p.clusters[0]?.hostsIni ?? '', /kube_version=v1\.27\.10\n/);
    assert.match(
      p.clusters[0]?.notes.join('\n') ?? '',
      /no longer set: the cluster stays on v1\.27\.10/,
    );
  });

  it('the version is part of the plan hash', () => {
    assert.notEqual(plan([v('v1.27.10')]).hash, plan([v('v1.27.11')]).hash);
  });
});

describe('plan: plugins without an add-on command', () => {
  const settings = (addon: string): ExecutionSettings => ({
    installer: {
      mode: 'local',
      commands: { provision: 'p', scale: 's', addon, remove: 'r', reset: 'x', upgrade: 'u' },
    },
    ssh: { user: 'root', port: 22 },
  });

  it('are refused, located at KUDPlugins, when the flavour has no add-on command', () => {
    const p = plan([base], emptyState(), { flavour: 'kubespray', settings: settings('') });
    assert.deepEqual(
      p.problems.map((x) => [x.code, x.file, x.pointer]),
      [['PLUGINS_UNSUPPORTED', 'east/provisioning.yaml', '/spec/KUDPlugins']],
    );
    assert.match(p.problems[0]?.message ?? '', /emco cannot be installed: the kubespray flavour/);
  });

  it('are accepted with an add-on command, and a cluster without plugins needs none', () => {
    assert.deepEqual(
      plan([base], emptyState(), { flavour: 'kubespray', settings: settings('addon {plugins}') })
        .problems,
      [],
    );
    const none = { ...base, plugins: [] };
    assert.deepEqual(
      plan([none], emptyState(), { flavour: 'kubespray', settings: settings('') }).problems,
      [],
    );
  });

  it('the inventory logs in as the settings say', () => {
    const p = plan([base], emptyState(), {
      flavour: 'kubespray',
      settings: { ...settings('a'), ssh: { user: 'debian', port: 2222 } },
    });
    assert.match(
      p.clusters[0]?.hostsIni ?? '',
      /master-1 ansible_host=198\.18\.0\.10 ansible_port=2222 ansible_user=debian ip=198\.18\.0\.10 access_ip=198\.18\.0\.10\n/,
    );
  });
});

describe('plan with node facts', () => {
  const applyFirst = (): ReturnType<typeof appliedFrom> => {
    const p = plan();
    return appliedFrom(
      p.clusters.map((c) =>
        applied(
          c.cluster,
          c.nodes.map((n) => ({
            name: n.name,
            roles: n.roles,
            host: n.host,
            mac: n.mac,
            ip: n.ip,
          })),
          { plugins: ['emco'] },
          { master: base.masterSoftware, worker: base.workerSoftware },
        ),
      ),
    );
  };
  const facts = (
    entries: Record<
      string,
      { reachable?: boolean; installed?: Record<string, string | null>; held?: string[] }
    >,
  ) =>
    new Map(
      Object.entries(entries).map(([k, v]) => [
        k,
        {
          reachable: v.reachable ?? true,
          installed: v.installed ?? {},
          ...(v.held ? { held: v.held } : {}),
          error:
            v.reachable === false
              ? { code: 'SSH_UNREACHABLE', message: 'connection refused' }
              : undefined,
        },
      ]),
    );

  it('a package removed by hand is drift, repaired with fix-drift', () => {
    const p = plan([base], applyFirst(), {
      facts: facts({
        'east/master-1': { installed: { htop: '3.2.2-2', jq: null } },
        'east/worker-1': { installed: { curl: '7.88.1-10' } },
      }),
    });
    assert.deepEqual(kinds(p), ['fix-drift:master-1']);
    assert.deepEqual(p.clusters[0]?.actions[0]?.packages, [
      { node: 'master-1', name: 'jq', from: undefined, to: '1.6-2' },
    ]);
    assert.match(
      p.clusters[0]?.actions[0]?.reason ?? '',
      /master-1 has jq not installed, wanted 1\.6-2/,
    );
  });

  it('a pinned package changed by hand is drift; matching facts are no change', () => {
    const changed = plan([base], applyFirst(), {
      facts: facts({ 'east/master-1': { installed: { htop: '3.2.2-2', jq: '1.7-1' } } }),
    });
    assert.deepEqual(changed.clusters[0]?.actions[0]?.packages, [
      { node: 'master-1', name: 'jq', from: '1.7-1', to: '1.6-2' },
    ]);
    const same = plan([base], applyFirst(), {
      facts: facts({
        'east/master-1': { installed: { htop: '3.2.2-2', jq: '1.6-2' } },
        'east/worker-1': { installed: { curl: '7.88.1-10' } },
      }),
    });
    assert.deepEqual(kinds(same), []);
  });

  it('a pinned package whose hold was removed by hand is drift; an unpinned one needs no hold', () => {
    const unheld = plan([base], applyFirst(), {
      facts: facts({
        'east/master-1': { installed: { htop: '3.2.2-2', jq: '1.6-2' }, held: [] },
        'east/worker-1': { installed: { curl: '7.88.1-10' }, held: [] },
      }),
    });
    assert.deepEqual(kinds(unheld), ['fix-drift:master-1']);
    assert.deepEqual(unheld.clusters[0]?.actions[0]?.packages, [
      { node: 'master-1', name: 'jq', from: '1.6-2', to: '1.6-2', unheld: true },
    ]);
    assert.match(
      unheld.clusters[0]?.actions[0]?.reason ?? '',
      /master-1 has jq 1\.6-2 no longer on hold/,
    );
    const held = plan([base], applyFirst(), {
      facts: facts({
        'east/master-1': { installed: { htop: '3.2.2-2', jq: '1.6-2' }, held: ['jq'] },
        'east/worker-1': { installed: { curl: '7.88.1-10' }, held: [] },
      }),
    });
    assert.deepEqual(kinds(held), []);
  });

  it('upgrades show the version the node reports as before', () => {
    const bumped = {
      ...base,
      masterSoftware: [{ name: 'htop' }, { name: 'jq', version: '1.7-1' }],
    };
    const p = plan([bumped], applyFirst(), {
      facts: facts({ 'east/master-1': { installed: { htop: '3.2.2-2', jq: '1.6-2' } } }),
    });
    assert.deepEqual(p.clusters[0]?.actions[0]?.packages, [
      { node: 'master-1', name: 'jq', from: '1.6-2', to: '1.7-1' },
    ]);
  });

  it('an unreachable node is noted and its packages are not judged', () => {
    const p = plan([base], applyFirst(), {
      facts: facts({ 'east/worker-1': { reachable: false } }),
    });
    assert.deepEqual(kinds(p), []);
    assert.match(
      p.clusters[0]?.notes.join('\n') ?? '',
      /worker-1 is unreachable, its packages were not checked: connection refused/,
    );
  });
});

import { BASE_SITE, edit } from './site-fixture.js';

/**
 * The invalid-input corpus: each case is a small site and the errors it must produce, exactly
 * (code, file, line). Warnings are only checked where a case lists them.
 */
export interface Expected {
  code: string;
  file: string;
  line: number;
  severity?: 'error' | 'warning';
}

export interface Case {
  name: string;
  files: Record<string, string | Buffer>;
  expect: Expected[];
  /** Build hostile files at run time (large files, symlinks). */
  setup?: (dir: string) => Promise<void>;
}

const P = 'provisioning.yaml';
const S = 'software.yaml';
const C = 'cluster.yaml';

const bmh = (name: string, mac: string, extra = ''): string => `apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: ${name}
  namespace: metal3
spec:
  online: true
  bootMACAddress: "${mac}"
${extra}`;

export const INVALID_CASES: Case[] = [
  // --- YAML syntax and structure
  {
    name: 'bad indentation',
    files: { ...BASE_SITE, [P]: BASE_SITE[P]!.replace('  workers:', '   workers:') },
    expect: [{ code: 'YAML_SYNTAX', file: P, line: 14 }],
  },
  {
    name: 'tab indentation',
    files: { ...BASE_SITE, 'extra.yaml': 'apiVersion: v1\nkind:\n\t- x\n' },
    expect: [{ code: 'YAML_SYNTAX', file: 'extra.yaml', line: 3 }],
  },
  {
    name: 'unclosed flow sequence',
    files: edit(P, '    - emco', '    - [emco'),
    expect: [{ code: 'YAML_SYNTAX', file: P, line: 20 }],
  },
  {
    name: 'unterminated quote',
    files: edit(C, 'provisioningCR: provisioning-a', 'provisioningCR: "provisioning-a'),
    expect: [{ code: 'YAML_SYNTAX', file: C, line: 10 }],
  },
  {
    name: 'duplicate key',
    files: edit(P, '        cpu: 10\n', '        cpu: 10\n        cpu: 12\n'),
    expect: [{ code: 'YAML_DUPLICATE_KEY', file: P, line: 13 }],
  },
  {
    name: 'duplicate top-level key',
    files: edit(C, 'kind: Cluster\n', 'kind: Cluster\nkind: Cluster\n'),
    expect: [{ code: 'YAML_DUPLICATE_KEY', file: C, line: 3 }],
  },
  {
    name: 'document is a list',
    files: { ...BASE_SITE, 'list.yaml': '- a\n- b\n' },
    expect: [{ code: 'NOT_A_MAPPING', file: 'list.yaml', line: 1 }],
  },
  {
    name: 'document is a scalar',
    files: { ...BASE_SITE, 'scalar.yaml': '---\njust text\n' },
    expect: [{ code: 'NOT_A_MAPPING', file: 'scalar.yaml', line: 2 }],
  },
  {
    name: 'second document broken in multi-doc file',
    files: {
      ...BASE_SITE,
      'multi.yaml': `${BASE_SITE[S]!.replace('software-a', 'software-b').replace('cluster: cluster-a', 'cluster: cluster-z')}---\napiVersion: bpa.akraino.org/v1alpha1\nkind: Software\nmetadata:\n  name: software-c\n  labels:\n    cluster: cluster-a\nspec:\n  workerSoftware: [curl\n`,
    },
    expect: [{ code: 'YAML_SYNTAX', file: 'multi.yaml', line: 23 }],
  },

  {
    name: 'a byte order mark inside a file (two files joined with cat)',
    files: {
      ...BASE_SITE,
      'hosts.yaml': `${bmh('node-1', '52:54:00:00:00:01')}---\n\ufeff${bmh('node-2', '52:54:00:00:00:02')}`,
    },
    expect: [{ code: 'BYTE_ORDER_MARK', file: 'hosts.yaml', line: 10 }],
  },

  // Files js-yaml 4 would read without complaint but YAML forbids: each is refused at the
  // line a YAML 1.2 reader gives (src/load/yaml-checks.ts; a warning counts as an error).
  {
    name: 'flow collection closed below its key (deficient indentation)',
    files: {
      ...BASE_SITE,
      'flow.yaml': 'apiVersion: v1\nkind: X\nmetadata:\n  name: [\n    a,\n    b\n]\n',
    },
    expect: [{ code: 'YAML_SYNTAX', file: 'flow.yaml', line: 7 }],
  },
  {
    name: 'a list as a mapping key',
    files: { ...BASE_SITE, 'key.yaml': 'apiVersion: v1\n[a, b]: c\n' },
    expect: [{ code: 'YAML_SYNTAX', file: 'key.yaml', line: 1 }],
  },
  {
    name: 'a mapping on a document marker line',
    files: { ...BASE_SITE, 'marker.yaml': 'apiVersion: v1\n---\n--- a: 1\n' },
    expect: [{ code: 'YAML_SYNTAX', file: 'marker.yaml', line: 3 }],
  },
  {
    name: 'a merge key given a list of lists',
    files: { ...BASE_SITE, 'merge.yaml': 'a: {<<: [[1, 2]]}\n' },
    expect: [{ code: 'YAML_SYNTAX', file: 'merge.yaml', line: 1 }],
  },

  // --- Kinds and fields
  {
    name: 'missing kind',
    files: {
      ...BASE_SITE,
      'x.yaml': 'apiVersion: bpa.akraino.org/v1alpha1\nmetadata: {name: x}\n',
    },
    expect: [{ code: 'MISSING_FIELD', file: 'x.yaml', line: 1 }],
  },
  {
    name: 'missing apiVersion',
    files: { ...BASE_SITE, 'x.yaml': 'kind: Cluster\nmetadata: {name: x}\n' },
    expect: [{ code: 'MISSING_FIELD', file: 'x.yaml', line: 1 }],
  },
  {
    name: 'unknown kind',
    files: {
      ...BASE_SITE,
      'x.yaml': 'apiVersion: bpa.akraino.org/v1alpha1\nkind: Clusterr\nmetadata: {name: x}\n',
    },
    expect: [{ code: 'UNKNOWN_KIND', file: 'x.yaml', line: 2 }],
  },
  {
    name: 'wrong apiVersion for kind',
    files: edit(C, 'apiVersion: bpa.akraino.org/v1alpha1', 'apiVersion: bpa.akraino.org/v1'),
    expect: [{ code: 'UNKNOWN_KIND', file: C, line: 1 }],
  },
  {
    name: 'missing metadata.name',
    files: edit(S, '  name: software-a\n', ''),
    expect: [{ code: 'MISSING_FIELD', file: S, line: 3 }],
  },
  {
    name: 'invalid metadata.name',
    files: edit(S, 'name: software-a', 'name: Software_A'),
    expect: [{ code: 'INVALID_NAME', file: S, line: 4 }],
  },
  {
    name: 'missing provisioningCR',
    files: edit(C, '  provisioningCR: provisioning-a\n', ''),
    expect: [{ code: 'MISSING_FIELD', file: C, line: 8 }],
  },
  {
    name: 'typo in spec field',
    files: edit(P, '  KUDPlugins:', '  KudPlugins:'),
    expect: [{ code: 'UNKNOWN_FIELD', file: P, line: 18 }],
  },
  {
    name: 'typo in node field',
    files: edit(P, '        cpu: 20', '        cpus: 20'),
    expect: [{ code: 'UNKNOWN_FIELD', file: P, line: 16 }],
  },
  {
    name: 'typo in cluster spec',
    files: edit(C, 'softwareCR:', 'softwareCr:'),
    expect: [{ code: 'UNKNOWN_FIELD', file: C, line: 10 }],
  },
  {
    name: 'typo in software spec',
    files: edit(S, 'workerSoftware:', 'workersoftware:'),
    expect: [{ code: 'UNKNOWN_FIELD', file: S, line: 12 }],
  },
  {
    name: 'masters is a mapping',
    files: edit(
      P,
      '  masters:\n    - master-1:\n        mac-address: "00:c5:16:05:61:b2"\n        cpu: 10\n        memory: 4Gi\n',
      '  masters:\n    master-1: {}\n',
    ),
    expect: [{ code: 'WRONG_TYPE', file: P, line: 9 }],
  },
  {
    name: 'KUDPlugins is a string',
    files: edit(P, '  KUDPlugins:\n    - emco', '  KUDPlugins: emco'),
    expect: [{ code: 'WRONG_TYPE', file: P, line: 18 }],
  },
  {
    name: 'sriov is a string',
    files: edit(P, '        cpu: 20', '        cpu: 20\n        sriov: "yes"'),
    expect: [{ code: 'WRONG_TYPE', file: P, line: 17 }],
  },
  {
    name: 'node entry with two names',
    files: edit(P, '    - worker-1:\n', '    - worker-1:\n      worker-2:\n'),
    expect: [{ code: 'INVALID_NODE_ENTRY', file: P, line: 15 }],
  },
  {
    name: 'node entry is a string',
    files: edit(P, '    - worker-1:\n        cpu: 20\n        memory: 8Gi\n', '    - worker-1\n'),
    expect: [{ code: 'INVALID_NODE_ENTRY', file: P, line: 15 }],
  },
  {
    name: 'node entry empty map',
    files: edit(P, '    - worker-1:\n        cpu: 20\n        memory: 8Gi\n', '    - {}\n'),
    expect: [{ code: 'INVALID_NODE_ENTRY', file: P, line: 15 }],
  },
  {
    name: 'node name with underscore',
    files: edit(P, 'worker-1:', 'worker_1:'),
    expect: [{ code: 'INVALID_NODE_NAME', file: P, line: 15 }],
  },
  {
    name: 'node name uppercase',
    files: edit(P, 'worker-1:', 'Worker-1:'),
    expect: [{ code: 'INVALID_NODE_NAME', file: P, line: 15 }],
  },
  {
    name: 'node name too long',
    files: edit(P, 'worker-1:', `w${'x'.repeat(63)}:`),
    expect: [{ code: 'INVALID_NODE_NAME', file: P, line: 15 }],
  },
  {
    name: 'node name is an inventory group',
    files: edit(P, 'worker-1:', 'etcd:'),
    expect: [{ code: 'RESERVED_NODE_NAME', file: P, line: 15 }],
  },
  {
    name: 'node name is localhost',
    files: edit(P, 'master-1:', 'localhost:'),
    expect: [{ code: 'RESERVED_NODE_NAME', file: P, line: 10 }],
  },
  {
    name: 'node name with shell syntax',
    files: edit(P, 'worker-1:', '"w;reboot":'),
    expect: [{ code: 'INVALID_NODE_NAME', file: P, line: 15 }],
  },

  // --- Values
  {
    name: 'memory 8GB',
    files: edit(P, 'memory: 8Gi', 'memory: 8GB'),
    expect: [{ code: 'INVALID_QUANTITY', file: P, line: 17 }],
  },
  {
    name: 'memory with a space',
    files: edit(P, 'memory: 8Gi', 'memory: 4 Gi'),
    expect: [{ code: 'INVALID_QUANTITY', file: P, line: 17 }],
  },
  {
    name: 'memory negative',
    files: edit(P, 'memory: 8Gi', 'memory: -8Gi'),
    expect: [{ code: 'INVALID_QUANTITY', file: P, line: 17 }],
  },
  {
    name: 'memory lowercase gi',
    files: edit(P, 'memory: 4Gi', 'memory: 4gi'),
    expect: [{ code: 'INVALID_QUANTITY', file: P, line: 13 }],
  },
  {
    name: 'cpu zero',
    files: edit(P, 'cpu: 20', 'cpu: 0'),
    expect: [{ code: 'INVALID_CPU', file: P, line: 16 }],
  },
  {
    name: 'cpu fractional',
    files: edit(P, 'cpu: 20', 'cpu: 2.5'),
    expect: [{ code: 'INVALID_CPU', file: P, line: 16 }],
  },
  {
    name: 'cpu as string',
    files: edit(P, 'cpu: 20', 'cpu: "20"'),
    expect: [{ code: 'INVALID_CPU', file: P, line: 16 }],
  },
  {
    name: 'cpu negative',
    files: edit(P, 'cpu: 10', 'cpu: -4'),
    expect: [{ code: 'INVALID_CPU', file: P, line: 12 }],
  },
  {
    name: 'mac too short',
    files: edit(P, '00:c5:16:05:61:b2', '00:c5:16:05:61'),
    expect: [{ code: 'INVALID_MAC', file: P, line: 11 }],
  },
  {
    name: 'mac with non-hex',
    files: edit(P, '00:c5:16:05:61:b2', '00:c5:16:05:61:zz'),
    expect: [{ code: 'INVALID_MAC', file: P, line: 11 }],
  },
  {
    name: 'mac with mixed separators',
    files: edit(P, '00:c5:16:05:61:b2', '00:c5-16:05:61:b2'),
    expect: [{ code: 'INVALID_MAC', file: P, line: 11 }],
  },
  {
    name: 'mac with shell syntax',
    files: edit(P, '"00:c5:16:05:61:b2"', '"$(reboot)"'),
    expect: [{ code: 'INVALID_MAC', file: P, line: 11 }],
  },
  {
    name: 'mac multicast (IPv4 multicast)',
    files: edit(P, '00:c5:16:05:61:b2', '01:00:5e:00:00:01'),
    expect: [{ code: 'UNUSABLE_MAC', file: P, line: 11 }],
  },
  {
    name: 'mac multicast (low bit of the first octet, dash-separated, upper case)',
    files: edit(P, '00:c5:16:05:61:b2', '03-C5-16-05-61-B2'),
    expect: [{ code: 'UNUSABLE_MAC', file: P, line: 11 }],
  },
  {
    name: 'mac broadcast',
    files: edit(P, '00:c5:16:05:61:b2', 'ff:ff:ff:ff:ff:ff'),
    expect: [{ code: 'UNUSABLE_MAC', file: P, line: 11 }],
  },
  {
    name: 'mac all zero',
    files: edit(P, '00:c5:16:05:61:b2', '00:00:00:00:00:00'),
    expect: [{ code: 'UNUSABLE_MAC', file: P, line: 11 }],
  },
  {
    name: 'plugin uppercase',
    files: edit(P, '    - emco', '    - Emco'),
    expect: [{ code: 'INVALID_PLUGIN_NAME', file: P, line: 19 }],
  },
  {
    name: 'plugin with shell syntax',
    files: edit(P, '    - emco', '    - "emco; rm -rf /"'),
    expect: [{ code: 'INVALID_PLUGIN_NAME', file: P, line: 19 }],
  },
  {
    name: 'PodSubnet prefix 33',
    files: edit(P, '10.244.64.0/18', '10.244.64.0/33'),
    expect: [{ code: 'INVALID_CIDR', file: P, line: 20 }],
  },
  {
    name: 'PodSubnet without prefix',
    files: edit(P, '10.244.64.0/18', '10.244.64.0'),
    expect: [{ code: 'INVALID_CIDR', file: P, line: 20 }],
  },
  {
    name: 'PodSubnet octet 300',
    files: edit(P, '10.244.64.0/18', '10.300.64.0/18'),
    expect: [{ code: 'INVALID_CIDR', file: P, line: 20 }],
  },
  {
    name: 'kubernetesVersion without its v',
    files: edit(
      P,
      'PodSubnet: 10.244.64.0/18',
      'PodSubnet: 10.244.64.0/18\n  kubernetesVersion: 1.27.10',
    ),
    expect: [{ code: 'INVALID_KUBERNETES_VERSION', file: P, line: 21 }],
  },
  {
    name: 'kubernetesVersion with a variable after it',
    files: edit(
      P,
      'PodSubnet: 10.244.64.0/18',
      'PodSubnet: 10.244.64.0/18\n  kubernetesVersion: "v1.27.10 ansible_user=x"',
    ),
    expect: [{ code: 'INVALID_KUBERNETES_VERSION', file: P, line: 21 }],
  },
  {
    name: 'package uppercase',
    files: edit(S, '- htop', '- HTop'),
    expect: [{ code: 'INVALID_PACKAGE_NAME', file: S, line: 9 }],
  },
  {
    name: 'package with shell syntax',
    files: edit(S, '- curl', '- "curl; rm -rf /"'),
    expect: [{ code: 'INVALID_PACKAGE_NAME', file: S, line: 13 }],
  },
  {
    name: 'package one character',
    files: edit(S, '- curl', '- c'),
    expect: [{ code: 'INVALID_PACKAGE_NAME', file: S, line: 13 }],
  },
  {
    name: 'package with dollar',
    files: edit(S, '- htop', '- "$(id)"'),
    expect: [{ code: 'INVALID_PACKAGE_NAME', file: S, line: 9 }],
  },
  {
    name: 'pinned package with bad name',
    files: edit(S, '- jq:', '- j_q:'),
    expect: [{ code: 'INVALID_PACKAGE_NAME', file: S, line: 10 }],
  },
  {
    name: 'version with semicolon',
    files: edit(S, 'version: 1.5+dfsg-1ubuntu0.1', 'version: "1.5;reboot"'),
    expect: [{ code: 'INVALID_PACKAGE_VERSION', file: S, line: 11 }],
  },
  {
    name: 'version with space',
    files: edit(S, 'version: 1.5+dfsg-1ubuntu0.1', 'version: "1.5 2"'),
    expect: [{ code: 'INVALID_PACKAGE_VERSION', file: S, line: 11 }],
  },
  {
    name: 'version with backtick',
    files: edit(S, 'version: 1.5+dfsg-1ubuntu0.1', 'version: "1.5`id`"'),
    expect: [{ code: 'INVALID_PACKAGE_VERSION', file: S, line: 11 }],
  },
  {
    name: 'version unknown field',
    files: edit(S, 'version: 1.5+dfsg-1ubuntu0.1', 'verison: 1.5'),
    expect: [
      { code: 'MISSING_FIELD', file: S, line: 10 },
      { code: 'UNKNOWN_FIELD', file: S, line: 11 },
    ],
  },
  {
    name: 'software item with two packages',
    files: edit(S, '    - jq:\n', '    - jq:\n      yq:\n'),
    expect: [{ code: 'INVALID_PACKAGE_ENTRY', file: S, line: 10 }],
  },
  {
    name: 'software item is a number',
    files: edit(S, '- curl', '- 42'),
    expect: [{ code: 'INVALID_PACKAGE_ENTRY', file: S, line: 13 }],
  },

  // --- Cross-document rules
  {
    name: 'duplicate Provisioning name',
    files: { ...BASE_SITE, 'p2.yaml': BASE_SITE[P]! },
    expect: [{ code: 'DUPLICATE_NAME', file: 'provisioning.yaml', line: 4 }],
  },
  {
    name: 'unresolved provisioningCR',
    files: edit(C, 'provisioningCR: provisioning-a', 'provisioningCR: provisioning-b'),
    expect: [{ code: 'UNRESOLVED_REFERENCE', file: C, line: 9 }],
  },
  {
    name: 'unresolved softwareCR',
    files: edit(C, 'softwareCR: software-a', 'softwareCR: software-b'),
    expect: [{ code: 'UNRESOLVED_REFERENCE', file: C, line: 10 }],
  },
  {
    name: 'cluster label mismatch',
    files: edit(P, 'cluster: cluster-a', 'cluster: cluster-b'),
    expect: [{ code: 'CLUSTER_LABEL_MISMATCH', file: P, line: 6 }],
  },
  {
    name: 'two Provisionings for one cluster',
    files: {
      ...BASE_SITE,
      'p2.yaml': BASE_SITE[P]!.replace('name: provisioning-a', 'name: provisioning-b').replace(
        '00:c5:16:05:61:b2',
        '00:c5:16:05:61:b3',
      ),
    },
    expect: [{ code: 'DUPLICATE_PROVISIONING', file: 'p2.yaml', line: 4 }],
  },
  {
    name: 'one Provisioning used by two Clusters',
    files: {
      ...BASE_SITE,
      'c2.yaml': BASE_SITE[C]!.replace(/cluster-a/g, 'cluster-b').replace(
        'softwareCR: software-a\n',
        '',
      ),
    },
    expect: [
      { code: 'DUPLICATE_PROVISIONING', file: C, line: 9 },
      { code: 'CLUSTER_LABEL_MISMATCH', file: P, line: 6 },
    ],
  },
  {
    name: 'two Software for one cluster',
    files: {
      ...BASE_SITE,
      's2.yaml': BASE_SITE[S]!.replace('name: software-a', 'name: software-b'),
    },
    expect: [{ code: 'DUPLICATE_SOFTWARE', file: 's2.yaml', line: 4 }],
  },
  {
    name: 'same node twice in workers',
    files: edit(P, '  KUDPlugins:', '    - worker-1: {}\n  KUDPlugins:'),
    expect: [{ code: 'DUPLICATE_NODE', file: P, line: 18 }],
  },
  {
    name: 'dual-role node with different MACs',
    files: edit(
      P,
      '  KUDPlugins:',
      '    - master-1:\n        mac-address: "00:c5:16:05:61:b3"\n  KUDPlugins:',
    ),
    expect: [{ code: 'DUAL_ROLE_MISMATCH', file: P, line: 18 }],
  },
  {
    name: 'dual-role node with different cpu',
    files: edit(P, '  KUDPlugins:', '    - master-1:\n        cpu: 12\n  KUDPlugins:'),
    expect: [{ code: 'DUAL_ROLE_MISMATCH', file: P, line: 18 }],
  },
  {
    name: 'one MAC on two nodes',
    files: edit(
      P,
      '        cpu: 20\n',
      '        mac-address: "00:C5:16:05:61:B2"\n        cpu: 20\n',
    ),
    expect: [{ code: 'DUPLICATE_MAC', file: P, line: 16 }],
  },
  {
    name: 'one MAC in two clusters',
    files: {
      ...BASE_SITE,
      'p2.yaml': BASE_SITE[P]!.replace(/provisioning-a/g, 'provisioning-b').replace(
        'cluster: cluster-a',
        'cluster: cluster-b',
      ),
    },
    expect: [{ code: 'DUPLICATE_MAC', file: 'p2.yaml', line: 11 }],
  },
  {
    name: 'two BareMetalHosts with one MAC',
    files: {
      ...BASE_SITE,
      'hosts.yaml': `${bmh('node-1', '52:54:00:00:00:01')}---\n${bmh('node-2', '52:54:00:00:00:01')}`,
    },
    expect: [{ code: 'DUPLICATE_HOST_MAC', file: 'hosts.yaml', line: 17 }],
  },
  {
    name: 'BareMetalHost NIC MAC equals another boot MAC',
    files: {
      ...BASE_SITE,
      'hosts.yaml': `${bmh('node-1', '52:54:00:00:00:01')}---\n${bmh('node-2', '52:54:00:00:00:02', 'status:\n  hardware:\n    nics:\n      - name: eth1\n        mac: "52:54:00:00:00:01"\n')}`,
    },
    expect: [{ code: 'DUPLICATE_HOST_MAC', file: 'hosts.yaml', line: 22 }],
  },
  {
    name: 'no master',
    files: edit(
      P,
      '  masters:\n    - master-1:\n        mac-address: "00:c5:16:05:61:b2"\n        cpu: 10\n        memory: 4Gi\n',
      '',
    ),
    expect: [{ code: 'NO_MASTER', file: P, line: 8 }],
  },
  {
    name: 'empty masters list',
    files: edit(
      P,
      '  masters:\n    - master-1:\n        mac-address: "00:c5:16:05:61:b2"\n        cpu: 10\n        memory: 4Gi\n',
      '  masters: []\n',
    ),
    expect: [{ code: 'NO_MASTER', file: P, line: 9 }],
  },
  {
    name: 'two Site documents',
    files: {
      ...BASE_SITE,
      'site.yaml':
        'apiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata: {name: one}\nspec: {}\n---\napiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata: {name: two}\nspec: {}\n',
    },
    expect: [{ code: 'MULTIPLE_SITES', file: 'site.yaml', line: 6 }],
  },
  {
    name: 'a maintenance window in a time zone that does not exist',
    files: {
      ...BASE_SITE,
      'site.yaml':
        "apiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata: {name: one}\nspec:\n  maintenanceWindows:\n    - days: [sat]\n      start: '01:00'\n      end: '05:00'\n      timezone: Mars/Olympus\n",
    },
    expect: [{ code: 'INVALID_TIMEZONE', file: 'site.yaml', line: 9 }],
  },
  {
    name: 'a Cluster window in a misspelt zone',
    files: edit(
      C,
      'provisioningCR: provisioning-a',
      "provisioningCR: provisioning-a\n  maintenanceWindows: [{start: '22:00', end: '04:00', timezone: Europe/Berln}]",
    ),
    expect: [{ code: 'INVALID_TIMEZONE', file: C, line: 10 }],
  },
  {
    name: 'a rollout wave naming a cluster the site does not have',
    files: {
      ...BASE_SITE,
      'site.yaml':
        'apiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata: {name: one}\nspec:\n  rollout:\n    waves:\n      - [cluster-a]\n      - [clster-b]\n',
    },
    expect: [{ code: 'WAVE_UNKNOWN_CLUSTER', file: 'site.yaml', line: 8, severity: 'warning' }],
  },
  {
    name: 'duplicate package in a role',
    files: edit(S, '    - curl\n', '    - curl\n    - curl\n'),
    expect: [{ code: 'DUPLICATE_PACKAGE', file: S, line: 14 }],
  },
  {
    name: 'Site with unknown field',
    files: {
      ...BASE_SITE,
      'site.yaml':
        'apiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata: {name: one}\nspec:\n  pruen: true\n',
    },
    expect: [{ code: 'UNKNOWN_FIELD', file: 'site.yaml', line: 5 }],
  },
  {
    name: 'several errors in one round',
    files: {
      ...BASE_SITE,
      [P]: BASE_SITE[P]!.replace('memory: 8Gi', 'memory: 8GB').replace('cpu: 10', 'cpu: 0'),
      [S]: BASE_SITE[S]!.replace('- curl', '- "curl;id"'),
    },
    expect: [
      { code: 'INVALID_CPU', file: P, line: 12 },
      { code: 'INVALID_QUANTITY', file: P, line: 17 },
      { code: 'INVALID_PACKAGE_NAME', file: S, line: 13 },
    ],
  },
];

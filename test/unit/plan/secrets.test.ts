import assert from 'node:assert/strict';
import { executionSettings, type RegistryMirror } from '../../../src/config/execution.js';
import { OPTIONS, resolveConfig, type OptionName } from '../../../src/config/options.js';
import { parse } from 'yaml';
import { planReconfigure } from '../../../src/plan/installer-vars.js';
import { appliedFromReports } from '../../../src/reconcile/rebuild.js';
import { buildReports } from '../../../src/report/status.js';
import { planRegistry } from '../../../src/plan/registry.js';
import { changedSecrets, secretRecords } from '../../../src/plan/secrets.js';
import { canonicalJson } from '../../../src/plan/hash.js';
import type { Action, PlannedNode } from '../../../src/plan/types.js';
import {
  containerdFiles,
  mirrorDigest,
  mirrorDrift,
} from '../../../src/runtime/registry-mirror.js';
import type { AppliedCluster } from '../../../src/state/applied.js';

const cfg = resolveConfig(
  Object.keys(OPTIONS) as OptionName[],
  { registryUrl: 'http://10.0.0.2:5000' },
  {},
  undefined,
);
const SITE = {
  ssh: { bootstrapCredentials: { secret: 'login' } },
  registryMirror: { credentials: { secret: 'reg' } },
  installer: { variables: { secret: 'vars' } },
};
const DIGESTS = [
  { name: 'login', digest: 'a'.repeat(64) },
  { name: 'reg', digest: 'b'.repeat(64) },
  { name: 'vars', digest: 'c'.repeat(64) },
  { name: 'unused', digest: 'd'.repeat(64) },
];

const node = (name: string): PlannedNode =>
  ({
    name,
    roles: ['master'],
    host: name,
    mac: '02:00:00:00:00:01',
    ip: '10.0.0.9',
    change: 'keep',
  }) as PlannedNode;
const applied = (over: Partial<AppliedCluster>): AppliedCluster => ({
  cluster: 'c',
  appliedAt: '2026-11-01T00:00:00Z',
  nodes: [],
  plugins: [],
  packages: { master: [], worker: [] },
  ...over,
});

describe('site Secrets in the plan: ciphertext digests, value HMACs, never values', () => {
  it('the settings (and so the plan hash) name the Secrets the Site uses by ciphertext digest', () => {
    const s = executionSettings(cfg, SITE, DIGESTS);
    assert.deepEqual(s.secrets, {
      login: 'a'.repeat(64),
      reg: 'b'.repeat(64),
      vars: 'c'.repeat(64),
    });
    assert.equal(s.installerVariables, 'vars');
    assert.deepEqual(s.registryMirror?.credentials, { secret: 'reg', digest: 'b'.repeat(64) });
    const other = executionSettings(
      cfg,
      SITE,
      DIGESTS.map((d) => (d.name === 'reg' ? { ...d, digest: 'e'.repeat(64) } : d)),
    );
    assert.notEqual(
      canonicalJson(other),
      canonicalJson(s),
      'a new ciphertext changes the hash input',
    );
  });

  it('hosts.toml carries the credentials only when written; plans and drift see them masked', () => {
    const mirror = executionSettings(cfg, SITE, DIGESTS).registryMirror as RegistryMirror;
    const auth = Buffer.from('u:secret-pw').toString('base64');
    const written = containerdFiles(mirror, auth);
    const path = Object.keys(written)[0] as string;
    assert.match(written[path] as string, new RegExp(`authorization = "Basic ${auth}"`));
    assert.doesNotMatch(containerdFiles(mirror)[path] as string, /secret-pw|c2VjcmV0/);
    assert.deepEqual(mirrorDrift(mirror, { [path]: written[path] as string }), []);
    const noHeader = containerdFiles({ ...mirror, credentials: undefined } as RegistryMirror)[
      path
    ] as string;
    assert.deepEqual(mirrorDrift(mirror, { [path]: noHeader }), [`${path} was changed`]);
  });

  it('a changed credential plans configure-registry; a new ciphertext of the same values does not', () => {
    const s = executionSettings(cfg, SITE, DIGESTS);
    const mirror = s.registryMirror as RegistryMirror;
    const recorded = applied({
      registryMirror: mirrorDigest(mirror),
      secrets: secretRecords(s, new Map([['reg', 'hmac-1']])),
    });
    const plan = (settings: typeof s, values?: Map<string, string>): Action[] => {
      const actions: Action[] = [];
      planRegistry('c', [node('m1')], recorded, settings, undefined, actions, [], values);
      return actions;
    };
    assert.deepEqual(plan(s), [], 'as applied');
    const rotated = executionSettings(
      cfg,
      SITE,
      DIGESTS.map((d) => (d.name === 'reg' ? { ...d, digest: 'e'.repeat(64) } : d)),
    );
    // Without the values (bpa plan without keys): the ciphertext decides.
    assert.equal(plan(rotated)[0]?.kind, 'configure-registry');
    // With them: the same HMAC, nothing to do; another HMAC, the nodes are configured again.
    assert.deepEqual(plan(rotated, new Map([['reg', 'hmac-1']])), []);
    assert.equal(plan(rotated, new Map([['reg', 'hmac-2']]))[0]?.kind, 'configure-registry');
    const state = { clusters: new Map([['c', recorded]]) };
    assert.deepEqual(changedSecrets(rotated, state, new Map([['reg', 'hmac-1']])), []);
    assert.deepEqual(changedSecrets(rotated, state, new Map([['reg', 'hmac-2']])), ['reg']);
    assert.deepEqual(changedSecrets(rotated, state, undefined), ['reg']);
  });

  it('changed installer variables plan reconfigure-cluster over the running nodes; a re-encryption does not', () => {
    const s = executionSettings(cfg, SITE, DIGESTS);
    const recorded = applied({
      plugins: ['emco'],
      installerVariables: 'vars',
      secrets: secretRecords(s, new Map([['vars', 'hmac-1']])),
    });
    const gone = { ...node('m2'), change: 'remove' } as PlannedNode;
    const plan = (
      settings: typeof s | undefined,
      values?: Map<string, string>,
      state: AppliedCluster | undefined = recorded,
      before: Action[] = [],
    ): { actions: Action[]; notes: string[] } => {
      const actions = [...before];
      const notes: string[] = [];
      planReconfigure('c', [node('m1'), node('w1'), gone], state, settings, actions, notes, values);
      return { actions: actions.slice(before.length), notes };
    };
    assert.deepEqual(plan(s).actions, [], 'as applied');
    const rotated = executionSettings(
      cfg,
      SITE,
      DIGESTS.map((d) => (d.name === 'vars' ? { ...d, digest: 'e'.repeat(64) } : d)),
    );
    assert.deepEqual(plan(rotated, new Map([['vars', 'hmac-1']])).actions, [], 'same values');
    const changed = plan(rotated, new Map([['vars', 'hmac-2']])).actions;
    assert.deepEqual(
      changed.map((a) => [a.kind, a.nodes, a.inputs, a.plugins]),
      [
        [
          'reconfigure-cluster',
          ['m1', 'w1'],
          ['Site spec.installer.variables (Secret vars)'],
          ['emco'],
        ],
      ],
    );
    assert.match(changed[0]?.reason ?? '', /^installer variables changed \(Secret vars\)/);
    // Without the values (bpa plan has no keys): the ciphertext decides.
    assert.equal(plan(rotated).actions[0]?.kind, 'reconfigure-cluster');
    // A running cluster that never ran with them gets them; a new one gets them when provisioned.
    assert.match(
      plan(s, undefined, applied({})).actions[0]?.reason ?? '',
      /were never applied to the running cluster/,
    );
    assert.deepEqual(plan(s, undefined, undefined).actions, []);
    const provision: Action = {
      kind: 'provision-cluster',
      cluster: 'c',
      nodes: ['m1'],
      reason: '',
      inputs: [],
    };
    assert.deepEqual(plan(rotated, undefined, recorded, [provision]).actions, []);
    // Removed from the Site: said, nothing run.
    const removed = plan(executionSettings(cfg, {}, DIGESTS));
    assert.deepEqual(removed.actions, []);
    assert.match(removed.notes[0] ?? '', /installer\.variables was removed from the Site/);
  });

  it('the report names the converged variables by ciphertext digest: a plan from it (offline, or a lost state directory) runs nothing', () => {
    const s = executionSettings(cfg, SITE, DIGESTS);
    const state = {
      clusters: new Map([
        [
          'c',
          applied({
            nodes: [
              {
                name: 'm1',
                roles: ['master'],
                host: 'm1',
                mac: '02:00:00:00:00:01',
                ip: '10.0.0.9',
              },
            ],
            installerVariables: 'vars',
            secrets: secretRecords(s, new Map([['vars', 'hmac-secret-1']])),
          }),
        ],
      ]),
    };
    const files = buildReports({
      applied: state,
      previous: new Map(),
      now: '2026-11-02T00:00:00Z',
    });
    const text = files.get('status/c.yaml') ?? '';
    assert.ok(!text.includes('hmac-secret-1'), 'no value HMAC in git');
    const rebuilt = appliedFromReports(
      new Map([['status/c.yaml', parse(text) as unknown]]),
      undefined,
    );
    assert.equal(rebuilt[0]?.installerVariables, 'vars');
    assert.deepEqual(rebuilt[0]?.secrets, { vars: { cipher: 'c'.repeat(64) } });
    const actions: Action[] = [];
    planReconfigure('c', [node('m1')], rebuilt[0], s, actions, [], undefined);
    assert.deepEqual(actions, []);
  });
});

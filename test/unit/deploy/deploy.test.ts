import { strict as assert } from 'node:assert';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CORE_SCHEMA, load } from 'js-yaml';
import { OPTIONS } from '../../../src/config/options.js';
import {
  DEPLOY_DIR,
  dig,
  filesUnder,
  isYaml,
  loadManifests,
  meta,
  only,
  type Obj,
} from './manifests.js';
import { secretLookalikes } from './secret-scan.js';

const NAMESPACE = 'bpa-system';
const manifests = loadManifests();

/**
 * Every permission bpa's service account gets: scope, API group, resource, verb. A change
 * here is a change of bpa's privileges, made on purpose (docs/deploy.md says why each exists).
 */
const RBAC_TABLE: ReadonlyArray<
  readonly [scope: 'cluster' | 'namespace', group: string, resource: string, verbs: string]
> = [
  ['cluster', 'metal3.io', 'baremetalhosts', 'list watch'],
  ['cluster', 'metal3.io', 'hardwaredata', 'list watch'],
  ['cluster', '', 'namespaces', 'get'],
  ['namespace', '', 'secrets', 'get create update delete'],
  ['namespace', '', 'configmaps', 'get create update delete'],
  ['namespace', 'batch', 'jobs', 'get list watch create delete'],
  ['namespace', '', 'pods', 'list'],
  ['namespace', '', 'pods/log', 'get'],
  ['namespace', 'coordination.k8s.io', 'leases', 'get create update'],
  ['namespace', 'bpa.akraino.org', 'sites', 'get list watch create patch delete'],
  ['namespace', 'bpa.akraino.org', 'clusters', 'get list watch create patch delete'],
  ['namespace', 'bpa.akraino.org', 'provisionings', 'get list watch create patch delete'],
  ['namespace', 'bpa.akraino.org', 'softwares', 'get list watch create patch delete'],
  ['namespace', 'bpa.akraino.org', 'sites/status', 'patch'],
  ['namespace', 'bpa.akraino.org', 'clusters/status', 'patch'],
  ['namespace', 'bpa.akraino.org', 'provisionings/status', 'patch'],
  ['namespace', 'bpa.akraino.org', 'softwares/status', 'patch'],
  ['namespace', 'events.k8s.io', 'events', 'create patch'],
];

/** Settings the serve/git layer reads that are not in src/config/options.ts yet. */
/** Settings the manifests use that the options registry does not declare (none left). */
const PENDING_ENV = new Set<string>([]);

interface Container {
  name: string;
  args?: string[];
  ports?: Array<{ name?: string; containerPort: number }>;
  env?: Array<{ name: string; value?: string; valueFrom?: Obj }>;
  securityContext?: Obj;
  resources?: { requests?: Obj; limits?: Obj };
  livenessProbe?: { httpGet?: { path: string; port: number | string } };
  readinessProbe?: { httpGet?: { path: string; port: number | string } };
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
}
interface Volume {
  name: string;
  persistentVolumeClaim?: { claimName: string };
  emptyDir?: Obj;
  secret?: {
    secretName: string;
    defaultMode?: number;
    optional?: boolean;
    items?: Array<{ key: string; path: string }>;
  };
}
interface PodSpec {
  serviceAccountName?: string;
  shareProcessNamespace?: boolean;
  securityContext?: Obj;
  containers: Container[];
  volumes?: Volume[];
}

function podSpec(): PodSpec {
  return dig(only(manifests, 'Deployment', 'bpa'), 'spec.template.spec') as PodSpec;
}

function container(name = 'bpa'): Container {
  const containers = podSpec().containers;
  assert.deepEqual(
    containers.map((c) => c.name),
    ['bpa', 'registry'],
    'bpa first (overlays patch containers/0), the site registry beside it',
  );
  const found = containers.find((c) => c.name === name);
  assert.ok(found, `a container ${name}`);
  return found;
}

function portNumber(port: number | string): number | undefined {
  if (typeof port === 'number') return port;
  return container().ports?.find((p) => p.name === port)?.containerPort;
}

function rulesOf(
  doc: Obj,
): Array<{ apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }> {
  return (doc.rules ?? []) as Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
}

describe('deploy/', () => {
  it('parses: every document has apiVersion, kind and a name', () => {
    assert.ok(manifests.length > 10);
    for (const { file, doc } of manifests.filter((m) => m.file !== 'kustomization.yaml')) {
      assert.equal(typeof doc.apiVersion, 'string', `${file}: apiVersion`);
      assert.equal(typeof doc.kind, 'string', `${file}: kind`);
      assert.ok(meta(doc).name, `${file}: ${String(doc.kind)} has a name`);
    }
  });

  it('puts every namespaced object in bpa-system', () => {
    const clusterScoped = new Set([
      'Namespace',
      'CustomResourceDefinition',
      'ClusterRole',
      'ClusterRoleBinding',
      'Kustomization',
    ]);
    for (const { file, doc } of manifests) {
      if (clusterScoped.has(String(doc.kind))) continue;
      assert.equal(
        meta(doc).namespace,
        NAMESPACE,
        `${file}: ${String(doc.kind)} ${String(meta(doc).name)}`,
      );
    }
    assert.equal(meta(only(manifests, 'Namespace')).name, NAMESPACE);
  });

  it('kustomization.yaml lists every manifest except the example Secrets', () => {
    const kustomization = only(manifests, 'Kustomization');
    assert.equal(kustomization.namespace, NAMESPACE);
    const expected = filesUnder(DEPLOY_DIR)
      .filter(isYaml)
      .filter((f) => f !== 'kustomization.yaml' && f !== 'secrets.example.yaml')
      .sort();
    assert.deepEqual([...(kustomization.resources as string[])].sort(), expected);
  });

  describe('RBAC', () => {
    it('grants exactly the table, no wildcard, no resource names', () => {
      const granted: string[] = [];
      for (const [kind, scope] of [
        ['ClusterRole', 'cluster'],
        ['Role', 'namespace'],
      ] as const) {
        for (const { doc } of manifests.filter((m) => m.doc.kind === kind)) {
          for (const rule of rulesOf(doc)) {
            assert.equal(rule.resourceNames, undefined);
            for (const group of rule.apiGroups)
              for (const resource of rule.resources)
                for (const verb of rule.verbs) {
                  assert.ok(
                    ![group, resource, verb].includes('*'),
                    `no wildcard in ${kind} ${String(meta(doc).name)}`,
                  );
                  granted.push(`${scope} ${group}/${resource} ${verb}`);
                }
          }
        }
      }
      const expected = RBAC_TABLE.flatMap(([scope, group, resource, verbs]) =>
        verbs.split(' ').map((verb) => `${scope} ${group}/${resource} ${verb}`),
      );
      assert.deepEqual(granted.sort(), expected.sort());
      assert.equal(new Set(granted).size, granted.length, 'no permission is granted twice');
    });

    it('binds the roles to the bpa service account only', () => {
      const sa = only(manifests, 'ServiceAccount');
      assert.equal(podSpec().serviceAccountName, meta(sa).name);
      for (const [bindingKind, roleKind] of [
        ['ClusterRoleBinding', 'ClusterRole'],
        ['RoleBinding', 'Role'],
      ] as const) {
        const bindings = manifests.filter((m) => m.doc.kind === bindingKind);
        const roles = manifests.filter((m) => m.doc.kind === roleKind);
        assert.equal(bindings.length, roles.length, `one ${bindingKind} per ${roleKind}`);
        for (const { doc } of bindings) {
          assert.deepEqual(doc.subjects, [
            { kind: 'ServiceAccount', name: meta(sa).name, namespace: NAMESPACE },
          ]);
          const ref = doc.roleRef as { kind: string; name: string };
          assert.equal(ref.kind, roleKind);
          assert.ok(
            roles.some((r) => meta(r.doc).name === ref.name),
            `${ref.kind} ${ref.name} exists`,
          );
        }
      }
    });
  });

  describe('Deployment', () => {
    it('runs serve with leader election, one replica by default', () => {
      const deployment = only(manifests, 'Deployment', 'bpa');
      assert.equal(dig(deployment, 'spec.replicas'), 1);
      assert.equal(
        dig(deployment, 'spec.strategy.type'),
        'Recreate',
        'a RWO state volume cannot surge',
      );
      const c = container();
      assert.equal(c.args?.[0], 'serve');
      assert.ok(c.args?.includes('--leader-elect'));
      assert.equal(dig(c, 'image'), 'bpa:latest');
      const selector = dig(deployment, 'spec.selector.matchLabels') as Record<string, string>;
      const labels = dig(deployment, 'spec.template.metadata.labels') as Record<string, string>;
      for (const [k, v] of Object.entries(selector)) assert.equal(labels[k], v);
    });

    it('runs as non-root with a read-only root filesystem and nothing to escalate', () => {
      const pod = podSpec().securityContext ?? {};
      const c = container().securityContext ?? {};
      assert.equal(pod.runAsNonRoot, true);
      assert.ok(typeof pod.runAsUser === 'number' && pod.runAsUser > 0);
      assert.equal(
        pod.fsGroup,
        pod.runAsGroup,
        'the state volume and the Secret files belong to the bpa group',
      );
      assert.equal(dig(pod, 'seccompProfile.type'), 'RuntimeDefault');
      assert.equal(c.runAsNonRoot, true);
      assert.equal(c.readOnlyRootFilesystem, true);
      assert.equal(c.allowPrivilegeEscalation, false);
      assert.deepEqual(dig(c, 'capabilities.drop'), ['ALL']);
      assert.equal(dig(c, 'capabilities.add'), undefined);
      assert.equal(dig(c, 'privileged'), undefined);
      assert.equal(dig(podSpec(), 'shareProcessNamespace'), true, 'orphaned processes are reaped');
      const tmp = container().volumeMounts?.find((m) => m.mountPath === '/tmp');
      assert.ok(tmp, '/tmp is writable');
      assert.ok(podSpec().volumes?.find((v) => v.name === tmp.name)?.emptyDir);
    });

    it('probes /healthz (liveness) and /readyz (readiness) on port 8080', () => {
      const c = container();
      assert.equal(c.livenessProbe?.httpGet?.path, '/healthz');
      assert.equal(c.readinessProbe?.httpGet?.path, '/readyz');
      assert.equal(portNumber(c.livenessProbe?.httpGet?.port ?? ''), 8080);
      assert.equal(portNumber(c.readinessProbe?.httpGet?.port ?? ''), 8080);
    });

    it('runs the site registry beside bpa, non-root, its storage on the state volume', () => {
      const r = container('registry');
      assert.match(String(dig(r, 'image')), /^docker\.io\/library\/registry:2\.\d+\.\d+$/);
      assert.equal(r.ports?.find((p) => p.name === 'registry')?.containerPort, 5000);
      assert.equal(r.readinessProbe?.httpGet?.path, '/v2/');
      assert.equal(dig(r, 'securityContext.readOnlyRootFilesystem'), true);
      assert.equal(dig(r, 'securityContext.allowPrivilegeEscalation'), false);
      const env = new Map(r.env?.map((e) => [e.name, e.value]));
      const root = env.get('REGISTRY_STORAGE_FILESYSTEM_ROOTDIRECTORY');
      const mount = r.volumeMounts?.find((m) => m.mountPath === root);
      const volume = podSpec().volumes?.find((v) => v.name === mount?.name);
      assert.equal(volume?.persistentVolumeClaim?.claimName, 'bpa-state');
      const service = only(manifests, 'Service');
      const ports = (dig(service, 'spec.ports') as Array<{ port: number; targetPort: string }>).map(
        (p) => `${p.port}:${p.targetPort}`,
      );
      assert.deepEqual(ports, ['8080:http', '5000:registry']);
    });

    it('requests resources and limits memory', () => {
      const r = container().resources;
      assert.ok(r?.requests?.cpu && r.requests.memory && r.limits?.memory);
    });

    it('mounts the state PVC at BPA_STATE_DIR', () => {
      const pvc = only(manifests, 'PersistentVolumeClaim');
      const volume = podSpec().volumes?.find((v) => v.persistentVolumeClaim);
      assert.equal(volume?.persistentVolumeClaim?.claimName, meta(pvc).name);
      assert.equal(meta(pvc).name, 'bpa-state');
      const mount = container().volumeMounts?.find((m) => m.name === volume?.name);
      assert.equal(mount?.mountPath, '/var/lib/bpa');
      assert.notEqual(mount?.readOnly, true);
      const env = new Map(container().env?.map((e) => [e.name, e]));
      assert.equal(env.get('BPA_STATE_DIR')?.value, '/var/lib/bpa');
      assert.equal(
        env.get('BPA_STATE_CLAIM')?.value,
        meta(pvc).name,
        'installer Jobs mount the same claim',
      );
    });

    it('mounts every Secret read-only with mode 0400, and the SSH key at /var/run/secrets/bpa/ssh', () => {
      const secretVolumes = (podSpec().volumes ?? []).filter((v) => v.secret);
      assert.ok(secretVolumes.length >= 4);
      for (const v of secretVolumes) {
        const mount = container().volumeMounts?.find((m) => m.name === v.name);
        assert.ok(mount, `${v.name} is mounted`);
        assert.equal(mount.readOnly, true, `${v.name} is mounted read-only`);
        assert.equal(v.secret?.defaultMode, 0o400, `${v.name} has mode 0400`);
      }
      const ssh = secretVolumes.find((v) => v.secret?.secretName === 'bpa-ssh-key');
      assert.equal(
        container().volumeMounts?.find((m) => m.name === ssh?.name)?.mountPath,
        '/var/run/secrets/bpa/ssh',
      );
      assert.equal(ssh?.secret?.optional, undefined, 'bpa does not start without its key');
    });

    it('takes only BPA_* settings that exist, and every file setting points into a mounted Secret item', () => {
      const known = new Set<string>([...Object.values(OPTIONS).map((o) => o.env), ...PENDING_ENV]);
      const env = container().env ?? [];
      for (const e of env) assert.ok(known.has(e.name), `${e.name} is a bpa setting`);
      const names = new Set(env.map((e) => e.name));
      for (const required of [
        'BPA_REPO_URL',
        'BPA_REF',
        'BPA_PATH',
        'BPA_INTERVAL',
        'BPA_LISTEN',
        'BPA_WEBHOOK_SECRET_FILE',
        'BPA_GIT_TOKEN_FILE',
        'BPA_GIT_USERNAME',
        'BPA_SSH_KEY',
        'BPA_BOOTSTRAP_CREDENTIALS',
        'BPA_NAMESPACE',
      ]) {
        assert.ok(names.has(required), `${required} is set`);
      }
      assert.equal(env.find((e) => e.name === 'BPA_LISTEN')?.value, ':8080');
      assert.equal(
        dig(
          env.find((e) => e.name === 'BPA_NAMESPACE'),
          'valueFrom.fieldRef.fieldPath',
        ),
        'metadata.namespace',
      );
      assert.equal(
        dig(
          env.find((e) => e.name === 'BPA_GIT_USERNAME'),
          'valueFrom.secretKeyRef.name',
        ),
        'bpa-git-credentials',
      );
      for (const name of [
        'BPA_SSH_KEY',
        'BPA_GIT_TOKEN_FILE',
        'BPA_WEBHOOK_SECRET_FILE',
        'BPA_BOOTSTRAP_CREDENTIALS',
      ]) {
        const path = env.find((e) => e.name === name)?.value ?? '';
        const mount = container().volumeMounts?.find((m) => path.startsWith(`${m.mountPath}/`));
        assert.ok(mount?.readOnly, `${name} (${path}) is on a read-only mount`);
        const items = podSpec().volumes?.find((v) => v.name === mount.name)?.secret?.items ?? [];
        assert.ok(
          items.some((i) => `${mount.mountPath}/${i.path}` === path),
          `${name}: ${path} is a Secret item`,
        );
      }
      // bpa wants the public half next to the private key (<key>.pub).
      const sshKey = env.find((e) => e.name === 'BPA_SSH_KEY')?.value ?? '';
      const sshItems =
        podSpec().volumes?.find((v) => v.secret?.secretName === 'bpa-ssh-key')?.secret?.items ?? [];
      assert.ok(sshItems.some((i) => `/var/run/secrets/bpa/ssh/${i.path}` === `${sshKey}.pub`));
    });

    it('names only Secrets and keys that secrets.example.yaml shows', () => {
      const examples = manifests.filter((m) => m.file === 'secrets.example.yaml').map((m) => m.doc);
      const keysOf = (name: string): string[] =>
        Object.keys((examples.find((d) => meta(d).name === name)?.stringData ?? {}) as Obj);
      const referenced: Array<[string, string]> = [];
      for (const v of podSpec().volumes ?? []) {
        for (const item of v.secret?.items ?? [])
          referenced.push([v.secret?.secretName ?? '', item.key]);
      }
      for (const e of container().env ?? []) {
        const ref = dig(e, 'valueFrom.secretKeyRef') as { name: string; key: string } | undefined;
        if (ref) referenced.push([ref.name, ref.key]);
      }
      assert.ok(referenced.length >= 5);
      for (const [name, key] of referenced)
        assert.ok(keysOf(name).includes(key), `secrets.example.yaml has ${name}/${key}`);
      const sshExample = examples.find((d) => meta(d).name === 'bpa-ssh-key');
      assert.equal(sshExample?.type, 'kubernetes.io/ssh-auth');
    });

    it('is reached through the Service on port 8080', () => {
      const service = only(manifests, 'Service', 'bpa');
      const ports = dig(service, 'spec.ports') as Array<{
        port: number;
        targetPort: number | string;
      }>;
      assert.equal(ports.length, 2, 'bpa, and the site registry beside it');
      assert.equal(ports[0]?.port, 8080);
      assert.equal(portNumber(ports[0]?.targetPort ?? ''), 8080);
      const labels = dig(only(manifests, 'Deployment'), 'spec.template.metadata.labels') as Record<
        string,
        string
      >;
      for (const [k, v] of Object.entries(dig(service, 'spec.selector') as Record<string, string>))
        assert.equal(labels[k], v);
    });
  });

  describe('secrets', () => {
    it('secrets.example.yaml holds placeholders only and is marked as an example', () => {
      const text = readFileSync(join(DEPLOY_DIR, 'secrets.example.yaml'), 'utf8');
      assert.match(text, /^# EXAMPLE ONLY/);
      const examples = manifests.filter((m) => m.file === 'secrets.example.yaml');
      assert.ok(examples.length >= 4);
      for (const { doc } of examples) {
        assert.equal(doc.kind, 'Secret');
        assert.equal(doc.data, undefined, 'no base64 data');
        for (const [key, value] of Object.entries(doc.stringData as Obj)) {
          assert.match(
            String(value),
            /REPLACE-ME/,
            `${String(meta(doc).name)}/${key} is a placeholder`,
          );
        }
      }
    });

    it('no file in deploy/ holds something that looks like a key or a token', () => {
      for (const file of filesUnder(DEPLOY_DIR)) {
        assert.deepEqual(secretLookalikes(readFileSync(join(DEPLOY_DIR, file), 'utf8')), [], file);
      }
    });

    it('the scan finds real keys and tokens (so that an empty result means something)', () => {
      const { privateKey } = generateKeyPairSync('ed25519', {
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
        publicKeyEncoding: { type: 'spki', format: 'pem' },
      });
      const plantings: string[] = [
        `ssh-privatekey: |\n  ${privateKey.replace(/\n/g, '\n  ')}`,
        `token: ghp_${randomBytes(27).toString('base64url').slice(0, 36)}`,
        `token: glpat-${randomBytes(15).toString('base64url').slice(0, 20)}`,
        `data:\n  password: ${randomBytes(24).toString('base64')}`,
        `key: ${Buffer.from('openssh-key-v1\0rest-of-a-key').toString('base64')}`,
      ];
      for (const text of plantings) {
        const doc = load(`x: 1\n${text}\n`, { schema: CORE_SCHEMA });
        assert.ok(doc, 'the planted text is YAML');
        assert.notDeepEqual(secretLookalikes(text), [], text.slice(0, 40));
      }
    });
  });
});

import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  ApiException,
  ApiextensionsV1Api,
  CustomObjectsApi,
  loadAllYaml,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import { CRD_KINDS, GROUP, VERSION, crdFileName } from '../../../scripts/gen-crds.js';
import { startFakeKube, type FakeKube } from '../../fakes/kube-api-server.js';
import { DEPLOY_DIR, ROOT, dig, filesUnder, type Obj } from './manifests.js';

const NS = 'sites';
const PLURALS = new Map(CRD_KINDS.map((k) => [k.kind, k.plural]));
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** The documents of a file whose kind has a CRD, as kubectl's YAML→JSON reads them. */
function bpaDocs(file: string): Obj[] {
  return (loadAll(readFileSync(file, 'utf8'), { schema: CORE_SCHEMA }) as unknown[]).filter(
    (d): d is Obj => typeof d === 'object' && d !== null && PLURALS.has(String((d as Obj).kind)),
  );
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** JSON as Go's encoding/json writes a map: keys sorted. */
function goJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  if (isObj(v)) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${goJson(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** Removes every map key whose value is null, at any depth; null list items stay. */
function dropNullKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNullKeys);
  if (!isObj(v)) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([, x]) => x !== null)
      .map(([k, x]) => [k, dropNullKeys(x)]),
  );
}

/** What `kubectl create -f` (and `kubectl apply --server-side`) send: the YAML as JSON, nulls kept. */
function kubectlCreateBody(doc: Obj, namespace: string): Obj {
  const body = structuredClone(doc);
  body.metadata = { ...(body.metadata as Obj), namespace };
  return body;
}

/**
 * What client-side `kubectl apply -f` sends to create a document, as measured with kubectl
 * v1.32.4 (the last test below checks it against the kubectl on PATH): the document with its
 * namespace, the last-applied-configuration annotation holding it as JSON (nulls kept,
 * `annotations: {}`), and then every map key whose value is null removed. Since kubectl 1.31
 * (kubernetes PR #125646) a null on create means "delete this key", as it always did in the
 * JSON merge patch of a later apply; so a YAML `- edge-1:` (`{"edge-1": null}`) arrives as
 * `{}`, without the node's name.
 */
function kubectlApplyBody(doc: Obj, namespace: string): Obj {
  const given = kubectlCreateBody(doc, namespace);
  const meta = given.metadata as Obj;
  const annotations = { ...(isObj(meta.annotations) ? meta.annotations : {}) };
  delete annotations[LAST_APPLIED];
  const recorded = { ...given, metadata: { ...meta, annotations } };
  const body = dropNullKeys(given) as Obj;
  (body.metadata as Obj).annotations = { ...annotations, [LAST_APPLIED]: `${goJson(recorded)}\n` };
  return body;
}

async function installCrds(kc: KubeConfig): Promise<void> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  for (const kind of CRD_KINDS) {
    const text = readFileSync(join(DEPLOY_DIR, 'crds', crdFileName(kind)), 'utf8');
    for (const crd of loadAllYaml(text) as V1CustomResourceDefinition[])
      await api.createCustomResourceDefinition({ body: crd });
  }
}

/** Creates a document as kubectl would, through the real client; the stored object or the error. */
async function send(
  kc: KubeConfig,
  body: Obj,
  fieldManager: string,
): Promise<{ stored?: Obj; status?: { code: number; message: string } }> {
  try {
    const stored = (await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: String(dig(body, 'metadata.namespace')),
      plural: PLURALS.get(String(body.kind)) ?? '',
      body,
      fieldManager,
      // kubectl's default --validate=strict asks the server for strict field validation.
      fieldValidation: 'Strict',
    })) as Obj;
    return { stored };
  } catch (err: unknown) {
    if (!(err instanceof ApiException)) throw err;
    const status = JSON.parse(String(err.body)) as { message: string };
    return { status: { code: err.code, message: status.message } };
  }
}

const EXAMPLE_FILES = [
  join(ROOT, 'sites/example/site.yaml'),
  ...filesUnder(join(ROOT, 'sites/example/clusters')).map((f) =>
    join(ROOT, 'sites/example/clusters', f),
  ),
];

const BARE_NAME = `apiVersion: bpa.akraino.org/v1alpha1
kind: Provisioning
metadata:
  name: bare-name
spec:
  masters:
    - edge-1:
        cpu: 8
  workers:
    - edge-1:
`;

describe('deploy/crds against the API server as kubectl sends documents', () => {
  let kube: FakeKube;
  let kc: KubeConfig;

  beforeEach(async () => {
    kube = await startFakeKube();
    kc = kube.kubeConfig(NS);
    await installCrds(kc);
  });

  afterEach(async () => {
    await kube.stop();
  });

  after(() => {
    for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  for (const file of EXAMPLE_FILES) {
    it(`kubectl apply -f ${file.slice(ROOT.length + 1)}: accepted and stored unchanged`, async () => {
      const docs = bpaDocs(file);
      assert.ok(docs.length > 0, 'the file holds bpa documents');
      for (const doc of docs) {
        const body = kubectlApplyBody(doc, NS);
        const { stored, status } = await send(kc, body, 'kubectl-client-side-apply');
        const name = `${String(doc.kind)} ${String(dig(doc, 'metadata.name'))}`;
        assert.equal(status, undefined, `${name}: ${JSON.stringify(status)}`);
        // Nothing pruned or dropped: what is stored is what the file says.
        assert.deepEqual(stored?.spec, dropNullKeys(doc.spec), name);
        assert.deepEqual(stored?.spec, doc.spec, `${name} has no null kubectl would drop`);
      }
    });
  }

  it('kubectl apply of a node given by its name only (`- edge-1:`): the name is lost, the CRD refuses it', async () => {
    const doc = bpaDocs(writeTemp(BARE_NAME))[0] as Obj;
    const body = kubectlApplyBody(doc, NS);
    assert.deepEqual(dig(body, 'spec.workers'), [{}], 'kubectl sends an entry without its name');
    const { stored, status } = await send(kc, body, 'kubectl-client-side-apply');
    assert.equal(stored, undefined);
    assert.equal(status?.code, 422);
    assert.match(
      status?.message ?? '',
      /^Provisioning\.bpa\.akraino\.org "bare-name" is invalid: spec\.workers\[0\]: Invalid value: 0: spec\.workers\[0\] in body should have at least 1 properties$/,
    );
  });

  it('kubectl create (nulls kept) of the same document: the CRD keeps the null', async () => {
    const doc = bpaDocs(writeTemp(BARE_NAME))[0] as Obj;
    const { stored, status } = await send(kc, kubectlCreateBody(doc, NS), 'kubectl-create');
    assert.equal(status, undefined, JSON.stringify(status));
    assert.deepEqual(dig(stored, 'spec.workers'), [{ 'edge-1': null }]);
  });

  it('the ICN samples: all accepted as kubectl create sends them; kubectl apply refuses exactly those with a bare node name', async () => {
    const docs = bpaDocs(join(ROOT, 'test/unit/deploy/icn-samples.yaml'));
    const refused: string[] = [];
    for (const [i, doc] of docs.entries()) {
      // The samples reuse names: one namespace each.
      const name = String(dig(doc, 'metadata.name'));
      const created = await send(kc, kubectlCreateBody(doc, `icn-${i}`), 'kubectl-create');
      assert.equal(created.status, undefined, `${name}: ${JSON.stringify(created.status)}`);
      const applied = await send(kc, kubectlApplyBody(doc, `icn-apply-${i}`), 'kubectl-client-side-apply');
      if (applied.status) {
        assert.equal(applied.status.code, 422, applied.status.message);
        refused.push(name);
      }
    }
    const bare = docs
      .filter((d) =>
        ['masters', 'workers'].some((role) =>
          ((dig(d, `spec.${role}`) ?? []) as unknown[]).some(
            (e) => isObj(e) && Object.values(e).includes(null),
          ),
        ),
      )
      .map((d) => String(dig(d, 'metadata.name')));
    assert.ok(bare.length > 0, 'the samples hold a bare node name');
    assert.deepEqual(refused, bare);
  });

  it('what kubectl on PATH really sends for kubectl apply -f is what these tests send', async function () {
    this.timeout(60_000);
    const kubectl = await kubectlVersion();
    if (!kubectl) {
      console.log('      (skipped: no kubectl on PATH to compare with)');
      this.skip();
    }
    // kubectl (v1.32.4 measured) sends no bearer token to a plain-http server: this one asks
    // for none.
    const open = await startFakeKube({ requireAuth: false });
    const dir = mkdtempSync(join(tmpdir(), 'bpa-kubectl-'));
    try {
      await installCrds(open.kubeConfig());
      const bare = writeTemp(BARE_NAME);
      const files = [bare, ...EXAMPLE_FILES.filter((f) => /provisioning/.test(f))];
      for (const file of files) {
        const args = ['--kubeconfig', open.kubeconfigPath, '--cache-dir', join(dir, 'cache')];
        const applied = run('kubectl', [...args, 'apply', '--validate=false', '-f', file]);
        if (file !== bare) {
          await applied;
          continue;
        }
        await assert.rejects(applied, (err: unknown) => {
          assert.match(
            String((err as { stderr?: string }).stderr),
            /The Provisioning "bare-name" is invalid: spec\.workers\[0\]: Invalid value: 0: spec\.workers\[0\] in body should have at least 1 properties/,
          );
          return true;
        });
      }
      const posts = open.requests.filter((r) => r.method === 'POST' && r.path.includes(GROUP));
      assert.equal(posts.length, files.length, `kubectl ${kubectl} created every document`);
      for (const [i, file] of files.entries()) {
        const doc = bpaDocs(file)[0] as Obj;
        assert.deepEqual(posts[i]?.body, kubectlApplyBody(doc, 'default'), file);
        assert.equal(posts[i]?.query.fieldManager, 'kubectl-client-side-apply');
      }
    } finally {
      await open.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const temps: string[] = [];

function writeTemp(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'bpa-crd-doc-'));
  temps.push(dir);
  const file = join(dir, 'doc.yaml');
  writeFileSync(file, text);
  return file;
}

const run = promisify(execFile);

async function kubectlVersion(): Promise<string | undefined> {
  try {
    const { stdout } = await run('kubectl', ['version', '--client', '-o', 'json'], {
      timeout: 20_000,
    });
    const parsed = JSON.parse(stdout) as { clientVersion?: { gitVersion?: string } };
    return parsed.clientVersion?.gitVersion ?? 'unknown';
  } catch {
    return undefined;
  }
}

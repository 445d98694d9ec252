// The authoritative check behind test/unit/deploy/metal3-fixtures.test.ts: every BareMetalHost
// fixture bpa shows or feeds itself is created on a real kube-apiserver holding metal3's CRDs,
// its status written through the status subresource as metal3's controller writes it, and the
// server must accept both and keep every field (a field it prunes is one bpa would never see
// on a real cluster).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allFixtures, assertEverySourceRead, type Json } from '../../k8s/metal3-fixtures.js';
import { useRealKube } from '../../k8s/envtest.js';

interface Stored {
  metadata: { resourceVersion: string; name: string };
  spec?: Json;
  status?: Json;
}

/** The differences between what was sent and what the server kept, as paths. */
function dropped(sent: unknown, kept: unknown, at: string, out: string[]): void {
  if (typeof sent === 'object' && sent !== null && !Array.isArray(sent)) {
    const k = (typeof kept === 'object' && kept !== null ? kept : {}) as Json;
    for (const [key, v] of Object.entries(sent)) dropped(v, k[key], `${at}.${key}`, out);
  } else if (Array.isArray(sent)) {
    const k = Array.isArray(kept) ? kept : [];
    sent.forEach((v, i) => dropped(v, k[i], `${at}[${i}]`, out));
  } else if (sent !== kept && !(sent === null && kept === undefined)) {
    out.push(`${at}: sent ${JSON.stringify(sent)}, kept ${JSON.stringify(kept)}`);
  }
}

describe('BareMetalHost fixtures on a real kube-apiserver with metal3 CRDs', function () {
  this.timeout(120_000);
  const kube = useRealKube({ name: 'fixtures', metal3: true });
  let tmp = '';
  after(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('accepts every fixture, spec and status (through /status), and prunes none of their fields', async () => {
    const { namespace } = kube.env;
    tmp = await mkdtemp(join(tmpdir(), 'bpa-metal3-real-'));
    const fixtures = await allFixtures(tmp);
    assertEverySourceRead(fixtures);
    const base = `/apis/metal3.io/v1alpha1/namespaces/${namespace}/baremetalhosts`;
    const problems: string[] = [];
    let withStatus = 0;
    for (const [i, { where, doc }] of fixtures.all.entries()) {
      const metadata = (doc.metadata ?? {}) as Json;
      // Sources share host names; each gets its own object here.
      const name = `f${i}-${String(metadata.name ?? 'host')}`.slice(0, 63);
      const obj = { ...doc, metadata: { ...metadata, name, namespace } };
      const label = `${where} ${String(metadata.name)}`;
      const created = await kube.env.admin<Stored>('POST', base, obj);
      if (created.status !== 201) {
        problems.push(`${label}: create ${created.status} ${JSON.stringify(created.body)}`);
        continue;
      }
      dropped(doc.spec, created.body.spec, `${label} spec`, problems);
      if (doc.status === undefined) continue;
      withStatus++;
      const updated = await kube.env.admin<Stored>('PUT', `${base}/${name}/status`, {
        ...created.body,
        status: doc.status,
      });
      if (updated.status !== 200) {
        problems.push(`${label}: status ${updated.status} ${JSON.stringify(updated.body)}`);
        continue;
      }
      dropped(doc.status, updated.body.status, `${label} status`, problems);
    }
    assert.deepEqual(problems, []);
    // The fixtures with a status are checked through the subresource, not skipped.
    assert.ok(withStatus >= 10, `fixtures with a status: ${withStatus}`);
  });
});

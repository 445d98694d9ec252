import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../lab/exec.js';
import { canRunLab, startLab, type Lab } from '../../lab/lab.js';
import { bpa, labArgs, labReady } from '../apply/harness.js';
import { writeLabSite, updateLabSite, type LabSiteOptions } from '../apply/lab-site.js';
import {
  buildOciImage,
  canRunRegistry,
  skopeoPush,
  startContainerd,
  startRegistry,
  type Daemon,
} from './registry.js';

/**
 * The site registry as the nodes' mirror: docker-registry on the lab's gateway, an image
 * pushed with skopeo, `bpa reconcile` writing containerd's hosts.toml and Docker's
 * daemon.json on lab hosts (each with its own /etc), and the real `ctr` on a host pulling
 * through the files bpa wrote. docker.io and registry.k8s.io are unreachable from the lab: an
 * image that arrives came through the mirror.
 */
describe('registry mirror on lab hosts (docker-registry, skopeo, ctr)', function () {
  this.timeout(600_000);
  let lab: Lab | undefined;
  let registry: (Daemon & { url: string; hostPort: string }) | undefined;
  let containerd: (Daemon & { socket: string }) | undefined;
  let tmp = '';
  let site = '';
  let state = '';
  let digest = '';
  let pauseDigest = '';
  const nodes: LabSiteOptions['nodes'] = [
    { name: 'master-1', roles: ['master'], host: 0 },
    { name: 'worker-1', roles: ['worker'], host: 1 },
  ];
  const siteDoc = (registries: string[]): string =>
    `apiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata:\n  name: lab\nspec:\n  registryMirror:\n    registries: [${registries.join(', ')}]\n    runtimes: [containerd, docker]\n`;
  const reconcile = (): ReturnType<typeof bpa> =>
    bpa(['reconcile', '--once', site, ...labArgs(lab!, state, ['--registry-url', registry!.url])]);
  const cat = async (host: string, path: string): Promise<string> =>
    (await lab!.exec(host, ['cat', path])).stdout;

  before(async function () {
    if (!labReady(canRunLab({ isolatedPackages: true }))) this.skip();
    const tools = await canRunRegistry();
    if (!tools.ok) {
      console.log(`    skipped: ${tools.reason}`);
      this.skip();
    }
    // Own /etc per host: what bpa writes there never reaches this machine's /etc.
    lab = await startLab({ hosts: 2, isolatedPackages: true });
    tmp = await mkdtemp(join(tmpdir(), 'bpa-registry-'));
    state = join(tmp, 'state');
    registry = await startRegistry(join(tmp, 'registry'), lab.gatewayIp);
    await mkdir(join(tmp, 'containerd'));
    containerd = await startContainerd(join(tmp, 'containerd'));
    site = await writeLabSite(
      lab.hosts,
      { cluster: 'reg', nodes, extraSite: siteDoc(['docker.io', 'registry.k8s.io']) },
      join(tmp, 'site'),
    );
  });
  after(async () => {
    await containerd?.stop();
    await registry?.stop();
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('serves back an image pushed with skopeo', async () => {
    const layout = join(tmp, 'oci');
    digest = await buildOciImage(layout, '1.0', 'hello from the site registry\n');
    await skopeoPush(layout, '1.0', `${registry!.hostPort}/library/bpa-test:1.0`);
    const pause = join(tmp, 'oci-pause');
    pauseDigest = await buildOciImage(pause, '3.9', 'pause\n');
    await skopeoPush(pause, '3.9', `${registry!.hostPort}/registry.k8s.io/pause:3.9`);
    const inspected = JSON.parse(
      (
        await run('skopeo', [
          '--insecure-policy',
          'inspect',
          '--tls-verify=false',
          `docker://${registry!.hostPort}/library/bpa-test:1.0`,
        ])
      ).stdout,
    ) as { Digest: string };
    assert.equal(inspected.Digest, digest);
  });

  it('writes hosts.toml and daemon.json on every node, keeping the rest of daemon.json', async () => {
    // A node's own Docker settings, which bpa must keep.
    await lab!.exec('h2', [
      'sh',
      '-c',
      'mkdir -p /etc/docker && printf \'{"log-driver": "journald"}\' > /etc/docker/daemon.json',
    ]);
    const r = await reconcile();
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /configure-registry/);
    for (const h of ['h1', 'h2']) {
      const toml = await cat(h, '/etc/containerd/certs.d/docker.io/hosts.toml');
      assert.match(toml, /^server = "https:\/\/registry-1\.docker\.io"$/m);
      assert.match(
        toml,
        new RegExp(`^\\[host\\."${registry!.url.replace(/\./g, '\\.')}"\\]$`, 'm'),
      );
      const k8s = await cat(h, '/etc/containerd/certs.d/registry.k8s.io/hosts.toml');
      assert.match(k8s, /override_path = true/);
      const daemon = JSON.parse(await cat(h, '/etc/docker/daemon.json')) as Record<string, unknown>;
      assert.deepEqual(daemon['registry-mirrors'], [registry!.url]);
      assert.deepEqual(daemon['insecure-registries'], [registry!.hostPort]);
    }
    const kept = JSON.parse(await cat('h2', '/etc/docker/daemon.json')) as Record<string, unknown>;
    assert.equal(kept['log-driver'], 'journald');
    const again = await reconcile();
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stdout, /No changes/);
  });

  it('ctr on a node pulls docker.io and registry.k8s.io images through the files bpa wrote', async () => {
    const before = registry!.log().length;
    for (const [ref, want] of [
      ['docker.io/library/bpa-test:1.0', digest],
      ['registry.k8s.io/pause:3.9', pauseDigest],
    ] as const) {
      const fetched = await lab!.exec('h1', [
        'ctr',
        '--address',
        containerd!.socket,
        'content',
        'fetch',
        '--hosts-dir',
        '/etc/containerd/certs.d',
        ref,
      ]);
      assert.match(fetched.stdout + fetched.stderr, new RegExp(want.slice(7, 19)));
      const images = await run('ctr', ['--address', containerd!.socket, 'images', 'ls', '-q']);
      assert.ok(images.stdout.includes(ref), images.stdout);
    }
    const served = registry!.log().slice(before);
    // containerd names the upstream in ?ns=: these came through the mirror, for docker.io
    // and for registry.k8s.io, the layers included.
    assert.match(
      served,
      /"HEAD \/v2\/library\/bpa-test\/manifests\/1\.0\?ns=docker\.io HTTP\/1\.1" 200/,
    );
    assert.match(
      served,
      /"GET \/v2\/library\/bpa-test\/blobs\/sha256:[0-9a-f]{64}\?ns=docker\.io HTTP\/1\.1" 200 10240/,
    );
    assert.match(
      served,
      /"HEAD \/v2\/registry\.k8s\.io\/pause\/manifests\/3\.9\?ns=registry\.k8s\.io HTTP\/1\.1" 200/,
    );
  });

  it('repairs drift: a hosts.toml changed by hand is written again', async () => {
    await lab!.exec('h2', [
      'sh',
      '-c',
      'echo "server = \\"https://elsewhere.example\\"" > /etc/containerd/certs.d/docker.io/hosts.toml',
    ]);
    const plan = await bpa([
      'plan',
      site,
      ...labArgs(lab!, state, ['--registry-url', registry!.url]).filter(
        (a) => a !== '--log-level' && a !== 'info',
      ),
    ]);
    assert.equal(plan.code, 2, plan.stdout + plan.stderr);
    assert.match(
      plan.stdout,
      /configure-registry.*worker-1: \/etc\/containerd\/certs\.d\/docker\.io\/hosts\.toml was changed/,
    );
    const r = await reconcile();
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(
      await cat('h2', '/etc/containerd/certs.d/docker.io/hosts.toml'),
      /registry-1\.docker\.io/,
    );
  });

  it('a changed registry list is written to every node', async () => {
    await updateLabSite(site, lab!.hosts, {
      cluster: 'reg',
      nodes,
      extraSite: siteDoc(['docker.io', 'quay.io', 'registry.k8s.io']),
    });
    const r = await reconcile();
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /registry mirror changed/);
    for (const h of ['h1', 'h2'])
      assert.match(await cat(h, '/etc/containerd/certs.d/quay.io/hosts.toml'), /quay\.io/);
  });
});

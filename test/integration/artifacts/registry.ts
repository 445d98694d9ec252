/**
 * The site registry for tests: Debian's `docker-registry` (the CNCF distribution registry)
 * on an address the test chooses, an OCI image built by hand (one layer, one file) and pushed
 * with `skopeo`, and a containerd daemon whose `ctr` pulls through a certs.d directory. Every
 * process is stopped by its PID.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { run } from '../../lab/exec.js';
import { waitFor } from '../apply/harness.js';

export interface Daemon {
  /** Everything it logged so far. */
  log(): string;
  stop(): Promise<void>;
}

function start(cmd: string, args: string[]): { child: ChildProcess; daemon: Daemon } {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    daemon: {
      log: () => out,
      async stop() {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(t);
      },
    },
  };
}

/** A free TCP port on `host` (closed again before it is returned). */
export function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** docker-registry serving `dir` on host:port, over plain HTTP. */
export async function startRegistry(
  dir: string,
  host: string,
): Promise<Daemon & { url: string; hostPort: string }> {
  const port = await freePort(host);
  await mkdir(join(dir, 'data'), { recursive: true });
  const config = join(dir, 'config.yml');
  await writeFile(
    config,
    `version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: ${join(dir, 'data')}
  delete:
    enabled: true
http:
  addr: ${host}:${port}
`,
  );
  const { daemon } = start('docker-registry', ['serve', config]);
  const url = `http://${host}:${port}`;
  await waitFor(
    'docker-registry to answer',
    async () =>
      (await fetch(`${url}/v2/`).catch(() => undefined))?.status === 200 ? true : undefined,
    20_000,
    100,
  ).catch((err: Error) => {
    throw new Error(`${err.message}: ${daemon.log()}`);
  });
  return { ...daemon, url, hostPort: `${host}:${port}` };
}

const sha = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

/**
 * An OCI image layout in `dir` holding one image tagged `tag`: one uncompressed layer with
 * `/hello.txt` containing `text`. Returns the manifest digest.
 */
export async function buildOciImage(dir: string, tag: string, text: string): Promise<string> {
  const blobs = join(dir, 'blobs', 'sha256');
  await mkdir(blobs, { recursive: true });
  const root = await mkdtemp(join(dir, '.rootfs-'));
  await writeFile(join(root, 'hello.txt'), text);
  const layerFile = join(dir, 'layer.tar');
  await run('tar', [
    '--owner=0',
    '--group=0',
    '--mtime=@0',
    '-C',
    root,
    '-cf',
    layerFile,
    'hello.txt',
  ]);
  await rm(root, { recursive: true, force: true });
  const { readFile } = await import('node:fs/promises');
  const layer = await readFile(layerFile);
  await rm(layerFile);
  const put = async (data: Buffer | string): Promise<{ digest: string; size: number }> => {
    const hex = sha(data);
    await writeFile(join(blobs, hex), data);
    return { digest: `sha256:${hex}`, size: Buffer.byteLength(data) };
  };
  const layerBlob = await put(layer);
  const config = await put(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      config: {},
      rootfs: { type: 'layers', diff_ids: [layerBlob.digest] },
    }),
  );
  const manifest = JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
    layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', ...layerBlob }],
  });
  const m = await put(manifest);
  await writeFile(join(dir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  await writeFile(
    join(dir, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          ...m,
          annotations: { 'org.opencontainers.image.ref.name': tag },
        },
      ],
    }),
  );
  return m.digest;
}

/** Pushes the image `tag` of an OCI layout to `dest` (host:port/repo:tag) with skopeo, over HTTP. */
export async function skopeoPush(layout: string, tag: string, dest: string): Promise<void> {
  await run(
    'skopeo',
    [
      '--insecure-policy',
      'copy',
      // As built: the registry then serves the manifest digest the test computed.
      '--preserve-digests',
      '--dest-tls-verify=false',
      `oci:${layout}:${tag}`,
      `docker://${dest}`,
    ],
    { timeoutMs: 60_000 },
  );
}

/** A containerd daemon of its own (no CRI, native snapshots): a content store `ctr` writes to. */
export async function startContainerd(dir: string): Promise<Daemon & { socket: string }> {
  const socket = join(dir, 'containerd.sock');
  const config = join(dir, 'config.toml');
  await writeFile(
    config,
    `version = 2
root = "${join(dir, 'root')}"
state = "${join(dir, 'state')}"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "${socket}"
`,
  );
  const { daemon } = start('containerd', ['-c', config]);
  await waitFor(
    'containerd to serve',
    async () => (/containerd successfully booted/.test(daemon.log()) ? true : undefined),
    20_000,
    100,
  ).catch((err: Error) => {
    throw new Error(`${err.message}: ${daemon.log()}`);
  });
  return { ...daemon, socket };
}

/** Whether the registry tools are installed, and if not, why. */
export async function canRunRegistry(): Promise<{ ok: true } | { ok: false; reason: string }> {
  for (const [tool, pkg] of [
    ['docker-registry', 'docker-registry'],
    ['skopeo', 'skopeo'],
    ['containerd', 'containerd'],
    ['ctr', 'containerd'],
  ] as const) {
    try {
      await run(tool, ['--version']);
    } catch {
      return { ok: false, reason: `${tool} is not installed (Debian package ${pkg})` };
    }
  }
  return { ok: true };
}

/**
 * Real Debian packages for the lab: `buildDeb` makes small .deb files with dpkg-deb, and
 * `startAptRepo` publishes them as a flat apt repository (Packages, Packages.gz, Release)
 * over HTTP on the lab's gateway address, the only address lab hosts can reach. Hosts then run
 * the real apt-get and dpkg against it, without internet.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, posix } from 'node:path';
import { gzipSync } from 'node:zlib';
import { run } from './exec.js';

export interface DebSpec {
  name: string;
  /** A Debian version, e.g. `1.0-1` or `2:1.0-1`. */
  version: string;
  /** The Depends field, e.g. `bpa-test-a (>= 1.0)`; a list is joined with commas. */
  depends?: string | string[];
  description?: string;
  /**
   * Absolute path on the host → file content. Absent: one file `/usr/share/bpa-test/<name>`
   * holding `<name> <version>`, so a test can see which version is unpacked.
   */
  files?: Record<string, string>;
  /** Body of a `postinst` maintainer script (run by `sh -e`), e.g. `exit 1` to make configuring fail. */
  postinst?: string;
}

/** Package names and versions as Debian policy allows them (also keeps control files one field per line). */
const NAME_PATTERN = /^[a-z0-9][a-z0-9+.-]+$/;
const VERSION_PATTERN = /^(?:[0-9]+:)?[0-9][A-Za-z0-9.+~-]*$/;

function validateSpec(spec: DebSpec): void {
  if (!NAME_PATTERN.test(spec.name))
    throw new Error(`bad package name ${JSON.stringify(spec.name)}`);
  if (!VERSION_PATTERN.test(spec.version)) {
    throw new Error(`bad version ${JSON.stringify(spec.version)} for ${spec.name}`);
  }
  const oneLine = [depends(spec), spec.description ?? ''];
  if (oneLine.some((v) => /[\r\n]/.test(v))) {
    throw new Error(`${spec.name}: depends and description must be single lines`);
  }
  for (const path of Object.keys(spec.files ?? {})) {
    if (!path.startsWith('/') || path.split('/').some((part) => part === '..' || part === '.')) {
      throw new Error(`${spec.name}: file path ${JSON.stringify(path)} must be absolute and plain`);
    }
  }
}

const depends = (spec: DebSpec): string =>
  Array.isArray(spec.depends) ? spec.depends.join(', ') : (spec.depends ?? '');

/** The file name Debian tools give a package: epoch dropped, `_all.deb`. */
export function debFileName(spec: Pick<DebSpec, 'name' | 'version'>): string {
  return `${spec.name}_${spec.version.replace(/^[0-9]+:/, '')}_all.deb`;
}

function filesOf(spec: DebSpec): Record<string, string> {
  return spec.files ?? { [`/usr/share/bpa-test/${spec.name}`]: `${spec.name} ${spec.version}\n` };
}

function controlFile(spec: DebSpec, installedKiB: number): string {
  const lines = [
    `Package: ${spec.name}`,
    `Version: ${spec.version}`,
    'Architecture: all',
    'Maintainer: bpa test lab <lab@bpa.invalid>',
    `Installed-Size: ${installedKiB}`,
  ];
  if (depends(spec)) lines.push(`Depends: ${depends(spec)}`);
  lines.push('Section: misc', 'Priority: optional');
  lines.push(`Description: ${spec.description ?? `bpa test package ${spec.name}`}`);
  lines.push(` Built by the bpa test lab; version ${spec.version}.`);
  return `${lines.join('\n')}\n`;
}

/** Builds `<dir>/<name>_<version>_all.deb` with dpkg-deb (files owned by root); returns its path. */
export async function buildDeb(dir: string, spec: DebSpec): Promise<string> {
  validateSpec(spec);
  await mkdir(dir, { recursive: true });
  const tree = await mkdtemp(join(dir, `.build-${spec.name}-`));
  try {
    let bytes = 0;
    for (const [path, content] of Object.entries(filesOf(spec))) {
      const target = join(tree, path);
      await mkdir(dirname(target), { recursive: true, mode: 0o755 });
      await writeFile(target, content, { mode: 0o644 });
      bytes += Buffer.byteLength(content);
    }
    await mkdir(join(tree, 'DEBIAN'), { mode: 0o755 });
    await writeFile(join(tree, 'DEBIAN', 'control'), controlFile(spec, Math.ceil(bytes / 1024)));
    if (spec.postinst !== undefined) {
      const script = join(tree, 'DEBIAN', 'postinst');
      await writeFile(script, `#!/bin/sh\nset -e\n${spec.postinst}\n`);
      // dpkg-deb refuses maintainer scripts that are not executable.
      await chmod(script, 0o755);
    }
    // mkdtemp makes 0700 directories; a package's root must be world-readable.
    await chmod(tree, 0o755);
    const out = join(dir, debFileName(spec));
    // gzip: much faster than the default xz for these tiny packages, and every dpkg reads it.
    await run('dpkg-deb', ['--root-owner-group', '-Zgzip', '--build', tree, out]);
    return out;
  } finally {
    await rm(tree, { recursive: true, force: true });
  }
}

export interface RepoRequest {
  method: string;
  path: string;
  status: number;
  /** The client's address: which lab host asked. */
  from: string;
}

export interface AptRepo {
  /** The repository directory (served as the document root). */
  dir: string;
  /** `http://<gateway>:<port>/` */
  url: string;
  /** The apt source line for this flat repository, e.g. `deb [trusted=yes] http://198.18.0.1:41234/ ./`. */
  sourceLine: string;
  /** Builds and publishes another package (e.g. a newer version) and rewrites the index. */
  add(spec: DebSpec): Promise<string>;
  /** Every request served so far, oldest first. */
  readonly requestLog: readonly RepoRequest[];
  readonly requests: number;
  /** Closes the server (and open connections) and removes the repository directory. */
  stop(): Promise<void>;
}

interface Published {
  name: string;
  version: string;
  fileName: string;
  /** The stanza for the Packages index: the .deb's own control fields plus where and what it is. */
  stanza: string;
}

const digest = (algorithm: string, data: Buffer): string =>
  createHash(algorithm).update(data).digest('hex');

async function publishedEntry(deb: string, spec: DebSpec): Promise<Published> {
  const data = await readFile(deb);
  // The index repeats the control file inside the .deb, as the archive tools do.
  const { stdout: control } = await run('dpkg-deb', ['--field', deb]);
  const fileName = debFileName(spec);
  const extra = [
    `Filename: ${fileName}`,
    `Size: ${data.length}`,
    `MD5sum: ${digest('md5', data)}`,
    `SHA256: ${digest('sha256', data)}`,
  ];
  return {
    name: spec.name,
    version: spec.version,
    fileName,
    stanza: `${control.trimEnd()}\n${extra.join('\n')}\n`,
  };
}

/** Writes a file so a concurrent reader sees the old content or the new, never half of one. */
async function writeAtomic(path: string, data: Buffer | string): Promise<void> {
  const tmp = `${path}.tmp`;
  await writeFile(tmp, data);
  await rename(tmp, path);
}

async function writeIndex(dir: string, published: Published[]): Promise<void> {
  const packages = Buffer.from(published.map((p) => p.stanza).join('\n'));
  const packagesGz = gzipSync(packages);
  const files: [string, Buffer][] = [
    ['Packages', packages],
    ['Packages.gz', packagesGz],
  ];
  const sums = (algorithm: string): string =>
    files.map(([name, data]) => ` ${digest(algorithm, data)} ${data.length} ${name}`).join('\n');
  const release = [
    'Origin: bpa-test',
    'Label: bpa-test',
    'Suite: bpa-test',
    'Codename: bpa-test',
    `Date: ${new Date().toUTCString()}`,
    'Description: bpa test lab repository',
    'MD5Sum:',
    sums('md5'),
    'SHA256:',
    sums('sha256'),
  ].join('\n');
  // Release last: apt reads it first and then expects the indexes it lists.
  await writeAtomic(join(dir, 'Packages'), packages);
  await writeAtomic(join(dir, 'Packages.gz'), packagesGz);
  await writeAtomic(join(dir, 'Release'), `${release}\n`);
}

/** Maps a request path to a file in `dir`, or undefined for anything outside it. */
function fileFor(dir: string, url: string): string | undefined {
  let path: string;
  try {
    path = decodeURIComponent(new URL(url, 'http://repo').pathname);
  } catch {
    return undefined;
  }
  const rel = posix.normalize(path).replace(/^\/+/, '');
  if (
    rel === '' ||
    rel.includes('\0') ||
    rel.split('/').some((p) => p === '..' || p.startsWith('.'))
  ) {
    return undefined;
  }
  return join(dir, rel);
}

/**
 * Builds `packages` into a flat repository under the lab directory and serves it on the lab's
 * gateway address (a free port). Hosts have no other route, so apt can use only this.
 */
export async function startAptRepo(
  lab: { dir: string; gatewayIp: string },
  packages: DebSpec[],
): Promise<AptRepo> {
  const dir = await mkdtemp(join(lab.dir, 'apt-repo-'));
  await chmod(dir, 0o755);
  const published: Published[] = [];
  const requestLog: RepoRequest[] = [];
  // Publishing is serialised: each add sees the index the previous one wrote.
  let queue: Promise<unknown> = Promise.resolve();

  const publish = async (spec: DebSpec): Promise<string> => {
    if (published.some((p) => p.name === spec.name && p.version === spec.version)) {
      throw new Error(`${spec.name} ${spec.version} is published already`);
    }
    const deb = await buildDeb(dir, spec);
    published.push(await publishedEntry(deb, spec));
    return deb;
  };

  const serve = (req: IncomingMessage, res: ServerResponse): void => {
    const path = req.url ?? '/';
    const done = (status: number): void => {
      requestLog.push({
        method: req.method ?? '',
        path,
        status,
        from: req.socket.remoteAddress ?? '',
      });
    };
    const file = fileFor(dir, path);
    if ((req.method !== 'GET' && req.method !== 'HEAD') || file === undefined) {
      res.writeHead(req.method === 'GET' || req.method === 'HEAD' ? 404 : 405).end();
      done(res.statusCode);
      return;
    }
    stat(file).then(
      (st) => {
        if (!st.isFile()) throw new Error('not a file');
        res.writeHead(200, {
          'content-length': st.size,
          'content-type': 'application/octet-stream',
          'last-modified': st.mtime.toUTCString(),
        });
        done(200);
        if (req.method === 'HEAD') res.end();
        else createReadStream(file).pipe(res);
      },
      () => {
        res.writeHead(404).end();
        done(404);
      },
    );
  };

  let server: ReturnType<typeof createServer> | undefined;
  try {
    for (const spec of packages) await publish(spec);
    await writeIndex(dir, published);
    const srv = createServer(serve);
    server = srv;
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(0, lab.gatewayIp, () => resolve());
    });
  } catch (err) {
    server?.close();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const srv = server;
  const { port } = srv.address() as AddressInfo;
  const url = `http://${lab.gatewayIp}:${port}/`;
  let stopped = false;

  return {
    dir,
    url,
    sourceLine: `deb [trusted=yes] ${url} ./`,
    requestLog,
    get requests(): number {
      return requestLog.length;
    },
    add(spec: DebSpec): Promise<string> {
      const next = queue.then(async () => {
        const deb = await publish(spec);
        await writeIndex(dir, published);
        return deb;
      });
      queue = next.catch(() => undefined);
      return next;
    },
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      await new Promise<void>((resolve) => {
        srv.close(() => resolve());
        // apt keeps connections alive; close would otherwise wait for them.
        srv.closeAllConnections();
      });
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Whether this machine has the Debian tools the package lab needs, and if not, why. */
export async function canRunAptLab(): Promise<{ ok: true } | { ok: false; reason: string }> {
  for (const tool of ['dpkg-deb', 'dpkg-query', 'apt-get']) {
    try {
      await run(tool, ['--version']);
    } catch {
      return { ok: false, reason: `${tool} is not installed (Debian's dpkg and apt)` };
    }
  }
  return { ok: true };
}

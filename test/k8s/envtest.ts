/**
 * A real kube-apiserver (on a real etcd) for tests, like controller-runtime's envtest: where the
 * fake of test/fakes/kube-api-server.ts answers as bpa's authors believe Kubernetes does, this
 * one is Kubernetes (1.20, built from Debian's source package by scripts/kube-apiserver.sh).
 *
 *   describe('…', () => {
 *     const kube = useRealKube({ name: 'inventory', metal3: true });
 *     it('…', async () => {
 *       const kc = kube.env.bpaKubeConfig();          // bpa's service account, deploy/rbac.yaml
 *       await kube.env.admin('POST', `/api/v1/namespaces/${kube.env.namespace}/secrets`, {…});
 *     });
 *   });
 *
 * - One server per mocha process, started by the first test file that asks and stopped (by
 *   PID, its temp dir removed) when the process exits; each test file gets its own namespace.
 * - TLS on 127.0.0.1 with a CA made at start (openssl), RBAC authorization, a static admin
 *   token (system:masters) for the test itself, and for bpa a TokenRequest token of its
 *   ServiceAccount, granted exactly what deploy/rbac.yaml grants in the test's namespace: a
 *   call bpa's RBAC does not allow is 403 here as in a cluster.
 * - deploy/crds/ is installed; with `metal3: true` also metal3's BareMetalHost and HardwareData
 *   CRDs from ../shared/real-world/metal3/crds/ (beside the repository).
 * - `controllerManager: true` gives the file a second server of the process, one with
 *   kube-controller-manager (garbage collection, Job pods, PodDisruptionBudget status,
 *   namespace deletion; all its controllers but the node lifecycle one: with no kubelet, Nodes
 *   created by the API and their pods keep the status the test gives them); files without it
 *   never meet its controllers.
 * - Missing binaries or CRDs skip the file's tests with the reason printed.
 *
 * Kubernetes 1.20, unlike the clusters bpa meets, serves no policy/v1 Eviction (v1beta1 only),
 * drops a Job's ttlSecondsAfterFinished (feature gate off) and keeps evicted pods Terminating
 * until a kubelet (there is none) confirms.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { writeFile } from 'node:fs/promises';
import https from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Where scripts/kube-apiserver.sh leaves kube-apiserver, kube-controller-manager and etcd. */
export function kubeAssetsDir(): string {
  return process.env['BPA_KUBE_ASSETS'] || '/var/cache/bpa/kube/current/bin';
}

/** metal3's CRDs, kept beside the repository (shared/real-world/metal3/crds). */
export const METAL3_CRDS_DIR = path.join(ROOT, '..', 'shared', 'real-world', 'metal3', 'crds');

export interface KubeAssets {
  apiserver: string;
  controllerManager: string;
  etcd: string;
}

/** The binaries, or why they cannot be used. */
export function kubeAssets(): KubeAssets | { reason: string } {
  const dir = kubeAssetsDir();
  const assets = {
    apiserver: path.join(dir, 'kube-apiserver'),
    controllerManager: path.join(dir, 'kube-controller-manager'),
    etcd: path.join(dir, 'etcd'),
  };
  const missing = Object.values(assets).filter((f) => !existsSync(f));
  if (missing.length)
    return {
      reason: `no real kube-apiserver: ${missing.join(', ')} missing; build them with \`bash scripts/kube-apiserver.sh\` (root, Debian) or point BPA_KUBE_ASSETS at them`,
    };
  return assets;
}

export interface AdminResponse<T> {
  status: number;
  body: T;
}

export interface KubeServer {
  /** https://127.0.0.1:PORT */
  readonly url: string;
  /** The CA that signed the server's certificate (PEM). */
  readonly caPem: string;
  /** Temp dir holding the certificates, kubeconfigs, logs and etcd's data. */
  readonly dir: string;
  /** A kubeconfig file for the cluster admin (system:masters). */
  readonly adminKubeconfigPath: string;
  adminKubeConfig(namespace?: string): KubeConfig;
  /** A request as the admin; answers every status (no throw on 4xx/5xx), the body parsed. */
  admin<T = unknown>(method: string, apiPath: string, body?: unknown): Promise<AdminResponse<T>>;
  /** Installs metal3's CRDs (once); the reason when they are not available. */
  installMetal3(): Promise<string | undefined>;
  /** Starts kube-controller-manager (once). */
  startControllerManager(): Promise<void>;
  /** The server's own log, for a failing test's message. */
  logTail(lines?: number): string;
  stop(): Promise<void>;
}

interface Started {
  name: string;
  child: ChildProcess;
  log: string;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => {
        if (addr && typeof addr === 'object') resolve(addr.port);
        else reject(new Error('no port'));
      });
    });
  });
}

function openssl(dir: string, args: string[]): void {
  const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0)
    throw new Error(`openssl ${args.join(' ')}: ${r.error?.message ?? r.stderr.trim()}`);
}

/** A CA, the server's certificate for 127.0.0.1, and the service-account signing key. */
function makeCerts(dir: string): void {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const ca = ['-keyout', 'ca.key', '-out', 'ca.crt', '-days', '3', '-subj', '/CN=bpa-test-ca'];
  openssl(dir, ['req', '-x509', ...ec, ...ca]);
  const csr = ['-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=kube-apiserver'];
  openssl(dir, ['req', ...ec, ...csr]);
  writeFileSync(
    path.join(dir, 'server.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n',
  );
  const sign = ['-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-extfile', 'server.ext'];
  openssl(dir, ['x509', '-req', '-in', 'server.csr', ...sign, '-out', 'server.crt', '-days', '3']);
  openssl(dir, ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'sa.key']);
  openssl(dir, ['ec', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
}

function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Every process this module started, for the exit handler. */
const running = new Set<Started>();
const tempDirs = new Set<string>();

/** Whether a (killed) child is gone or a zombie: it no longer writes into the temp dir. */
function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

// The shared server lives as long as the mocha process: when it exits, whatever is still
// running is killed by PID and its data removed. Synchronous, as an exit handler must be.
process.on('exit', () => {
  for (const p of running) if (p.child.pid) p.child.kill('SIGKILL');
  const until = Date.now() + 3000;
  const wait = new Int32Array(new SharedArrayBuffer(4));
  for (const p of running) {
    while (p.child.pid && !gone(p.child.pid) && Date.now() < until) Atomics.wait(wait, 0, 0, 20);
  }
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

function startProcess(name: string, bin: string, args: string[], dir: string): Started {
  const log = path.join(dir, `${name}.log`);
  const fd = openSync(log, 'a');
  const child = spawn(bin, args, { stdio: ['ignore', fd, fd], cwd: dir });
  closeSync(fd);
  // Not holding the event loop: mocha ends when the tests do, and the exit handler stops it.
  child.unref();
  const started = { name, child, log };
  running.add(started);
  child.on('exit', () => running.delete(started));
  return started;
}

async function stopProcess(p: Started): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise<void>((r) => p.child.once('exit', () => r()));
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

function yamlDocuments(file: string): Record<string, unknown>[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as Record<string, unknown> | null)
    .filter((d): d is Record<string, unknown> => d !== null && typeof d === 'object');
}

export interface KubeconfigAccess {
  server: string;
  caPem: string;
  token: string;
  namespace?: string;
  name?: string;
}

/** A kubeconfig as kubectl writes one: CA data inline, a bearer token. */
export function kubeconfigYaml(a: KubeconfigAccess): string {
  const name = a.name ?? 'envtest';
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name,
        cluster: {
          server: a.server,
          'certificate-authority-data': Buffer.from(a.caPem).toString('base64'),
        },
      },
    ],
    users: [{ name, user: { token: a.token } }],
    contexts: [
      { name, context: { cluster: name, user: name, namespace: a.namespace ?? 'default' } },
    ],
    'current-context': name,
  });
}

function kubeConfigOf(a: KubeconfigAccess): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfigYaml(a));
  return kc;
}

interface CrdStatus {
  status?: { conditions?: { type: string; status: string }[] };
  spec?: {
    group: string;
    names: { plural: string };
    versions: { name: string; served: boolean }[];
  };
}

/** Starts etcd and kube-apiserver, waits for /readyz and installs deploy/crds/. */
export async function startKubeServer(assets: KubeAssets): Promise<KubeServer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bpa-kube-'));
  tempDirs.add(dir);
  const procs: Started[] = [];
  const stopAll = async (): Promise<void> => {
    for (const p of [...procs].reverse()) await stopProcess(p);
    rmSync(dir, { recursive: true, force: true });
    tempDirs.delete(dir);
  };
  try {
    makeCerts(dir);
    const caPem = readFileSync(path.join(dir, 'ca.crt'), 'utf8');
    const adminToken = randomBytes(24).toString('hex');
    await writeFile(path.join(dir, 'tokens.csv'), `${adminToken},admin,admin,system:masters\n`, {
      mode: 0o600,
    });
    const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    procs.push(
      startProcess(
        'etcd',
        assets.etcd,
        [
          `--data-dir=${path.join(dir, 'etcd')}`,
          `--listen-client-urls=${etcdUrl}`,
          `--advertise-client-urls=${etcdUrl}`,
          `--listen-peer-urls=${peerUrl}`,
          `--initial-advertise-peer-urls=${peerUrl}`,
          `--initial-cluster=default=${peerUrl}`,
          '--name=default',
          '--log-level=warn',
        ],
        dir,
      ),
    );
    const issuer = 'https://kubernetes.default.svc.cluster.local';
    procs.push(
      startProcess(
        'kube-apiserver',
        assets.apiserver,
        [
          `--etcd-servers=${etcdUrl}`,
          '--bind-address=127.0.0.1',
          '--advertise-address=127.0.0.1',
          `--secure-port=${apiPort}`,
          // 1.20 also listens on plain 127.0.0.1:8080 unless told not to.
          '--insecure-port=0',
          `--cert-dir=${dir}`,
          `--tls-cert-file=${path.join(dir, 'server.crt')}`,
          `--tls-private-key-file=${path.join(dir, 'server.key')}`,
          `--client-ca-file=${path.join(dir, 'ca.crt')}`,
          `--token-auth-file=${path.join(dir, 'tokens.csv')}`,
          '--authorization-mode=RBAC',
          `--service-account-issuer=${issuer}`,
          `--service-account-signing-key-file=${path.join(dir, 'sa.key')}`,
          `--service-account-key-file=${path.join(dir, 'sa.pub')}`,
          `--api-audiences=${issuer}`,
          '--service-cluster-ip-range=10.0.0.0/24',
          // Pods (a Job's) are admitted without a token Secret of their ServiceAccount, which
          // only kube-controller-manager's token controller would create.
          '--disable-admission-plugins=ServiceAccount',
          '--allow-privileged=true',
          '--endpoint-reconciler-type=none',
          '--profiling=false',
        ],
        dir,
      ),
    );
    const url = `https://127.0.0.1:${apiPort}`;
    const agent = new https.Agent({ ca: caPem, keepAlive: true, maxSockets: 16 });
    const admin = <T>(method: string, apiPath: string, body?: unknown): Promise<AdminResponse<T>> =>
      new Promise((resolve, reject) => {
        const data = body === undefined ? undefined : JSON.stringify(body);
        const req = https.request(
          `${url}${apiPath}`,
          {
            method,
            agent,
            headers: {
              authorization: `Bearer ${adminToken}`,
              accept: 'application/json',
              // A length always: Node frames no DELETE body by itself, and the server would
              // read the unframed body as the next request on the kept-alive connection.
              ...(data
                ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) }
                : {}),
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              let parsed: unknown = text;
              try {
                parsed = JSON.parse(text);
              } catch {
                // /readyz and friends answer text
              }
              resolve({ status: res.statusCode ?? 0, body: parsed as T });
            });
          },
        );
        req.on('error', reject);
        req.end(data);
      });
    const server = procs[1] as Started;
    const deadline = Date.now() + 90_000;
    for (;;) {
      for (const p of procs)
        if (p.child.exitCode !== null || p.child.signalCode !== null)
          throw new Error(
            `${p.name} exited (${p.child.exitCode ?? p.child.signalCode}):\n${tail(p.log)}`,
          );
      const ready = await admin('GET', '/readyz').catch(() => undefined);
      if (ready?.status === 200) break;
      if (Date.now() > deadline)
        throw new Error(`kube-apiserver not ready after 90 s:\n${tail(server.log)}`);
      await sleep(250);
    }

    const installCrds = async (files: string[]): Promise<void> => {
      const crds = files
        .flatMap(yamlDocuments)
        .filter((d) => d['kind'] === 'CustomResourceDefinition');
      for (const crd of crds) {
        const r = await admin(
          'POST',
          '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
          crd,
        );
        if (r.status !== 201 && r.status !== 409)
          throw new Error(
            `installing CRD ${String((crd['metadata'] as { name?: string }).name)}: ${r.status} ${JSON.stringify(r.body)}`,
          );
      }
      for (const crd of crds) {
        const name = String((crd['metadata'] as { name?: string }).name);
        const until = Date.now() + 30_000;
        for (;;) {
          const r = await admin<CrdStatus>(
            'GET',
            `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
          );
          const established = r.body.status?.conditions?.some(
            (c) => c.type === 'Established' && c.status === 'True',
          );
          const spec = r.body.spec;
          const version = spec?.versions.find((v) => v.served)?.name;
          // Established, and its REST endpoint answers (discovery lags the condition a little).
          if (established && spec && version) {
            const list = await admin(
              'GET',
              `/apis/${spec.group}/${version}/${spec.names.plural}?limit=1`,
            );
            if (list.status === 200) break;
          }
          if (Date.now() > until) throw new Error(`CRD ${name} not established after 30 s`);
          await sleep(100);
        }
      }
    };
    const crdDir = path.join(ROOT, 'deploy', 'crds');
    await installCrds(
      readdirSync(crdDir)
        .filter((f) => f.endsWith('.yaml'))
        .map((f) => path.join(crdDir, f)),
    );

    const adminKubeconfigPath = path.join(dir, 'admin.kubeconfig');
    await writeFile(
      adminKubeconfigPath,
      kubeconfigYaml({ server: url, caPem, token: adminToken }),
      {
        mode: 0o600,
      },
    );
    let metal3: Promise<string | undefined> | undefined;
    let kcm: Started | undefined;
    return {
      url,
      caPem,
      dir,
      adminKubeconfigPath,
      adminKubeConfig: (namespace) =>
        kubeConfigOf({ server: url, caPem, token: adminToken, namespace }),
      admin,
      installMetal3(): Promise<string | undefined> {
        metal3 ??= (async () => {
          const files = existsSync(METAL3_CRDS_DIR)
            ? readdirSync(METAL3_CRDS_DIR).filter((f) => f.endsWith('.yaml'))
            : [];
          if (!files.length) return `metal3's CRDs not found in ${METAL3_CRDS_DIR}`;
          await installCrds(files.map((f) => path.join(METAL3_CRDS_DIR, f)));
          return undefined;
        })();
        return metal3;
      },
      async startControllerManager(): Promise<void> {
        if (kcm) return;
        kcm = startProcess(
          'kube-controller-manager',
          assets.controllerManager,
          [
            `--kubeconfig=${adminKubeconfigPath}`,
            '--leader-elect=false',
            '--port=0',
            '--secure-port=0',
            `--service-account-private-key-file=${path.join(dir, 'sa.key')}`,
            `--root-ca-file=${path.join(dir, 'ca.crt')}`,
            '--use-service-account-credentials=false',
            // No kubelet posts node status here: the node lifecycle controller would mark every
            // Node's pods NotReady (a PodDisruptionBudget then counts none healthy) and taint
            // and evict them after its grace periods, under a test's feet.
            '--controllers=*,-nodelifecycle',
          ],
          dir,
        );
        procs.push(kcm);
        await sleep(1000);
        if (kcm.child.exitCode !== null)
          throw new Error(`kube-controller-manager exited:\n${tail(kcm.log)}`);
      },
      logTail: (lines) => tail(server.log, lines),
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/**
 * The process's servers, started on first use: one without kube-controller-manager and, for
 * the files that ask for it, one with it. Kept apart because its controllers act on every
 * namespace: a Job controller making pods, a garbage collector finishing deletions, would
 * change what a file that writes those parts itself sees.
 */
const shared = new Map<boolean, Promise<KubeServer>>();

/** The process's one server (with kube-controller-manager when asked), started on first use. */
export function sharedKubeServer(
  assets: KubeAssets,
  controllerManager = false,
): Promise<KubeServer> {
  let s = shared.get(controllerManager);
  if (!s) {
    s = (async (): Promise<KubeServer> => {
      let server: KubeServer;
      try {
        server = await startKubeServer(assets);
      } catch (first: unknown) {
        // Once more: a free port found can be taken by another process before etcd or
        // kube-apiserver binds it.
        console.log(`    kube-apiserver failed to start, trying again: ${String(first)}`);
        server = await startKubeServer(assets);
      }
      if (controllerManager) await server.startControllerManager();
      return server;
    })().catch((err: unknown) => {
      shared.delete(controllerManager);
      throw err;
    });
    shared.set(controllerManager, s);
  }
  return s;
}

/** Stops the shared servers now (the exit handler does it otherwise). */
export async function stopSharedKubeServer(): Promise<void> {
  const all = [...shared.values()];
  shared.clear();
  for (const s of all) await (await s).stop();
}

export interface KubeTestEnv {
  server: KubeServer;
  /** The test file's own namespace, holding bpa's ServiceAccount and Role. */
  namespace: string;
  /** bpa's ServiceAccount (deploy/serviceaccount.yaml) in `namespace`. */
  serviceAccount: string;
  /** A kubeconfig file with bpa's ServiceAccount token (TokenRequest), context namespace set. */
  bpaKubeconfigPath: string;
  bpaToken: string;
  bpaKubeConfig(): KubeConfig;
  adminKubeConfig(): KubeConfig;
  admin<T = unknown>(method: string, apiPath: string, body?: unknown): Promise<AdminResponse<T>>;
  /** Deletes the namespace and the cluster-scoped bindings made for it. */
  dispose(): Promise<void>;
}

/**
 * deploy/serviceaccount.yaml and deploy/rbac.yaml moved from bpa-system into `namespace`.
 * Cluster-scoped bindings get the namespace in their name, so test files do not share one.
 */
export function bpaRbacObjects(namespace: string): Record<string, unknown>[] {
  const docs = [
    ...yamlDocuments(path.join(ROOT, 'deploy', 'serviceaccount.yaml')),
    ...yamlDocuments(path.join(ROOT, 'deploy', 'rbac.yaml')),
  ];
  return docs.map((doc) => {
    const o = structuredClone(doc) as {
      kind: string;
      metadata: { name: string; namespace?: string };
      subjects?: { kind: string; namespace?: string }[];
    };
    if (o.metadata.namespace !== undefined) o.metadata.namespace = namespace;
    if (o.kind === 'ClusterRoleBinding') o.metadata.name = `${o.metadata.name}-${namespace}`;
    for (const s of o.subjects ?? []) if (s.kind === 'ServiceAccount') s.namespace = namespace;
    return o as unknown as Record<string, unknown>;
  });
}

const PLURALS: Record<string, string> = {
  ServiceAccount: 'serviceaccounts',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  Role: 'roles',
  RoleBinding: 'rolebindings',
};

function collection(o: Record<string, unknown>): string {
  const apiVersion = String(o['apiVersion']);
  const kind = String(o['kind']);
  const plural = PLURALS[kind];
  if (!plural) throw new Error(`no collection known for ${kind}`);
  const ns = (o['metadata'] as { namespace?: string }).namespace;
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  return ns ? `${base}/namespaces/${ns}/${plural}` : `${base}/${plural}`;
}

/** A namespace with bpa's ServiceAccount and RBAC, and a kubeconfig for that account. */
export async function bpaNamespace(server: KubeServer, prefix: string): Promise<KubeTestEnv> {
  const namespace = `${prefix}-${randomBytes(3).toString('hex')}`;
  const must = async (method: string, p: string, body: unknown, ok: number[]): Promise<unknown> => {
    const r = await server.admin(method, p, body);
    if (!ok.includes(r.status))
      throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  await must(
    'POST',
    '/api/v1/namespaces',
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
    [201],
  );
  let serviceAccount = 'bpa';
  const bindings: string[] = [];
  for (const o of bpaRbacObjects(namespace)) {
    const name = String((o['metadata'] as { name: string }).name);
    if (o['kind'] === 'ServiceAccount') serviceAccount = name;
    if (o['kind'] === 'ClusterRoleBinding') bindings.push(`${collection(o)}/${name}`);
    // The ClusterRole is the same for every namespace: the first file creates it.
    await must('POST', collection(o), o, o['kind'] === 'ClusterRole' ? [201, 409] : [201]);
  }
  const tr = (await must(
    'POST',
    `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`,
    {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 86400 },
    },
    [201],
  )) as { status: { token: string } };
  const bpaToken = tr.status.token;
  const access = {
    server: server.url,
    caPem: server.caPem,
    token: bpaToken,
    namespace,
    name: 'bpa',
  };
  const bpaKubeconfigPath = path.join(server.dir, `${namespace}.bpa.kubeconfig`);
  await writeFile(bpaKubeconfigPath, kubeconfigYaml(access), { mode: 0o600 });
  return {
    server,
    namespace,
    serviceAccount,
    bpaKubeconfigPath,
    bpaToken,
    bpaKubeConfig: () => kubeConfigOf(access),
    adminKubeConfig: () => server.adminKubeConfig(namespace),
    admin: (method, p, body) => server.admin(method, p, body),
    async dispose(): Promise<void> {
      // Without kube-controller-manager the namespace stays Terminating; the server is per
      // process and goes with it, so this only keeps the next file's lists clean.
      await server.admin('DELETE', `/api/v1/namespaces/${namespace}`);
      for (const b of bindings) await server.admin('DELETE', b);
    },
  };
}

export interface UseRealKubeOptions {
  /** Prefix of the test file's namespace. */
  name: string;
  /** Install metal3's BareMetalHost and HardwareData CRDs; skip when they are not found. */
  metal3?: boolean;
  controllerManager?: boolean;
}

/**
 * Inside a describe: a real API server and a namespace of the file's own, ready in `before`;
 * skipped, saying why, without the binaries (or metal3's CRDs when asked for).
 */
export function useRealKube(opts: UseRealKubeOptions): { readonly env: KubeTestEnv } {
  let env: KubeTestEnv | undefined;
  before(async function () {
    this.timeout(180_000);
    const assets = kubeAssets();
    if ('reason' in assets) {
      console.log(`    skipped: ${assets.reason}`);
      this.skip();
    }
    const server = await sharedKubeServer(assets, opts.controllerManager === true);
    if (opts.metal3) {
      const reason = await server.installMetal3();
      if (reason) {
        console.log(`    skipped: ${reason}`);
        this.skip();
      }
    }
    env = await bpaNamespace(server, opts.name);
  });
  after(async function () {
    await env?.dispose();
    env = undefined;
  });
  return {
    get env(): KubeTestEnv {
      if (!env) throw new Error('useRealKube: the server is not started (used outside a test?)');
      return env;
    },
  };
}

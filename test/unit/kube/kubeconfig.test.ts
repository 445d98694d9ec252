import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { loadKubeConfig } from '../../../src/kube/kubeconfig.js';

describe('kube/kubeconfig: the API requests of one kubeconfig', () => {
  let server: http.Server;
  let dir: string;
  let connections = 0;
  const seen: Array<string | undefined> = [];

  before(async () => {
    server = http.createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'x.io/v1', kind: 'X', metadata: { name: 'a' } }));
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    dir = await mkdtemp(join(tmpdir(), 'bpa-kubeconfig-'));
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  it('go over one kept-alive connection, each with its credentials, not a connection (and TLS handshake) each', async () => {
    const { port } = server.address() as { port: number };
    const file = join(dir, 'kubeconfig');
    await writeFile(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        `- {name: c, cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}}`,
        'users:',
        '- {name: u, user: {token: secret-token}}',
        'contexts:',
        '- {name: x, context: {cluster: c, user: u}}',
        'current-context: x',
        '',
      ].join('\n'),
    );
    const kc = loadKubeConfig({ file, env: {}, what: 'the test' });
    assert.ok(kc);
    const api = kc.makeApiClient(CustomObjectsApi);
    for (let i = 0; i < 10; i++)
      await api.getNamespacedCustomObject({
        group: 'x.io',
        version: 'v1',
        namespace: 'n',
        plural: 'xs',
        name: 'a',
      });
    assert.equal(seen.length, 10);
    assert.ok(seen.every((a) => a === 'Bearer secret-token'));
    assert.equal(connections, 1);
  });
});

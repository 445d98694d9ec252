import assert from 'node:assert/strict';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireLoopbackOnly } from '../../netns/loopback-only.js';
import { spawnBpa, waitFor } from '../apply/harness.js';
import { runCli } from '../../unit/validate/run-cli.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('-o on reconcile and serve', function () {
  this.timeout(60_000);
  // serve reconciles the example's inventory: its hosts' addresses must be unreachable.
  requireLoopbackOnly();
  let tmp = '';
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-output-'));
  });
  after(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('bpa reconcile --once -o json: stdout is one JSON document', async () => {
    const site = join(tmp, 'site');
    await cp(join(ROOT, 'sites', 'example', 'inventory'), join(site, 'inventory'), {
      recursive: true,
    });
    // Hosts and no cluster: a site only with a Site document (else SITE_NO_CLUSTERS).
    await writeFile(
      join(site, 'site.yaml'),
      'apiVersion: bpa.akraino.org/v1alpha1\nkind: Site\nmetadata: {name: s}\nspec: {}\n',
    );
    const r = await runCli(['reconcile', '--once', '-o', 'json', '--state', join(tmp, 's'), site]);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout) as { changes: boolean; problems: unknown[]; hash: string };
    assert.equal(doc.changes, false);
    assert.deepEqual(doc.problems, []);
    assert.match(doc.hash, /^[0-9a-f]{64}$/);
  });

  it('bpa serve -o text logs lines for a person; the default is JSON lines', async () => {
    const site = join(tmp, 'watched');
    await cp(join(ROOT, 'sites', 'example', 'inventory'), join(site, 'inventory'), {
      recursive: true,
    });
    for (const [output, line] of [
      ['text', /^bpa listening .*url=http:\/\/127\.0\.0\.1:\d+/m],
      ['json', /^\{"level":30,.*"url":"http:\/\/127\.0\.0\.1:\d+"/m],
    ] as const) {
      const child = spawnBpa([
        'serve',
        '--watch',
        site,
        '--state',
        join(tmp, `state-${output}`),
        '--listen',
        '127.0.0.1:0',
        '-o',
        output,
      ]);
      let stderr = '';
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      try {
        await waitFor(`serve -o ${output} to listen`, async () =>
          line.test(stderr) ? true : undefined,
        );
      } finally {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
    }
  });
});

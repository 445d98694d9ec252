import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGitServer, type GitServer } from '../../fakes/git-server.js';
import { readTree } from '../../fakes/tree.js';
import { canRunLab, startLab, type Lab } from '../../lab/lab.js';
import {
  installerPid,
  journal,
  kill,
  labArgs,
  labReady,
  pidAlive,
  spawnBpa,
  waitFor,
} from '../apply/harness.js';
import { writeLabSite } from '../apply/lab-site.js';

/** SIGTERM to `bpa serve` while the real installer runs, then a new start. */
describe('bpa serve stopped during the installer', function () {
  this.timeout(300_000);
  let lab: Lab | undefined;
  let git: GitServer;
  let tmp: string;
  let repo: string;
  let state: string;
  let child: ChildProcess | undefined;
  let stderr = '';

  const start = (env: Record<string, string> = {}): ChildProcess => {
    stderr = '';
    const c = spawnBpa(
      [
        'serve',
        '--repo',
        repo,
        '--path',
        'site',
        '--listen',
        '127.0.0.1:0',
        '--interval',
        '1h',
        ...labArgs(lab!, state),
      ],
      env,
    );
    c.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    return c;
  };

  before(async function () {
    if (!labReady(canRunLab({ isolatedPackages: true }))) this.skip();
    lab = await startLab({ hosts: 2, isolatedPackages: true });
    tmp = await mkdtemp(join(tmpdir(), 'bpa-serve-stop-'));
    state = join(tmp, 'state');
    git = await startGitServer();
    const site = await writeLabSite(
      lab.hosts,
      { cluster: 'lab', nodes: [{ name: 'master-1', roles: ['master'], host: 0 }] },
      join(tmp, 'site'),
    );
    repo = await git.createRepo('site', { files: await readTree(site, 'site') });
  });
  after(async () => {
    if (child) await kill(child);
    await git?.stop();
    await lab?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('SIGTERM: the installer is stopped, its step journaled as interrupted, nothing reported failed', async () => {
    const commits = (await git.log('site', 'main')).length;
    // The reference installer, made to hang before its playbook.
    child = start({ BPA_REFERENCE_SLEEP: '600' });
    const pid = await waitFor('the installer to start', () => installerPid(state, 'lab'), 120_000);
    const exited = new Promise<number | null>((r) => child?.once('exit', r));
    child.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
    child = undefined;
    assert.ok(!pidAlive(pid), 'the installer was stopped with bpa');
    assert.equal((await git.log('site', 'main')).length, commits, 'no status commit');
    const installer = (await journal(state, 'lab')).find((s) => s.step === 'installer');
    assert.equal(installer?.status, 'running');
    assert.equal(installer?.attempt, 1);
    assert.match(stderr, /reconcile interrupted: the next start resumes it/);
  });

  it('the next start resumes the installer step and reports the cluster Ready', async () => {
    child = start();
    await waitFor(
      'the status commit',
      async () =>
        (await git.log('site', 'main'))[0]?.subject.includes('provision-cluster')
          ? true
          : undefined,
      180_000,
      250,
    );
    const steps = await journal(state, 'lab');
    const installer = steps.find((s) => s.step === 'installer');
    assert.equal(installer?.status, 'done');
    assert.equal(installer?.attempt, 2, 'resumed, once');
    assert.equal(steps.find((s) => s.step === 'ssh-access')?.attempt, 1, 'not repeated');
    assert.match(stderr, /"resumed":true/);
    const report = (await git.readFile('site', 'main', 'site/status/lab.yaml')) ?? '';
    assert.match(report, /phase: Ready/);
    for (const c of await git.log('site', 'main')) assert.doesNotMatch(c.message, /failed/);
    const exited = new Promise<number | null>((r) => child?.once('exit', r));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    child = undefined;
  });
});

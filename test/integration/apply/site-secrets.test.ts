import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canRunLab, startLab, type Lab } from '../../lab/lab.js';
import { ageKeygen, ageMissing, secretDoc, sopsEncrypt, type AgeKey } from '../../fakes/sops.js';
import { bpa, journal, labArgs, labReady, REFERENCE } from './harness.js';
import { writeLabSite } from './lab-site.js';

/**
 * Site secrets end to end on a lab host that accepts only a password login: the password, the
 * registry credentials and installer variables come from SOPS files of the site (made here,
 * with age keys made here), bpa installs its key with the password, writes the credentials
 * into containerd's hosts.toml and the variables into a 0600 file for the installer run only;
 * a file for a key bpa lacks and a tampered file stop the run with their file:line; a
 * re-encryption of the same values plans nothing, a changed value re-writes what uses it.
 * No value ever reaches bpa's output, its state directory, or hosts.ini.
 */
describe('site secrets (SOPS) on lab hosts: bootstrap login, registry credentials, installer variables', function () {
  this.timeout(600_000);
  let lab: Lab | undefined;
  let tmp = '';
  let bpaKey: AgeKey;
  let otherKey: AgeKey;
  const VAULT = 'vault-pass-4711-xyz';
  const REG_PASS = 'registry-pass-0815-abc';

  before(async function () {
    const why = ageMissing();
    if (why) {
      console.log(`    skipped: ${why}`);
      this.skip();
    }
    if (!labReady(canRunLab({ isolatedPackages: true }))) this.skip();
    // No key of bpa's on the host: only the password user's login works.
    lab = await startLab({ hosts: 1, authorizeKey: false, isolatedPackages: true });
    // The default login of a fresh node: a user with sudo (in the host's own /etc).
    // lab.exec rejects unless the command exits 0.
    await lab.exec('h1', [
      'sh',
      '-c',
      `echo '${lab.user} ALL=(ALL) NOPASSWD: ALL' > /etc/sudoers.d/bpa-lab && chmod 0440 /etc/sudoers.d/bpa-lab`,
    ]);
    tmp = await mkdtemp(join(tmpdir(), 'bpa-site-secrets-'));
    bpaKey = ageKeygen();
    otherKey = ageKeygen();
  });
  after(async () => {
    await lab?.stop();
    if (tmp && !process.env['BPA_TEST_KEEP']) await rm(tmp, { recursive: true, force: true });
  });

  it('decrypts, verifies and uses the secrets; refuses wrong keys and tampering; plans rotation right', async () => {
    if (!lab) return;
    const regex = { encryptedRegex: '^(data|stringData)$' };
    const site = await writeLabSite(
      lab.hosts,
      {
        cluster: 'sec',
        nodes: [{ name: 'master-1', roles: ['master'], host: 0 }],
        extraSite: [
          'apiVersion: bpa.akraino.org/v1alpha1',
          'kind: Site',
          'metadata:',
          '  name: sec',
          'spec:',
          '  ssh:',
          '    bootstrapCredentials: {secret: node-login}',
          '  registryMirror:',
          '    credentials: {secret: registry-login}',
          '  installer:',
          '    variables: {secret: installer-vars}',
          '',
        ].join('\n'),
      },
      join(tmp, 'site'),
    );
    await mkdir(join(site, 'secrets'));
    const write = (name: string, text: string): Promise<void> =>
      writeFile(join(site, 'secrets', `${name}.yaml`), text);
    const login = sopsEncrypt(
      secretDoc('node-login', { username: lab.user, password: lab.password }),
      [bpaKey.recipient],
      regex,
    );
    await write('node-login', login.text);
    const registry = sopsEncrypt(
      secretDoc('registry-login', { username: 'puller', password: REG_PASS }),
      [bpaKey.recipient],
      regex,
    );
    await write('registry-login', registry.text);
    // A JSON-format SOPS file: read as *.sops.json.
    const vars = sopsEncrypt(
      secretDoc('installer-vars', { vault_password: VAULT }),
      [bpaKey.recipient],
      {
        ...regex,
        json: true,
      },
    );
    await writeFile(join(site, 'secrets', 'installer-vars.sops.json'), vars.text);

    // The installer: records what it was given, prints a variable, then does the real work.
    const proof = join(tmp, 'proof');
    await mkdir(proof);
    const installer = join(tmp, 'installer.sh');
    await writeFile(
      installer,
      `#!/bin/sh\nstat -c %a "$1" > ${proof}/mode\ncp "$1" ${proof}/vars.json\necho "vault is $(cat "$1")"\n[ "$BPA_EXTRA_VARS" = "$1" ] || exit 9\n[ -e ${proof}/fail ] && exit 3\nshift\nexec ${REFERENCE} cluster "$@"\n`,
      { mode: 0o755 },
    );
    const keyFile = join(tmp, 'bpa.agekey');
    await writeFile(keyFile, `# created by the test\n${bpaKey.identity}\n`, { mode: 0o600 });
    const otherFile = join(tmp, 'other.agekey');
    await writeFile(otherFile, `${otherKey.identity}\n`, { mode: 0o600 });
    const state = join(tmp, 'state');
    const args = (cmd: string[], keys: string[]): string[] => [
      ...cmd,
      site,
      ...labArgs(lab!, state, [
        '--ssh-user',
        lab!.user,
        '--registry-url',
        `http://${lab!.gatewayIp}:5000`,
        '--installer-command',
        `${installer} {extraVars} {clusterDir} {inventory}`,
        ...keys,
      ]).filter(
        (a, i, all) =>
          !['--ssh-key', '--log-level'].includes(a) &&
          !['--ssh-key', '--log-level'].includes(all[i - 1] ?? '') &&
          // bpa plan has no keys: it never decrypts.
          !(cmd[0] === 'plan' && a.startsWith('--sops')),
      ),
    ];
    const reconcile = (keys: string[]): ReturnType<typeof bpa> =>
      bpa(args(['reconcile', '--once'], keys));
    const lineOf = (text: string, re: RegExp): number =>
      text.split('\n').findIndex((l) => re.test(l)) + 1;
    const noValue = (text: string, where: string): void => {
      for (const v of [lab!.password, REG_PASS, VAULT])
        assert.ok(!text.includes(v), `${where} holds no secret value`);
    };

    // Without keys: the structure is checked, and it is fine.
    const validate = await bpa(['validate', site]);
    assert.equal(validate.code, 0, validate.stdout + validate.stderr);

    // A key bpa has none of: refused with the file and the line of its sops section.
    const wrong = await reconcile(['--sops-age-key-file', otherFile]);
    assert.equal(wrong.code, 1, wrong.stdout + wrong.stderr);
    assert.match(
      wrong.stdout,
      new RegExp(
        `secrets/node-login\\.yaml:${lineOf(login.text, /^sops:/)}:1: error SOPS_NO_KEY: encrypted for ${bpaKey.recipient}`,
      ),
    );
    noValue(wrong.stdout + wrong.stderr, 'the output');
    assert.deepEqual(await readdir(join(state, 'clusters')).catch(() => []), [], 'nothing applied');

    // A key file others may read is refused.
    await chmod(otherFile, 0o644);
    const open = await reconcile(['--sops-age-key-file', otherFile]);
    assert.match(open.stdout + open.stderr, /SOPS_KEY_UNREADABLE/);

    // One flipped character of an encrypted value: refused at its line, before anything runs.
    const pwLine = lineOf(registry.text, /^\s+password: ENC/);
    const c = /password: ENC\[AES256_GCM,data:(.)/.exec(registry.text)![1]!;
    await write(
      'registry-login',
      registry.text.replace(
        `password: ENC[AES256_GCM,data:${c}`,
        `password: ENC[AES256_GCM,data:${c === 'A' ? 'B' : 'A'}`,
      ),
    );
    const tampered = await reconcile(['--sops-age-key-file', keyFile]);
    assert.equal(tampered.code, 1);
    assert.match(
      tampered.stdout,
      new RegExp(
        `secrets/registry-login\\.yaml:${pwLine}:1: error SOPS_TAMPERED: stringData\\.password`,
      ),
    );
    // A field left unencrypted (type) edited: the MAC.
    await write('registry-login', registry.text.replace('type: Opaque', 'type: Other'));
    const renamed = await reconcile(['--sops-age-key-file', keyFile]);
    assert.match(renamed.stdout, /secrets\/registry-login\.yaml:\d+:1: error SOPS_MAC_MISMATCH/);
    assert.deepEqual(await readdir(join(state, 'clusters')).catch(() => []), [], 'nothing applied');
    await write('registry-login', registry.text);

    // The right key: bpa logs in with the password once, installs its key, and goes on with it.
    const ok = await reconcile(['--sops-age-key-file', keyFile]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stderr, /bpa's key installed with the bootstrap credentials/);
    const steps = await journal(state, 'sec');
    assert.equal(steps.find((s) => s.step === 'ssh-access')?.status, 'done');
    const authorized = await lab.exec('h1', ['cat', `/home/${lab.user}/.ssh/authorized_keys`]);
    assert.equal(
      authorized.stdout
        .trim()
        .split('\n')
        .filter((l) => l.endsWith(' bpa')).length,
      1,
    );
    // Installer variables: a 0600 file for the run, gone after it.
    assert.equal((await readFile(join(proof, 'mode'), 'utf8')).trim(), '600');
    assert.deepEqual(JSON.parse(await readFile(join(proof, 'vars.json'), 'utf8')), {
      vault_password: VAULT,
    });
    const clusterDir = join(state, 'clusters', 'sec');
    assert.ok(
      !(await readdir(clusterDir)).includes('bpa-extra-vars.json'),
      'removed after the run',
    );
    // Registry credentials: an Authorization header, root-only.
    const toml = '/etc/containerd/certs.d/docker.io/hosts.toml';
    const written = (await lab.exec('h1', ['cat', toml])).stdout;
    assert.match(
      written,
      new RegExp(`authorization = "Basic ${Buffer.from(`puller:${REG_PASS}`).toString('base64')}"`),
    );
    assert.equal((await lab.exec('h1', ['stat', '-c', '%a', toml])).stdout.trim(), '600');
    // Nothing of it in bpa's output, its state directory (logs, journal, applied, hosts.ini).
    noValue(ok.stdout + ok.stderr, 'the output');
    for (const f of await walk(state)) noValue(await readFile(f, 'latin1'), f);
    const json = await bpa([
      ...args(['reconcile', '--once'], ['--sops-age-key-file', keyFile]),
      '-o',
      'json',
    ]);
    noValue(json.stdout + json.stderr, '-o json');

    // Re-encrypted for a second recipient, the values as they were (sops updatekeys keeps the
    // data key): nothing to plan, and the plan hash is the same.
    const before = await bpa(args(['plan', '-o', 'json'], []));
    await write(
      'registry-login',
      sopsEncrypt(
        secretDoc('registry-login', { username: 'puller', password: REG_PASS }),
        [bpaKey.recipient, otherKey.recipient],
        {
          ...regex,
          dataKey: registry.dataKey,
        },
      )
        .text.replace(/password: ENC\[[^\]]+\]/, /password: ENC\[[^\]]+\]/.exec(registry.text)![0])
        .replace(/username: ENC\[[^\]]+\]/, /username: ENC\[[^\]]+\]/.exec(registry.text)![0]),
    );
    const samePlan = await bpa(args(['plan'], []));
    assert.equal(samePlan.code, 0, samePlan.stdout + samePlan.stderr);
    assert.doesNotMatch(samePlan.stdout, /secret/);
    const after = await bpa(args(['plan', '-o', 'json'], []));
    assert.equal(
      (JSON.parse(after.stdout) as { hash: string }).hash,
      (JSON.parse(before.stdout) as { hash: string }).hash,
    );

    // A rotated data key (every ciphertext new), same values: with the keys, nothing to do.
    await write(
      'registry-login',
      sopsEncrypt(
        secretDoc('registry-login', { username: 'puller', password: REG_PASS }),
        [bpaKey.recipient, otherKey.recipient],
        regex,
      ).text,
    );
    const rotated = await reconcile(['--sops-age-key-file', keyFile]);
    assert.equal(rotated.code, 0, rotated.stdout + rotated.stderr);
    assert.doesNotMatch(rotated.stdout, /configure-registry/);

    // A changed value: the plan says so, and the action using it runs.
    const NEW_PASS = 'registry-pass-2-def';
    await write(
      'registry-login',
      sopsEncrypt(
        secretDoc('registry-login', { username: 'puller', password: NEW_PASS }),
        [bpaKey.recipient],
        regex,
      ).text,
    );
    const changed = await bpa(args(['plan'], []));
    assert.equal(changed.code, 2, changed.stdout + changed.stderr);
    assert.match(changed.stdout, /^~ secret registry-login \(changed\)$/m);
    assert.match(changed.stdout, /configure-registry/);
    assert.ok(!changed.stdout.includes(NEW_PASS));
    const changedJson = await bpa(args(['plan', '-o', 'json'], []));
    assert.deepEqual(
      (JSON.parse(changedJson.stdout) as { changedSecrets?: string[] }).changedSecrets,
      ['registry-login'],
    );
    noValue(changedJson.stdout, 'the plan as JSON');
    const applied = await reconcile(['--sops-age-key-file', keyFile]);
    assert.equal(applied.code, 0, applied.stdout + applied.stderr);
    assert.match(
      (await lab.exec('h1', ['cat', toml])).stdout,
      new RegExp(`Basic ${Buffer.from(`puller:${NEW_PASS}`).toString('base64')}`),
    );
    assert.ok((await stat(join(state, 'secrets.key'))).mode % 0o1000 === 0o600);

    // A changed installer variable: reconfigure-cluster runs the cluster path again, the
    // installer sees the new value in a 0600 file that is gone afterwards; then nothing is due.
    const NEW_VAULT = 'vault-pass-2-ghi';
    await writeFile(
      join(site, 'secrets', 'installer-vars.sops.json'),
      sopsEncrypt(secretDoc('installer-vars', { vault_password: NEW_VAULT }), [bpaKey.recipient], {
        ...regex,
        json: true,
      }).text,
    );
    await rm(join(proof, 'vars.json'));
    const varsPlan = await bpa(args(['plan'], []));
    assert.equal(varsPlan.code, 2, varsPlan.stdout + varsPlan.stderr);
    assert.match(varsPlan.stdout, /^~ secret installer-vars \(changed\)$/m);
    assert.match(
      varsPlan.stdout,
      /1\. reconfigure-cluster installer variables changed \(Secret installer-vars\)/,
    );
    const varsJson = await bpa(args(['plan', '-o', 'json'], []));
    const kinds = (
      JSON.parse(varsJson.stdout) as { clusters: Array<{ actions: Array<{ kind: string }> }> }
    ).clusters.flatMap((cl) => cl.actions.map((a) => a.kind));
    assert.deepEqual(kinds, ['reconfigure-cluster']);
    // A failed installer run leaves it due: planned again, and no extra-vars file behind.
    await writeFile(join(proof, 'fail'), '');
    const failed = await reconcile(['--sops-age-key-file', keyFile]);
    assert.notEqual(failed.code, 0, failed.stdout + failed.stderr);
    assert.match(failed.stdout + failed.stderr, /INSTALLER_FAILED/);
    assert.ok(
      !(await readdir(clusterDir)).includes('bpa-extra-vars.json'),
      'removed after a failure',
    );
    assert.match((await bpa(args(['plan'], []))).stdout, /reconfigure-cluster/, 'planned again');
    await rm(join(proof, 'fail'));
    const markerBefore = (await lab.exec('h1', ['cat', '/etc/bpa-reference/roles'])).stdout;
    const reconfigured = await reconcile(['--sops-age-key-file', keyFile]);
    assert.equal(reconfigured.code, 0, reconfigured.stdout + reconfigured.stderr);
    assert.match(reconfigured.stdout, /reconfigure-cluster/);
    assert.deepEqual(JSON.parse(await readFile(join(proof, 'vars.json'), 'utf8')), {
      vault_password: NEW_VAULT,
    });
    assert.equal((await readFile(join(proof, 'mode'), 'utf8')).trim(), '600');
    assert.ok(!(await readdir(clusterDir)).includes('bpa-extra-vars.json'), 'removed again');
    // The reference installer's marker carries the time of its run: written anew.
    const markerAfter = (await lab.exec('h1', ['cat', '/etc/bpa-reference/roles'])).stdout;
    assert.match(markerAfter, /sec/);
    assert.notEqual(markerAfter, markerBefore, 'the cluster path ran over the node again');
    for (const text of [
      varsPlan.stdout,
      varsJson.stdout,
      failed.stdout + failed.stderr,
      reconfigured.stdout + reconfigured.stderr,
    ])
      assert.ok(!text.includes(NEW_VAULT), 'no value in the output');
    for (const f of await walk(state))
      assert.ok(!(await readFile(f, 'latin1')).includes(NEW_VAULT), `${f} holds no value`);
    const settled = await reconcile(['--sops-age-key-file', keyFile]);
    assert.equal(settled.code, 0, settled.stdout + settled.stderr);
    assert.doesNotMatch(settled.stdout, /reconfigure-cluster/, 'applied: nothing left');
  });
});

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { runCli, validateJson } from './run-cli.js';
import { BASE_SITE, removeSite, writeSite } from './site-fixture.js';

const HOSTS = `apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata: {name: node-1, namespace: metal3}
spec: {online: true, bootMACAddress: "52:54:00:aa:00:01"}
`;
const SITE = `apiVersion: bpa.akraino.org/v1alpha1
kind: Site
metadata: {name: lab}
spec: {}
`;

/** `bpa validate` of a site written from `files`: its exit code and its error codes. */
async function validate(
  files: Record<string, string>,
  path = '',
): Promise<{ code: number; errors: string[]; messages: string[]; dir: string }> {
  const dir = await writeSite(files);
  try {
    const r = await validateJson(join(dir, path));
    const errors = r.problems.filter((p) => p.severity === 'error');
    return {
      code: r.code,
      errors: errors.map((p) => p.code),
      messages: errors.map((p) => p.message),
      dir,
    };
  } finally {
    await removeSite(dir);
  }
}

describe('bpa validate: a site that defines nothing is an error naming its path', () => {
  const empty: Array<[string, Record<string, string>]> = [
    ['an empty directory', {}],
    ['only status/ (an emptied repository, the reports left)', { 'status/site.yaml': SITE }],
    ['only ignored files', { '.bpaignore': '*.yaml\n', 'site.yaml': SITE }],
    ['files of comments and empty documents', { 'a.yaml': '# nothing\n', 'b.yml': '---\n---\n' }],
    ['files that are not YAML', { 'README.md': '# site\n', 'hosts.json': '{}' }],
  ];
  for (const [name, files] of empty) {
    it(`${name}: SITE_EMPTY, exit 1`, async () => {
      const r = await validate(files);
      assert.equal(r.code, 1);
      assert.deepEqual(r.errors, ['SITE_EMPTY']);
      assert.match(r.messages[0] ?? '', new RegExp(`the site ${r.dir} holds no YAML documents`));
    });
  }

  it('a directory of hosts only (--path at the inventory): SITE_NO_CLUSTERS, exit 1', async () => {
    const r = await validate({ 'inventory/hosts.yaml': HOSTS }, 'inventory');
    assert.equal(r.code, 1);
    assert.deepEqual(r.errors, ['SITE_NO_CLUSTERS']);
    assert.match(
      r.messages[0] ?? '',
      new RegExp(`the site ${r.dir}/inventory has hosts but no cluster`),
    );
  });

  it('hosts and a Site document, no cluster yet: valid, the site says it means it', async () => {
    const r = await validate({ 'site.yaml': SITE, 'hosts.yaml': HOSTS });
    assert.equal(r.code, 0, r.messages.join('\n'));
  });

  it('one file of hosts given on its own is checked as it is', async () => {
    const r = await validate({ 'hosts.yaml': HOSTS }, 'hosts.yaml');
    assert.equal(r.code, 0, r.messages.join('\n'));
  });

  it('a site with clusters is not touched by either rule', async () => {
    const r = await validate(BASE_SITE);
    assert.equal(r.code, 0, r.messages.join('\n'));
  });

  it('the text output names the path; bpa plan refuses it the same way', async () => {
    const dir = await writeSite({});
    try {
      const v = await runCli(['validate', dir]);
      assert.equal(v.code, 1);
      assert.match(v.stdout, new RegExp(`error SITE_EMPTY: the site ${dir} holds no YAML`));
      const p = await runCli(['plan', dir, '--state', join(dir, 'state')]);
      assert.equal(p.code, 1, p.stdout + p.stderr);
      assert.match(p.stdout, /SITE_EMPTY/);
      assert.doesNotMatch(p.stdout, /No changes/);
    } finally {
      await removeSite(dir);
    }
  });
});

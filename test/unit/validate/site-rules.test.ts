import assert from 'node:assert/strict';
import { loadSite, locateProblems } from '../../../src/load/index.js';
import { validateSite } from '../../../src/validate/index.js';
import { BASE_SITE, edit, removeSite, writeSite } from './site-fixture.js';

/** Rules that look at a whole cluster or the whole site once its model is built. */
describe('site-wide rules', () => {
  async function errors(files: Record<string, string>): Promise<string[]> {
    const dir = await writeSite(files);
    try {
      const loaded = await loadSite(dir);
      const r = validateSite(loaded);
      return locateProblems(loaded.files, r.problems)
        .filter((p) => p.severity === 'error')
        .map((p) => `${p.code} ${p.file}:${p.line} ${p.pointer}: ${p.message}`);
    } finally {
      await removeSite(dir);
    }
  }

  const dualRole = edit('provisioning.yaml', '  workers:\n', '  workers:\n    - master-1: {}\n');

  it('PACKAGE_CONFLICT: a dual-role node with a package pinned differently per role, at the workerSoftware entry', async () => {
    const files = {
      ...dualRole,
      'software.yaml': (dualRole['software.yaml'] ?? '').replace(
        '    - curl\n',
        '    - curl\n    - jq:\n        version: 1.6-2.1ubuntu3\n',
      ),
    };
    assert.deepEqual(await errors(files), [
      'PACKAGE_CONFLICT software.yaml:14 /spec/workerSoftware/1: cluster cluster-a: package "jq" is pinned to 1.5+dfsg-1ubuntu0.1 for masters and 1.6-2.1ubuntu3 for workers; a dual-role node (master-1) cannot have both',
    ]);
  });

  it('no PACKAGE_CONFLICT when no node has both roles, or the pins agree', async () => {
    const conflicting = (
      files: Record<string, string>,
      version: string,
    ): Record<string, string> => ({
      ...files,
      'software.yaml': (files['software.yaml'] ?? '').replace(
        '    - curl\n',
        `    - curl\n    - jq:\n        version: ${version}\n`,
      ),
    });
    assert.deepEqual(await errors(conflicting(BASE_SITE, '1.6-2.1ubuntu3')), []);
    assert.deepEqual(await errors(conflicting(dualRole, '1.5+dfsg-1ubuntu0.1')), []);
  });
});

import assert from 'node:assert/strict';
import { checkMirror } from '../../../src/apt/commands.js';
import { BPA_APT_KEY, executionSettings } from '../../../src/config/execution.js';
import { OPTIONS, resolveConfig, type OptionName } from '../../../src/config/options.js';

const config = (flags: Record<string, unknown>): ReturnType<typeof resolveConfig> =>
  resolveConfig(Object.keys(OPTIONS) as OptionName[], flags, {}, undefined);

describe("packageMirror {bpa: true}: bpa's own apt repository", () => {
  const site = { packageMirror: { bpa: true } };

  it('points the nodes at --artifacts-url, signed-by the key when bpa signs', () => {
    const s = executionSettings(
      config({ artifactsUrl: 'http://172.22.0.2:8080/', aptSigningKey: '/keys/apt.asc' }),
      site,
    );
    assert.equal(
      s.packageMirror,
      `deb [signed-by=${BPA_APT_KEY}] http://172.22.0.2:8080/artifacts/apt/ ./`,
    );
    assert.equal(s.packageMirrorKey, 'bpa');
    checkMirror(s.packageMirror ?? '');
  });

  it('trusts the repository as it is when bpa does not sign it', () => {
    const s = executionSettings(config({ artifactsUrl: 'http://[fd00::2]:8080' }), site);
    assert.equal(s.packageMirror, 'deb [trusted=yes] http://[fd00::2]:8080/artifacts/apt/ ./');
    assert.equal(s.packageMirrorKey, undefined);
    checkMirror(s.packageMirror ?? '');
  });

  it('without --artifacts-url: CONFIG_INVALID naming the setting', () => {
    assert.throws(
      () => executionSettings(config({}), site),
      (err: Error & { code?: string }) =>
        err.code === 'CONFIG_INVALID' && /--artifacts-url/.test(err.message),
    );
  });

  it('a mirror line is used as it is, and no mirror means none', () => {
    const line = 'deb http://m.example/u jammy main';
    assert.equal(executionSettings(config({}), { packageMirror: line }).packageMirror, line);
    assert.equal(executionSettings(config({}), {}).packageMirror, undefined);
  });

  for (const bad of ['ftp://x', 'http://a b', 'http://x/"; reboot', 'x']) {
    it(`refuses --artifacts-url ${bad}`, () => {
      assert.throws(() => config({ artifactsUrl: bad }), /artifactsUrl/);
    });
  }
});

describe('registryMirror settings', () => {
  it('takes the registry from --registry-url and the defaults of the Site', () => {
    const s = executionSettings(config({ registryUrl: 'http://172.22.0.2:5000' }), {
      registryMirror: {},
    });
    assert.deepEqual(s.registryMirror, {
      url: 'http://172.22.0.2:5000',
      registries: ['docker.io'],
      runtimes: ['containerd'],
    });
  });
  it('without --registry-url: CONFIG_INVALID naming the setting', () => {
    assert.throws(
      () => executionSettings(config({}), { registryMirror: { registries: ['quay.io'] } }),
      (err: Error & { code?: string }) =>
        err.code === 'CONFIG_INVALID' && /--registry-url/.test(err.message),
    );
  });
});

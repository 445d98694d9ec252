import assert from 'node:assert/strict';
import { resolveConfig } from '../../../src/config/options.js';
import type { SiteSettings } from '../../../src/validate/model.js';
import { checkSiteTrust, mirrorRefusal, type SitePolicy } from '../../../src/validate/trust.js';
import { BASE_SITE, removeSite, writeSite } from './site-fixture.js';

const site = (spec: Record<string, unknown>): SiteSettings => ({
  name: 'edge',
  ref: { file: 'site.yaml', doc: 0 },
  spec,
});
const strict: SitePolicy = { allowSiteCommands: false, packageMirrors: [] };
const codes = (spec: Record<string, unknown>, policy: SitePolicy = strict): string[] =>
  checkSiteTrust(site(spec), policy).map((p) => `${p.code} ${p.pointer ?? ''}`);

describe('what a site may ask of the machine bpa runs on', () => {
  describe('commands and the installer image', () => {
    const table: Array<[string, Record<string, unknown>, string[]]> = [
      ['no installer settings', {}, []],
      [
        'flavour, mode and timeout',
        { installer: { flavour: 'kubespray', mode: 'job', timeoutSeconds: 600 } },
        [],
      ],
      [
        'installer.command',
        { installer: { command: 'sh -c id' } },
        ['SITE_COMMAND_NOT_ALLOWED /spec/installer/command'],
      ],
      [
        'installer.scaleCommand',
        { installer: { scaleCommand: 'x {nodes}' } },
        ['SITE_COMMAND_NOT_ALLOWED /spec/installer/scaleCommand'],
      ],
      [
        'installer.addonCommand',
        { installer: { addonCommand: 'x' } },
        ['SITE_COMMAND_NOT_ALLOWED /spec/installer/addonCommand'],
      ],
      [
        'installer.removeCommand',
        { installer: { removeCommand: 'x' } },
        ['SITE_COMMAND_NOT_ALLOWED /spec/installer/removeCommand'],
      ],
      [
        'installer.image',
        { installer: { image: 'evil.example/kud:1' } },
        ['SITE_COMMAND_NOT_ALLOWED /spec/installer/image'],
      ],
    ];
    for (const [what, spec, expected] of table) {
      it(`${what}: ${expected.length ? 'refused' : 'allowed'} without --allow-site-commands, allowed with it`, () => {
        assert.deepEqual(codes(spec), expected);
        assert.deepEqual(codes(spec, { ...strict, allowSiteCommands: true }), []);
      });
    }

    it('names the flag to use instead, and why', () => {
      const [p] = checkSiteTrust(site({ installer: { command: 'cat /root/.ssh/id_ed25519' } }));
      assert.match(
        p?.message ?? '',
        /would run on the machine bpa runs on, with its SSH key and git credentials/,
      );
      assert.match(
        p?.message ?? '',
        /--allow-site-commands.*set --installer-command in bpa's configuration/,
      );
      assert.equal(p?.file, 'site.yaml');
    });
  });

  describe('resolveConfig: a Site command counts only when the operator allows it', () => {
    const names = ['installerCommand', 'installerImage', 'installerTimeout'] as const;
    const spec = {
      installer: { command: 'touch /tmp/owned', image: 'evil:1', timeoutSeconds: 600 },
    };
    it('without the opt-in: the defaults, and other Site settings still apply', () => {
      const cfg = resolveConfig(names, {}, {}, spec);
      assert.equal(cfg.installerCommand, '');
      assert.equal(cfg.installerImage, '');
      assert.equal(cfg.installerTimeout, 600);
      assert.equal(cfg.sources.installerCommand, 'default');
    });
    it('with --allow-site-commands or BPA_ALLOW_SITE_COMMANDS: the Site values', () => {
      for (const [flags, env] of [
        [{ allowSiteCommands: true }, {}],
        [{}, { BPA_ALLOW_SITE_COMMANDS: 'true' }],
      ] as const) {
        const cfg = resolveConfig([...names, 'allowSiteCommands'], flags, env, spec);
        assert.equal(cfg.installerCommand, 'touch /tmp/owned');
        assert.equal(cfg.installerImage, 'evil:1');
      }
    });
    it('the operator’s own command wins either way', () => {
      const cfg = resolveConfig(names, { installerCommand: 'kud' }, {}, spec);
      assert.equal(cfg.installerCommand, 'kud');
    });
  });

  describe('packageMirror', () => {
    const allowed = ['http://mirror.site.example/ubuntu', 'https://repo.site.example/'];
    const table: Array<[string, string, RegExp | undefined]> = [
      [
        'a mirror under an allowed prefix',
        'deb http://mirror.site.example/ubuntu jammy main',
        undefined,
      ],
      ['deeper under it', 'deb http://mirror.site.example/ubuntu/pool jammy main', undefined],
      [
        'with harmless options',
        'deb [arch=amd64 signed-by=/usr/share/keyrings/s.gpg] https://repo.site.example/debian bookworm main',
        undefined,
      ],
      [
        '[trusted=yes]',
        'deb [trusted=yes] http://mirror.site.example/ubuntu jammy main',
        /\[trusted=yes\].*nobody signed/,
      ],
      [
        '[allow-insecure=yes] among others',
        'deb [arch=amd64 allow-insecure=yes] http://mirror.site.example/ubuntu jammy main',
        /\[allow-insecure=yes\]/,
      ],
      [
        '[allow-weak=yes]',
        'deb [allow-weak=yes] http://mirror.site.example/ubuntu jammy main',
        /\[allow-weak=yes\]/,
      ],
      [
        'another host',
        'deb http://evil.example/ubuntu jammy main',
        /points at http:\/\/evil\.example\/ubuntu, which is under none of the mirrors bpa allows/,
      ],
      [
        'a sibling path sharing a prefix',
        'deb http://mirror.site.example/ubuntu-evil jammy main',
        /points at/,
      ],
      [
        'credentials that make the host look allowed',
        'deb http://mirror.site.example@evil.example/ubuntu jammy main',
        /evil\.example/,
      ],
      ['another scheme', 'deb https://mirror.site.example/ubuntu jammy main', /points at https:/],
      ['another port', 'deb http://mirror.site.example:8080/ubuntu jammy main', /points at/],
      ['a local path on the node', 'deb file:/srv/debs ./', /points at/],
    ];
    for (const [what, line, refusal] of table) {
      it(`${what}: ${refusal ? 'needs the opt-in' : 'allowed'}`, () => {
        const why = mirrorRefusal(line, allowed);
        if (refusal) assert.match(why ?? '', refusal);
        else assert.equal(why, undefined);
        assert.deepEqual(
          codes({ packageMirror: line }, { allowSiteCommands: false, packageMirrors: allowed }),
          refusal ? ['PACKAGE_MIRROR_NOT_ALLOWED /spec/packageMirror'] : [],
        );
        assert.deepEqual(
          codes({ packageMirror: line }, { allowSiteCommands: true, packageMirrors: [] }),
          [],
        );
      });
    }

    it('with no allowed mirrors configured, every mirror needs the opt-in', () => {
      assert.match(
        mirrorRefusal('deb http://mirror.site.example/ubuntu jammy main', []) ?? '',
        /--package-mirrors: none configured/,
      );
    });
  });
});

describe('bpa validate judges a site as the controller will', () => {
  const siteDoc = `apiVersion: bpa.akraino.org/v1alpha1
kind: Site
metadata: {name: edge}
spec:
  installer:
    command: sh -c id
  packageMirror: deb http://mirror.site.example/ubuntu jammy main
`;
  let dir = '';
  before(async () => {
    dir = await writeSite({ ...BASE_SITE, 'site.yaml': siteDoc });
  });
  after(() => removeSite(dir));

  const run = async (args: string[], env: NodeJS.ProcessEnv = {}): Promise<string[]> => {
    const { main } = await import('../../../src/cli/main.js');
    let out = '';
    const sink = {
      out: (s: string) => void (out += s),
      err: () => undefined,
      exit: () => undefined,
    };
    await main(['validate', '--format', 'json', dir, ...args], sink, env);
    return (JSON.parse(out) as { problems: Array<{ code: string; line: number }> }).problems.map(
      (p) => `${p.code}:${p.line}`,
    );
  };

  it('by default: the command and the mirror are refused, each at its line', async () => {
    assert.deepEqual(await run([]), ['SITE_COMMAND_NOT_ALLOWED:6', 'PACKAGE_MIRROR_NOT_ALLOWED:7']);
  });
  it('--package-mirrors allows the mirror, not the command', async () => {
    assert.deepEqual(await run(['--package-mirrors', 'http://mirror.site.example/ubuntu']), [
      'SITE_COMMAND_NOT_ALLOWED:6',
    ]);
    assert.deepEqual(await run([], { BPA_PACKAGE_MIRRORS: 'http://mirror.site.example/' }), [
      'SITE_COMMAND_NOT_ALLOWED:6',
    ]);
  });
  it('--allow-site-commands (or BPA_ALLOW_SITE_COMMANDS) allows both', async () => {
    assert.deepEqual(await run(['--allow-site-commands']), []);
    assert.deepEqual(await run([], { BPA_ALLOW_SITE_COMMANDS: '1' }), []);
  });
});

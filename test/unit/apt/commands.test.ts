import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  checkMirror,
  installArgv,
  missingPackage,
  markArgv,
  parseHeld,
  parseQuery,
  queryArgv,
  removeArgv,
} from '../../../src/apt/commands.js';
import { remoteCommand } from '../../../src/ssh/index.js';

describe('apt command lines (the executor layer of injection defence)', () => {
  const target = { node: 'n1', address: '198.18.0.2', port: 22, user: 'root' };

  it('builds install argv with pins, and the remote command quotes every argument', () => {
    const argv = installArgv([{ name: 'jq', version: '1:1.6-2.1+deb12u1~rc1' }, { name: 'htop' }]);
    assert.deepEqual(argv.slice(-2), ['jq=1:1.6-2.1+deb12u1~rc1', 'htop']);
    const cmd = remoteCommand(target, argv);
    // What the remote shell would run: the words come back exactly.
    const words = execFileSync(
      'sh',
      ['-c', `for w in ${cmd.slice(cmd.indexOf('env'))}; do printf '%s\\n' "$w"; done`],
      { encoding: 'utf8' },
    )
      .trim()
      .split('\n');
    assert.deepEqual(words.slice(-2), ['jq=1:1.6-2.1+deb12u1~rc1', 'htop']);
  });

  const hostile = ['a;reboot', '$(id)', 'a b', '`id`', 'A', 'x|y', "a'b", '-rf'];
  for (const name of hostile) {
    it(`refuses the package name ${JSON.stringify(name)} even if validation were bypassed`, () => {
      assert.throws(() => installArgv([{ name }]), /invalid package name/);
      assert.throws(() => removeArgv([name]), /invalid package name/);
      assert.throws(() => queryArgv([name]), /invalid package name/);
    });
  }
  for (const version of ['1.0;reboot', '$(id)', '1.0 2', '`x`', '1.0|x', '']) {
    it(`refuses the version ${JSON.stringify(version)}`, () => {
      assert.throws(() => installArgv([{ name: 'jq', version }]), /invalid version/);
    });
  }

  it('checks mirror lines', () => {
    checkMirror('deb [trusted=yes] http://198.18.0.1:8080/ ./');
    checkMirror('deb http://apt.site.example/debian bookworm main contrib');
    for (const bad of [
      'deb http://x/ $(id) main',
      "deb http://x/ 'a' main",
      'deb http://x/;reboot main',
      'curl http://x | sh',
    ]) {
      assert.throws(() => checkMirror(bad), /invalid packageMirror/);
    }
  });

  it('reads dpkg-query output: installed versions, null for absent or config-files only', () => {
    const out = 'jq\t1.6-2.1\tii \nhtop\t3.2.2-2\trc \n';
    assert.deepEqual(parseQuery(out, ['jq', 'htop', 'tmux']), {
      jq: '1.6-2.1',
      htop: null,
      tmux: null,
    });
  });

  it('a held package is installed, and is read as held', () => {
    const out = 'jq\t1.6-2.1\thi \nhtop\t3.2.2-2\tii \ncurl\t\thn \n';
    assert.deepEqual(parseQuery(out, ['jq', 'htop', 'curl']), {
      jq: '1.6-2.1',
      htop: '3.2.2-2',
      curl: null,
    });
    assert.deepEqual(parseHeld(out, ['jq', 'htop', 'curl']), ['curl', 'jq']);
    assert.deepEqual(parseHeld(out, ['htop']), []);
  });

  it('builds apt-mark hold/unhold argv, names checked', () => {
    assert.deepEqual(markArgv('hold', ['jq', 'containerd.io']).slice(-4), [
      'hold',
      '--',
      'jq',
      'containerd.io',
    ]);
    assert.throws(() => markArgv('unhold', ['jq; reboot']), /invalid package name/);
  });

  it('names the missing package from apt errors', () => {
    assert.equal(missingPackage('E: Unable to locate package bpa-nope'), 'bpa-nope');
    assert.equal(missingPackage("E: Version '9.9' for 'jq' was not found"), 'jq=9.9');
    assert.equal(missingPackage('E: something else'), undefined);
  });
});

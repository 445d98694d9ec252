import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { StalledError } from '../../../src/util/errors.js';
import { command, quote } from '../../../src/util/shell-quote.js';

/** What a real shell makes of `printf '%s\036' <words>`: the arguments it received. */
function throughShell(shell: string[], words: string[]): string[] {
  const script = `printf '%s\\036' ${words.join(' ')}`;
  const r = spawnSync(shell[0]!, [...shell.slice(1), '-c', script], {
    encoding: 'utf8',
    env: { PATH: '/usr/bin:/bin' },
  });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\x1e').slice(0, -1);
}

/** A small deterministic generator, so a failure can be reproduced from its seed. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const NASTY = [
  ...'\'"`$\\;|&><*?()[]{}~#!=% \t\n\r-',
  '$(',
  '`id`',
  "'\\''",
  'ü',
  '日',
  '🚀',
  '\u200b',
  '\x01',
  '\x7f',
  'a',
  'Z',
  '0',
  '/',
  '.',
];

function randomArg(next: () => number): string {
  const length = Math.floor(next() * 12);
  let s = '';
  for (let i = 0; i < length; i++) s += NASTY[Math.floor(next() * NASTY.length)];
  return s;
}

const SHELLS = [['/bin/sh'], ['/bin/bash'], ['/bin/dash'], ['/bin/busybox', 'sh']].filter((s) =>
  existsSync(s[0]!),
);

describe('shell quoting', () => {
  it('leaves plain words alone and quotes everything else', () => {
    assert.equal(quote('apt-get'), 'apt-get');
    assert.equal(quote('/var/lib/dpkg'), '/var/lib/dpkg');
    assert.equal(quote('curl_7.88.1-10+deb12u5:amd64'), 'curl_7.88.1-10+deb12u5:amd64');
    assert.equal(quote(''), "''");
    assert.equal(quote('a b'), "'a b'");
    assert.equal(quote("a'b"), "'a'\\''b'");
    // `=` is quoted: as a first word it would otherwise be a variable assignment.
    assert.equal(quote('pkg=1.0'), "'pkg=1.0'");
    assert.equal(
      command(['apt-get', 'install', '-y', 'curl=7.88']),
      "apt-get install -y 'curl=7.88'",
    );
  });

  it('never lets a shell metacharacter through unquoted', () => {
    for (const c of [...'$`\\;|&><*?()\n \t\'"~#!{}[]=']) {
      const q = quote(`a${c}b`);
      assert.ok(q.startsWith("'") && q.endsWith("'"), `${JSON.stringify(c)} → ${q}`);
    }
  });

  it('refuses a NUL byte and an empty command', () => {
    assert.throws(() => quote('a\0b'), StalledError);
    assert.throws(() => command([]), StalledError);
  });

  for (const shell of SHELLS) {
    it(`round-trips nasty strings byte-exact through ${shell.join(' ')}`, () => {
      const fixed = [
        "a'b;$(id)",
        '`x`',
        'l1\nl2\n',
        '',
        ' ',
        "'",
        "''",
        '\\',
        '$HOME',
        '~',
        '*',
        '-n',
        '--',
        '%s%%',
        'ünï 日本 🚀',
        '\r\n',
      ];
      assert.deepEqual(throughShell(shell, fixed.map(quote)), fixed);
      for (const seed of [1, 2, 3, 4, 5]) {
        const next = prng(seed);
        const args = Array.from({ length: 80 }, () => randomArg(next));
        assert.deepEqual(throughShell(shell, args.map(quote)), args, `seed ${seed}`);
      }
    });
  }

  it('keeps a quoted first word a command, not an assignment or a builtin trick', () => {
    const r = spawnSync('/bin/sh', ['-c', command(['A=1', 'true'])], { encoding: 'utf8' });
    assert.equal(r.status, 127, 'A=1 must be looked up as a command');
    const injected = spawnSync(
      '/bin/sh',
      ['-c', command(['echo', '$(echo pwned)', '`echo pwned`', '; echo pwned'])],
      {
        encoding: 'utf8',
      },
    );
    assert.equal(injected.stdout, '$(echo pwned) `echo pwned` ; echo pwned\n');
  });
});

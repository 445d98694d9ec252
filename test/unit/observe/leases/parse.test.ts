import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  detectLeaseFormat,
  parseLeases,
  type LeaseFormat,
} from '../../../../src/observe/leases/index.js';
import { NOW, PARSE_CASES, T22, expectedLease } from './cases.js';

const fixture = (name: string): string =>
  readFileSync(fileURLToPath(new URL(`fixtures/${name}`, import.meta.url)), 'utf8');

describe('observe/leases parseLeases', () => {
  for (const c of PARSE_CASES) {
    it(c.name, () => {
      const result = parseLeases(fixture(c.fixture), { file: c.fixture, now: NOW });
      assert.equal(result.format, c.format);
      assert.deepStrictEqual(
        result.problems.map((p) => ({ code: p.code, line: p.line })),
        c.problems,
        JSON.stringify(result.problems, null, 2),
      );
      for (const p of result.problems) {
        assert.equal(p.severity, 'warning');
        assert.equal(p.file, c.fixture);
      }
      assert.deepStrictEqual(
        result.leases,
        c.leases.map((e) => expectedLease(c.fixture, e)),
      );
    });
  }

  it('explains what is wrong with a malformed entry', () => {
    const { problems } = parseLeases(fixture('isc-malformed.leases'), { file: 'f', now: NOW });
    const byLine = new Map(problems.map((p) => [p.line, p.message]));
    assert.match(
      byLine.get(4) ?? '',
      /lease 10\.0\.1\.1: ends is not a time \(expected W YYYY\/MM\/DD HH:MM:SS/,
    );
    assert.match(byLine.get(39) ?? '', /lease 10\.0\.1\.8 is not closed before line 43/);
    assert.match(byLine.get(48) ?? '', /string opened at line 52/);
  });

  it('counts a lease that ends exactly now as expired, one that ends a millisecond later as active', () => {
    const text = '1795125600 52:54:00:00:00:01 10.9.0.1 * *\n';
    assert.equal(parseLeases(text, { file: 'f', now: T22 }).leases.length, 0);
    assert.equal(parseLeases(text, { file: 'f', now: T22 - 1 }).leases.length, 1);
  });

  it('lets a malformed entry leave the earlier entry for its address in force', () => {
    const text = [
      'lease 10.9.0.2 { ends epoch 1795125600; binding state active; hardware ethernet 52:54:00:00:00:02; }',
      'lease 10.9.0.2 { ends epoch later; binding state free; hardware ethernet 52:54:00:00:00:02; }',
    ].join('\n');
    const result = parseLeases(text, { file: 'f', now: NOW });
    assert.deepStrictEqual(
      result.leases.map((l) => l.origin),
      ['f:1'],
    );
    assert.deepStrictEqual(
      result.problems.map((p) => p.line),
      [2],
    );
  });

  it('reads dhcpd string escapes and ignores comments and braces inside strings', () => {
    const text = [
      'lease 10.9.0.3 { # a comment with { and }',
      '  ends never;',
      '  binding state active;',
      '  hardware ethernet 52:54:00:00:00:03;',
      '  client-hostname "a\\"b\\\\c\\101";',
      '}',
    ].join('\n');
    const { leases, problems } = parseLeases(text, { file: 'f', now: NOW });
    assert.deepStrictEqual(problems, []);
    assert.equal(leases[0]?.hostname, 'a"b\\cA');
  });

  it('honours an explicit format over detection', () => {
    const text = '1795125600 52:54:00:00:00:04 10.9.0.4 * *\n';
    const result = parseLeases(text, { file: 'f', now: NOW, format: 'isc' });
    assert.equal(result.format, 'isc');
    assert.equal(result.leases.length, 0);
    assert.equal(result.problems[0]?.code, 'LEASE_MALFORMED');
  });

  it('reports a file in no known format once, and an empty file not at all', () => {
    const unknown = parseLeases('hello world\n', { file: 'notes.txt', now: NOW });
    assert.equal(unknown.format, undefined);
    assert.deepStrictEqual(
      unknown.problems.map((p) => [p.code, p.severity, p.file, p.line]),
      [['LEASE_FORMAT_UNKNOWN', 'warning', 'notes.txt', 1]],
    );
    const empty = parseLeases('\n', { file: 'notes.txt', now: NOW });
    assert.deepStrictEqual(empty, { format: undefined, leases: [], problems: [] });
  });
});

describe('observe/leases detectLeaseFormat', () => {
  const cases: Array<[string, string, string | undefined, LeaseFormat | undefined]> = [
    ['ISC by its lease blocks', fixture('isc-basic.leases'), 'leases.txt', 'isc'],
    ['ISC holding only failover state', 'failover peer "x" state {\n}\n', undefined, 'isc'],
    ['ISC lease after comments', '# dhcpd\n\nlease 10.0.0.1 {\n}\n', undefined, 'isc'],
    ['dnsmasq by its lines', fixture('dnsmasq-basic.leases'), 'leases.txt', 'dnsmasq'],
    ['dnsmasq starting with its DUID line', 'duid 00:01:00:01:2d:95\n', undefined, 'dnsmasq'],
    [
      'dnsmasq after a bad first line',
      'garbage\n0 52:54:00:00:00:01 10.0.0.1 * *\n',
      undefined,
      'dnsmasq',
    ],
    ['Kea by its header', fixture('kea-leases4.csv'), 'leases.txt', 'kea'],
    ['Kea header in another order', fixture('kea-reordered.csv'), undefined, 'kea'],
    ['content over name', fixture('dnsmasq-basic.leases'), '/var/lib/dhcp/dhcpd.leases', 'dnsmasq'],
    ['empty dnsmasq file by name', '', '/var/lib/misc/dnsmasq.leases', 'dnsmasq'],
    ['empty dhcpd file by name', '', '/var/lib/dhcp/dhcpd.leases', 'isc'],
    ['empty Kea file by name', '', '/var/lib/kea/kea-leases4.csv', 'kea'],
    ['Kea companion by name', '', '/var/lib/kea/kea-leases4.csv.2', 'kea'],
    ['empty, unknown name', '', 'leases.txt', undefined],
    ['nothing known', 'hello world\n', 'notes.txt', undefined],
    ['no name at all', '', undefined, undefined],
  ];
  for (const [name, text, file, expected] of cases) {
    it(name, () => assert.equal(detectLeaseFormat(text, file), expected));
  }
});

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { renderAptIndex } from '../../../src/artifacts/apt-index.js';
import { parseControl } from '../../../src/artifacts/deb-control.js';
import type { ArtifactMeta } from '../../../src/artifacts/store.js';

const deb = (name: string, version: string, uploadedAt: string): ArtifactMeta => ({
  kind: 'packages',
  name: `${name}_${version}_all.deb`,
  size: 1234,
  sha256: 'a'.repeat(64),
  md5: 'b'.repeat(32),
  uploadedAt,
  deb: parseControl(
    `Package: ${name}\nVersion: ${version}\nArchitecture: all\nMaintainer: x <x@y>\nDescription: t\n more\n`,
  ),
});

describe('renderAptIndex', () => {
  const index = renderAptIndex([
    deb('tool-b', '1.0-1', '2026-01-02T00:00:00Z'),
    deb('tool-a', '2.0-1', '2026-01-03T00:00:00Z'),
  ]);
  it('writes one stanza per package with where and what it is', () => {
    const text = index.packages.toString();
    const stanzas = text.trimEnd().split('\n\n');
    assert.equal(stanzas.length, 2);
    assert.match(stanzas[0] ?? '', /^Package: tool-a\n/);
    assert.match(stanzas[0] ?? '', /\nFilename: pool\/tool-a_2\.0-1_all\.deb\nSize: 1234\n/);
    assert.match(stanzas[0] ?? '', /\nSHA256: a{64}$/);
    assert.match(stanzas[0] ?? '', /\nDescription: t\n more\n/);
    assert.deepEqual(gunzipSync(index.packagesGz), index.packages);
  });
  it('lists the size and hashes of Packages and Packages.gz in Release', () => {
    for (const [name, data] of [
      ['Packages', index.packages],
      ['Packages.gz', index.packagesGz],
    ] as const) {
      const sum = createHash('sha256').update(data).digest('hex');
      assert.ok(index.release.includes(` ${sum} ${data.length} ${name}\n`), name);
    }
    // The newest upload, a day earlier: nodes whose clocks lag still accept it.
    assert.match(index.release, /^Date: Fri, 02 Jan 2026 00:00:00 GMT$/m);
  });
  it('is the same for the same packages', () => {
    const again = renderAptIndex([
      deb('tool-a', '2.0-1', '2026-01-03T00:00:00Z'),
      deb('tool-b', '1.0-1', '2026-01-02T00:00:00Z'),
    ]);
    assert.equal(again.release, index.release);
  });
  it('keeps only bpa’s own Filename, Size and hashes, whatever the package’s control data says', () => {
    const own = [
      'Filename: pool/elsewhere.deb',
      'size: 99',
      `MD5sum: ${'0'.repeat(32)}`,
      `SHA1: ${'0'.repeat(40)}`,
      `SHA256: ${'0'.repeat(64)}`,
      `Sha512: ${'0'.repeat(64)}`,
      ` ${'0'.repeat(64)}`,
      `Description-md5: ${'0'.repeat(32)}`,
    ];
    const raw = `Package: liar\nVersion: 1\nArchitecture: all\n${own.join('\n')}\nDescription: t\n more\n`;
    const parsed = parseControl(raw);
    assert.equal(
      parsed.paragraph,
      'Package: liar\nVersion: 1\nArchitecture: all\nDescription: t\n more',
    );
    // A record stored before bpa dropped them at upload holds them still: the index drops them.
    const stored = {
      ...deb('liar', '1', '2026-01-01T00:00:00Z'),
      deb: { ...parsed, paragraph: raw.trimEnd() },
    };
    const text = renderAptIndex([stored]).packages.toString();
    const names = text
      .split('\n')
      .filter((l) => /^\S/.test(l))
      .map((l) => l.slice(0, l.indexOf(':')).toLowerCase());
    assert.deepEqual(names, [
      'package',
      'version',
      'architecture',
      'description',
      'filename',
      'size',
      'md5sum',
      'sha256',
    ]);
    assert.match(
      text,
      /^Filename: pool\/liar_1_all\.deb\nSize: 1234\nMD5sum: b{32}\nSHA256: a{64}\n$/m,
    );
  });
  it('refuses control data without Package, Version or Architecture', () => {
    assert.throws(() => parseControl('Version: 1\nArchitecture: all\n'), /Package/);
    assert.throws(() => parseControl('Package: x1\nArchitecture: all\n'), /Version/);
    assert.throws(() => parseControl('Package: x1\nVersion: 1\n'), /Architecture/);
  });
});

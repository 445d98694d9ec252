/**
 * The index files of the flat Debian repository bpa serves from uploaded packages
 * (`deb http://bpa/artifacts/apt/ ./`): Packages, Packages.gz and Release with the sizes
 * and hashes apt checks. Pure: records in, bytes out.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { withoutIndexFields } from './deb-control.js';
import type { ArtifactMeta } from './store.js';

/** Where a package's file is, relative to the repository root. */
export const POOL = 'pool';

export interface AptIndex {
  packages: Buffer;
  packagesGz: Buffer;
  release: string;
}

export function renderAptIndex(packages: readonly ArtifactMeta[]): AptIndex {
  const debs = packages
    .filter((m): m is ArtifactMeta & { deb: NonNullable<ArtifactMeta['deb']> } => !!m.deb)
    .sort((a, b) => a.name.localeCompare(b.name));
  const stanzas = debs.map((m) =>
    [
      // Records stored before bpa dropped them at upload may still hold the package's own.
      withoutIndexFields(m.deb.paragraph),
      `Filename: ${POOL}/${m.name}`,
      `Size: ${m.size}`,
      ...(m.md5 ? [`MD5sum: ${m.md5}`] : []),
      `SHA256: ${m.sha256}`,
    ].join('\n'),
  );
  const packagesText = Buffer.from(stanzas.length ? `${stanzas.join('\n\n')}\n` : '');
  const packagesGz = gzipSync(packagesText, { level: 9 });
  // The newest upload dates the repository, so the same contents give the same Release. It is
  // backdated a day: apt refuses a Release dated in its future ("not valid yet"), and the
  // clocks of offline nodes often lag the bootstrap machine's.
  const newest = debs
    .map((m) => m.uploadedAt)
    .sort()
    .pop();
  const date = newest ? new Date(Date.parse(newest) - 86_400_000) : new Date(0);
  const files: Array<[string, Buffer]> = [
    ['Packages', packagesText],
    ['Packages.gz', packagesGz],
  ];
  const sums = (algorithm: string): string =>
    files
      .map(
        ([name, data]) =>
          ` ${createHash(algorithm).update(data).digest('hex')} ${data.length} ${name}`,
      )
      .join('\n');
  const release = [
    'Origin: bpa',
    'Label: bpa',
    'Suite: bpa',
    'Codename: bpa',
    `Date: ${date.toUTCString()}`,
    'Description: packages uploaded to bpa serve',
    'MD5Sum:',
    sums('md5'),
    'SHA256:',
    sums('sha256'),
  ].join('\n');
  return { packages: packagesText, packagesGz, release: `${release}\n` };
}

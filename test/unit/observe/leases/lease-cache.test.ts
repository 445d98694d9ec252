import { strict as assert } from 'node:assert';
import { mkdtemp, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LeaseCache } from '../../../../src/observe/leases/lease-cache.js';
import { readLeaseFiles } from '../../../../src/observe/leases/read-lease-files.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const sec = (ms: number): number => Math.floor(ms / 1000);
/** dnsmasq lines: expiry (epoch seconds), MAC, address. */
const dnsmasq = (...rows: Array<[number, string, string]>): string =>
  rows.map(([exp, mac, ip]) => `${exp} ${mac} ${ip} * *\n`).join('');
const HOUR = 3_600_000;

describe('observe/leases LeaseCache: a lease file parsed once per text', () => {
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bpa-lease-cache-'));
    file = join(dir, 'dnsmasq.leases');
    await writeFile(
      file,
      dnsmasq(
        [sec(NOW + 2 * HOUR), '52:54:00:00:00:01', '10.0.0.1'],
        [sec(NOW + 24 * HOUR), '52:54:00:00:00:02', '10.0.0.2'],
        // Superseded by the one above when read alone: the same MAC, an earlier end.
        [sec(NOW + HOUR), '52:54:00:00:00:02', '10.0.0.9'],
      ),
    );
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const read = (cache: LeaseCache | undefined, now: number, paths = [file]) =>
    readLeaseFiles(paths, now, cache ? { cache } : {});

  it('the same text, a later clock before any kept lease ends: the same leases and map', async () => {
    const cache = new LeaseCache();
    const a = await read(cache, NOW);
    const b = await read(cache, NOW + HOUR);
    assert.equal(cache.parses, 1);
    assert.equal(b.leases, a.leases);
    assert.equal(b.leases.get('52:54:00:00:00:01'), a.leases.get('52:54:00:00:00:01'));
    assert.deepEqual(b, await read(undefined, NOW + HOUR));
  });

  it('a changed text, and a file replaced by another of the same size and time: parsed again', async () => {
    const cache = new LeaseCache();
    const a = await read(cache, NOW);
    const text = dnsmasq(
      [sec(NOW + 2 * HOUR), '52:54:00:00:00:01', '10.0.0.3'],
      [sec(NOW + 24 * HOUR), '52:54:00:00:00:02', '10.0.0.2'],
      [sec(NOW + HOUR), '52:54:00:00:00:02', '10.0.0.9'],
    );
    const before = await stat(file);
    assert.equal(Buffer.byteLength(text), before.size);
    await writeFile(`${file}.new`, text);
    await utimes(`${file}.new`, before.atime, before.mtime);
    await rename(`${file}.new`, file);
    const b = await read(cache, NOW);
    assert.equal(cache.parses, 2);
    assert.notEqual(b.leases, a.leases);
    assert.equal(b.leases.get('52:54:00:00:00:01')?.ip, '10.0.0.3');
    assert.deepEqual(b, await read(undefined, NOW));
    await writeFile(file, `${text}${dnsmasq([sec(NOW + HOUR), '52:54:00:00:00:04', '10.0.0.4'])}`);
    const c = await read(cache, NOW);
    assert.equal(cache.parses, 3);
    assert.equal(c.leases.get('52:54:00:00:00:04')?.ip, '10.0.0.4');
  });

  it('the clock past a kept lease, or back before the parse: parsed again', async () => {
    const cache = new LeaseCache();
    await read(cache, NOW);
    // 10.0.0.9 ended at +1h, but it was not kept (superseded): nothing changes yet.
    await read(cache, NOW + HOUR + 1);
    assert.equal(cache.parses, 1);
    const past = await read(cache, NOW + 2 * HOUR);
    assert.equal(cache.parses, 2);
    assert.equal(past.leases.has('52:54:00:00:00:01'), false);
    assert.deepEqual(past, await read(undefined, NOW + 2 * HOUR));
    const back = await read(cache, NOW);
    assert.equal(cache.parses, 3);
    assert.equal(back.leases.get('52:54:00:00:00:01')?.ip, '10.0.0.1');
  });

  it("holds a digest of each file's text, not the text (every lease) between reads", async () => {
    const cache = new LeaseCache();
    await read(cache, NOW);
    const held = (cache as unknown as { parsed: Map<string, { sources: object[] }> }).parsed;
    const sources = [...held.values()].flatMap((p) => p.sources);
    assert.equal(sources.length, 1);
    assert.deepEqual(Object.keys(sources[0] as object).sort(), ['digest', 'file']);
  });

  it('a file no longer read is forgotten; the merged map follows the files read', async () => {
    const cache = new LeaseCache();
    const other = join(dir, 'other.leases');
    await writeFile(other, dnsmasq([sec(NOW + HOUR), '52:54:00:00:00:05', '10.0.0.5']));
    const both = await read(cache, NOW, [file, other]);
    assert.equal(both.leases.size, 3);
    const one = await read(cache, NOW, [file]);
    assert.notEqual(one.leases, both.leases);
    assert.equal(one.leases.size, 2);
    assert.equal(cache.parses, 2);
    await read(cache, NOW, [file, other]);
    assert.equal(cache.parses, 3, 'other.leases was dropped, so it is parsed again');
  });
});

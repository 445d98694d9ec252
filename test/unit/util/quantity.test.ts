import assert from 'node:assert/strict';
import {
  formatBytes,
  isQuantity,
  mebibytesToBytes,
  quantityToUnits,
} from '../../../src/util/quantity.js';

describe('Kubernetes quantities', () => {
  const cases: Array<[string, bigint]> = [
    ['4Gi', 4n * 1024n ** 3n],
    ['8G', 8_000_000_000n],
    ['8192Mi', 8192n * 1024n ** 2n],
    ['1.5Gi', 1536n * 1024n ** 2n],
    ['0.1', 1n], // rounds up to a whole byte, as Kubernetes does
    ['100m', 1n],
    ['1e3', 1000n],
    ['1E9', 1_000_000_000n],
    ['12', 12n],
    ['.5Ki', 512n],
    ['1Ei', 1n << 60n],
    ['7T', 7_000_000_000_000n],
  ];
  for (const [text, bytes] of cases) {
    it(`${text} = ${bytes} exactly`, () => {
      assert.equal(quantityToUnits(text), bytes);
      assert.ok(isQuantity(text));
    });
  }
  for (const bad of ['8GB', '4 Gi', 'Gi', '4gi', '', '1.2.3', '4Gi ', 'abc', '1Zi', '--1']) {
    it(`rejects ${JSON.stringify(bad)}`, () => {
      assert.equal(isQuantity(bad), false);
      assert.equal(quantityToUnits(bad), undefined);
    });
  }
  it('compares exactly with ramMebibytes (no float drift)', () => {
    assert.equal(mebibytesToBytes(4096), quantityToUnits('4Gi'));
    assert.ok(mebibytesToBytes(7629) < (quantityToUnits('8G') ?? 0n)); // 7629 MiB < 8e9 B
    assert.ok(mebibytesToBytes(7630) > (quantityToUnits('8G') ?? 0n));
  });
  it('formats bytes compactly', () => {
    assert.equal(formatBytes(4n << 30n), '4Gi');
    assert.equal(formatBytes(1536n << 20n), '1536Mi');
    assert.equal(formatBytes(8_000_000_000n), '8G');
    assert.equal(formatBytes(1000n), '1k');
    assert.equal(formatBytes(1001n), '1001');
  });
});

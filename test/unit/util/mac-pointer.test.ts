import assert from 'node:assert/strict';
import {
  isCanonical,
  isGroupMac,
  isNullMac,
  normalizeMac,
  NULL_MAC,
} from '../../../src/util/mac.js';
import { parsePointer, pointer } from '../../../src/util/problem.js';

describe('isGroupMac', () => {
  it('is true exactly when the low bit of the first octet is set', () => {
    for (const mac of [
      '01:00:5e:00:00:01',
      '33:33:00:00:00:01',
      'ff:ff:ff:ff:ff:ff',
      '03:c5:16:05:61:b2',
    ])
      assert.equal(isGroupMac(mac), true, mac);
    for (const mac of ['00:c5:16:05:61:b2', '52:54:00:ab:cd:ef', '02:00:00:00:00:01', NULL_MAC])
      assert.equal(isGroupMac(mac), false, mac);
    for (let octet = 0; octet < 256; octet++) {
      const mac = `${octet.toString(16).padStart(2, '0')}:00:00:00:00:01`;
      assert.equal(isGroupMac(mac), octet % 2 === 1, mac);
    }
  });
});

describe('normalizeMac and isCanonical', () => {
  it('returns a canonical MAC as it is, the same string', () => {
    const mac = '52:54:00:ab:cd:ef';
    assert.equal(isCanonical(mac), true);
    assert.equal(normalizeMac(mac), mac);
  });

  it('normalizes every other accepted spelling', () => {
    for (const [raw, want] of [
      ['52:54:00:AB:CD:EF', '52:54:00:ab:cd:ef'],
      ['52-54-00-ab-cd-ef', '52:54:00:ab:cd:ef'],
      [' 52:54:00:ab:cd:ef\n', '52:54:00:ab:cd:ef'],
      ['525400abcdef', '52:54:00:ab:cd:ef'],
    ] as const) {
      assert.equal(isCanonical(raw), false, raw);
      assert.equal(normalizeMac(raw), want, raw);
    }
  });

  it('rejects what is no MAC, whatever character is out of place', () => {
    const good = '52:54:00:ab:cd:ef';
    for (let i = 0; i < good.length; i++) {
      for (const c of ['g', 'G', '-', ':', '/', '@', '`', ' ', '0']) {
        const bad = good.slice(0, i) + c + good.slice(i + 1);
        if (bad === good) continue;
        const regex = /^[0-9a-f]{2}(?::[0-9a-f]{2}){5}$/.test(bad);
        assert.equal(isCanonical(bad), regex, JSON.stringify(bad));
      }
    }
    for (const bad of ['', '52:54:00:ab:cd', '52:54:00:ab:cd:ef:00', '52:54:00:ab:cd:e', 'x'])
      assert.equal(normalizeMac(bad), undefined, bad);
    assert.equal(normalizeMac('52-54:00-ab:cd:ef'), undefined, 'mixed separators');
  });
});

describe('isNullMac', () => {
  it('is NULL_MAC only, whichever of its characters another MAC shares', () => {
    assert.equal(isNullMac(NULL_MAC), true);
    // Read from a file, as a slice of its text: not the same string object.
    const text = `mac: "${NULL_MAC}"`;
    assert.equal(isNullMac(text.slice(6, 23)), true);
    for (let i = 0; i < NULL_MAC.length; i++) {
      if (NULL_MAC[i] === ':') continue;
      for (const c of ['1', 'f']) {
        const other = NULL_MAC.slice(0, i) + c + NULL_MAC.slice(i + 1);
        assert.equal(isNullMac(other), false, other);
      }
    }
    for (const other of ['', '00:00:00:00:00', '00:00:00:00:00:000', '52:54:00:00:00:00'])
      assert.equal(isNullMac(other), false, JSON.stringify(other));
  });
});

describe('pointer', () => {
  it('joins segments, escaping ~ and / only', () => {
    assert.equal(pointer(), '');
    assert.equal(pointer('spec', 'masters', 0, 'node-1'), '/spec/masters/0/node-1');
    assert.equal(pointer('a/b', '~c', 'd~/e', ''), '/a~1b/~0c/d~0~1e/');
  });

  it('is read back by parsePointer', () => {
    const segments = ['spec', 'x/y', '~', '~1', '', 'plain'];
    assert.deepEqual(parsePointer(pointer(...segments)), segments);
  });
});

import assert from 'node:assert/strict';
import { canonicalJson } from '../../../src/plan/hash.js';

/** The definition: JSON.stringify with every object rebuilt with its entries sorted. */
function reference(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(
        Object.entries(v as Record<string, unknown>).sort(([a], [b]) =>
          a < b ? -1 : a > b ? 1 : 0,
        ),
      );
    }
    if (typeof v === 'bigint') return v.toString();
    return v;
  });
}

/** A small deterministic generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KEYS = [
  'b',
  'a',
  'B',
  '10',
  '2',
  '0',
  '01',
  '-1',
  '4294967295',
  '4294967294',
  'é',
  'a b',
  '"',
  '',
  'Z9',
  '1.5',
];
const LEAVES: unknown[] = [
  0,
  -0,
  1.5,
  -3,
  1e21,
  NaN,
  Infinity,
  'x',
  'é"\n\\',
  '',
  true,
  false,
  null,
  undefined,
  12n,
  () => 1,
  Symbol('s'),
  new Date(0),
];

function generate(r: () => number, depth: number): unknown {
  const pick = r();
  if (depth > 4 || pick < 0.4) return LEAVES[Math.floor(r() * LEAVES.length)];
  if (pick < 0.65) return Array.from({ length: Math.floor(r() * 5) }, () => generate(r, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(r() * 7); i > 0; i--)
    o[KEYS[Math.floor(r() * KEYS.length)] as string] = generate(r, depth + 1);
  if (r() < 0.05) return { toJSON: () => o };
  return o;
}

describe('canonicalJson: the same text as JSON.stringify over key-sorted objects', () => {
  it('for 20,000 generated values (integer-like keys, toJSON, undefined, bigint, non-finite numbers)', () => {
    const r = rng(13);
    for (let i = 0; i < 20_000; i++) {
      const v = generate(r, 0);
      assert.equal(
        canonicalJson(v),
        reference(v),
        JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x)),
      );
    }
  });
});

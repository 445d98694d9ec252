/**
 * Kubernetes resource quantities (the `resource.Quantity` grammar), converted exactly to a
 * whole number of base units as a bigint: "4Gi" → 4294967296n, "8G" → 8000000000n. No floating
 * point, so comparisons against inventory figures never drift.
 */
const QUANTITY =
  /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;

const BINARY: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};
const DECIMAL_EXP: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

/** True when `text` is a valid Kubernetes quantity. */
export function isQuantity(text: string): boolean {
  return QUANTITY.test(text);
}

/**
 * The quantity in base units, rounded up to a whole unit (as Kubernetes does for memory);
 * undefined when the text is not a quantity.
 */
export function quantityToUnits(text: string): bigint | undefined {
  const m = QUANTITY.exec(text);
  if (!m) return undefined;
  const sign = m[1] === '-' ? -1n : 1n;
  const [intPart, fracPart = ''] = (m[2] ?? '0').split('.');
  const suffix = m[3] ?? '';
  // The number as digits / 10^scale.
  const digits = BigInt((intPart || '0') + fracPart);
  let scale = fracPart.length;
  let multiplier = 1n;
  if (suffix in BINARY) {
    multiplier = BINARY[suffix] ?? 1n;
  } else {
    const exp = suffix in DECIMAL_EXP ? (DECIMAL_EXP[suffix] ?? 0) : Number(suffix.slice(1));
    if (!Number.isSafeInteger(exp) || Math.abs(exp) > 1000) return undefined;
    scale -= exp;
  }
  let numerator = digits * multiplier;
  let denominator = 1n;
  if (scale > 0) denominator = 10n ** BigInt(scale);
  else numerator *= 10n ** BigInt(-scale);
  const whole = (numerator + denominator - 1n) / denominator; // round up
  return sign * whole;
}

/** Bytes for a number of mebibytes (BareMetalHost `ramMebibytes`). */
export function mebibytesToBytes(mib: number): bigint {
  return BigInt(Math.trunc(mib)) * (1n << 20n);
}

/** A byte count written the short way for messages: 4Gi, 1536Mi, 8G, 1000. */
export function formatBytes(bytes: bigint): string {
  const units: Array<[string, bigint]> = [
    ['Ei', 1n << 60n],
    ['Pi', 1n << 50n],
    ['Ti', 1n << 40n],
    ['Gi', 1n << 30n],
    ['Mi', 1n << 20n],
    ['E', 10n ** 18n],
    ['P', 10n ** 15n],
    ['T', 10n ** 12n],
    ['G', 10n ** 9n],
    ['M', 10n ** 6n],
    ['Ki', 1n << 10n],
    ['k', 1000n],
  ];
  for (const [suffix, unit] of units) {
    if (bytes >= unit && bytes % unit === 0n) return `${bytes / unit}${suffix}`;
  }
  return String(bytes);
}

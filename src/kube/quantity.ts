// Kubernetes resource quantities (apimachinery's resource.Quantity): `500m`, `2`, `1.5Gi`,
// `128974848`, `129e6`, `129M`, `123Mi`. Parsed exactly (big integers, no floating point), then
// scaled the way Quantity.Value() and MilliValue() scale: rounded up, so `1m` of a whole-unit
// resource is 1 and `0.1m` CPU is 1 millicore — as the kubelet and the scheduler count them.
//
// Grammar (from apimachinery):
//   quantity  ::= [sign] number [suffix]
//   number    ::= digits | digits "." [digits] | "." digits
//   suffix    ::= Ki | Mi | Gi | Ti | Pi | Ei          (powers of 1024)
//               | n | u | m | "" | k | M | G | T | P | E  (powers of 1000)
//               | ("e" | "E") [sign] digits          (powers of 10)
// Note `1E` is 10^18 (exa) while `1E3` is 1000.

import { BosunError } from '../common/errors.js';
export class QuantityError extends BosunError {
  constructor(input: unknown) {
    super('QuantityInvalid', `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${JSON.stringify(input)}`);
  }
}

/** An exact quantity: sign × mantissa × 10^exp10 × 2^exp2. */
export interface Quantity {
  negative: boolean;
  mantissa: bigint;
  exp10: number;
  exp2: number;
}

const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
// Exponents past this are refused rather than turned into enormous integers (kube's own
// quantities stop at about 10^18 and 2^63).
const MAX_EXPONENT = 1000;
const FORM = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+|[numkMGTPE])?$/;

export function parseQuantity(input: string | number): Quantity {
  const text = typeof input === 'number' ? (Number.isFinite(input) ? String(input) : '') : input;
  if (typeof text !== 'string' || text.length > 128) throw new QuantityError(input);
  // A JSON number such as 1e21 stringifies with "e+21": the same grammar covers it.
  const match = FORM.exec(text.trim());
  if (!match) throw new QuantityError(input);
  const [, sign, number, suffix = ''] = match;
  const [whole, fraction = ''] = number.split('.');
  const mantissa = BigInt(`${whole}${fraction}` || '0');
  let exp10 = -fraction.length;
  let exp2 = 0;
  if (suffix in BINARY) exp2 = BINARY[suffix];
  else if (suffix in DECIMAL) exp10 += DECIMAL[suffix];
  else exp10 += Number(suffix.slice(1));
  if (Math.abs(exp10) > MAX_EXPONENT) throw new QuantityError(input);
  return { negative: sign === '-' && mantissa !== 0n, mantissa, exp10, exp2 };
}

/** ceil(quantity × 10^scale), exactly. */
function scaledExact(quantity: Quantity, scale: number): bigint {
  const exp10 = quantity.exp10 + scale;
  let numerator = quantity.mantissa * 2n ** BigInt(quantity.exp2);
  let denominator = 1n;
  if (exp10 >= 0) numerator *= 10n ** BigInt(exp10);
  else denominator = 10n ** BigInt(-exp10);
  let result = numerator / denominator;
  if (quantity.negative) result = -result; // toward zero for negatives is rounding up
  else if (result * denominator !== numerator) result += 1n;
  return result;
}

/** ceil(quantity × 10^scale) as a number (Value(): scale 0; MilliValue(): scale 3). */
function scaled(quantity: Quantity, scale: number): number {
  return Number(scaledExact(quantity, scale));
}

/** The quantity in whole units, rounded up (Quantity.Value()): bytes, pods, devices. */
export function quantityValue(input: string | number): number {
  return scaled(parseQuantity(input), 0);
}

/** The quantity in thousandths, rounded up (Quantity.MilliValue()): millicores. */
export function quantityMilliValue(input: string | number): number {
  return scaled(parseQuantity(input), 3);
}

/** The quantity in thousandths, rounded up, exactly (for sums that may pass 2^53: quota usage in bytes). */
export function quantityMilli(input: string | number): bigint {
  return scaledExact(parseQuantity(input), 3);
}

/**
 * Thousandths written back as a quantity, in the form kube prints usage: whole numbers plain,
 * fractions in milli (`500m`), byte counts divisible by a power of 1024 with its suffix (`1Gi`).
 */
export function formatMilli(milli: bigint, binary: boolean): string {
  if (milli % 1000n !== 0n) return `${milli}m`;
  const whole = milli / 1000n;
  if (binary && whole !== 0n) {
    for (const [suffix, bits] of [['Ei', 60n], ['Pi', 50n], ['Ti', 40n], ['Gi', 30n], ['Mi', 20n], ['Ki', 10n]] as const) {
      const unit = 1n << bits;
      if (whole % unit === 0n) return `${whole / unit}${suffix}`;
    }
  }
  return String(whole);
}

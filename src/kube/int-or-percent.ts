// IntOrString values such as a rolling update's maxSurge and maxUnavailable: an integer, or a
// percentage of a total, rounded up or down as the caller's rule says (kube's
// GetScaledValueFromIntOrPercent).
import { TerminalError } from './controller.js';

export type IntOrPercent = number | string | undefined | null;

/** The value scaled against `total`; `fallback` when unset. A bad string is a TerminalError. */
export function scaledValue(value: IntOrPercent, total: number, roundUp: boolean, fallback: IntOrPercent = 0): number {
  const v = value ?? fallback ?? 0;
  if (typeof v === 'number') return v;
  const match = /^(\d+)%$/.exec(v.trim());
  if (!match) {
    if (/^\d+$/.test(v.trim())) return Number(v);
    throw new TerminalError(`invalid value for IntOrString: invalid value "${v}": must be an integer or a percentage`);
  }
  const scaled = (Number(match[1]) * total) / 100;
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}

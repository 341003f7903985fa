// Text as `oc adm upgrade status` writes it: Go's text/tabwriter (padding 3), Go's time.Duration
// strings, rounding and truncation, oc's shortDuration, and fmt's "%.0f". Times and durations are
// milliseconds; a missing timestamp is Go's zero time, so the arithmetic on it matches oc's.

/** Go's zero time.Time (0001-01-01T00:00:00Z), what a missing timestamp parses to. */
export const ZERO_TIME = -62135596800000;

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

/** A metav1.Time field: its milliseconds, or ZERO_TIME when absent or unparsable. */
export function parseTime(value: unknown): number {
  const t = typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isNaN(t) ? ZERO_TIME : t;
}

/** time.Duration.Round: to the nearest multiple of `unit`, halves away from zero. */
export function roundDuration(d: number, unit: number): number {
  const r = Math.floor((Math.abs(d) + unit / 2) / unit) * unit;
  return d < 0 ? -r : r;
}

/** time.Duration.Truncate: towards zero to a multiple of `unit`. */
export function truncateDuration(d: number, unit: number): number {
  return d - (d % unit) || 0;
}

/** time.Duration.String for a whole number of milliseconds: 0s, 750ms, 41.5s, 1h0m17s, -5m0s. */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  const u = Math.abs(ms);
  if (u < SECOND) return `${sign}${u}ms`;
  const h = Math.floor(u / HOUR);
  const m = Math.floor(u / MINUTE) % 60;
  const s = String((u % MINUTE) / SECOND);
  if (h > 0) return `${sign}${h}h${m}m${s}s`;
  if (m > 0) return `${sign}${m}m${s}s`;
  return `${sign}${s}s`;
}

/** oc's shortDuration: Go's string without zero tails or fractions (1h, 2m, 58m18s), 0 is "now". */
export function shortDuration(ms: number): string {
  const orig = goDuration(ms);
  if (orig === '0h0m0s' || orig === '0s') return 'now';
  if (orig.endsWith('h0m0s')) return orig.slice(0, -4);
  if (orig.endsWith('m0s')) return orig.slice(0, -2);
  if (orig.endsWith('h0m')) return orig.slice(0, -2);
  if (orig.includes('.')) return shortDuration(truncateDuration(ms, SECOND));
  return orig;
}

/** fmt's "%.0f": to the nearest integer, an exact half to the even one. */
export function fixed0(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  const f = Math.floor(x);
  const rest = x - f;
  const n = rest > 0.5 || (rest === 0.5 && f % 2 !== 0) ? f + 1 : f;
  return String(n === 0 ? 0 : n);
}

/** oc's ellipsis: at most `max` characters, the last three of a longer text being "...". */
export function ellipsis(s: string, max: number): string {
  const chars = Array.from(s);
  if (chars.length <= max) return s;
  return `${chars.slice(0, Math.max(max, 3) - 3).join('')}...`;
}

const width = (s: string) => Array.from(s).length;

/**
 * Go's text/tabwriter with minwidth 0, padding 3 and spaces: tab-terminated cells are padded to
 * their column's width, the last cell of a line is not; a column is as wide as its widest cell in
 * a block of consecutive lines that have it (a line without the column ends the block, so a
 * multi-line cell splits a table's alignment exactly as oc's output shows).
 */
export function tabwrite(text: string): string {
  const lines = text.split('\n').map((l) => l.split('\t'));
  let out = '';
  const write = (widths: number[], from: number, to: number) => {
    for (let i = from; i < to; i++) {
      out += lines[i].map((cell, j) => (j < widths.length ? cell + ' '.repeat(widths[j] - width(cell)) : cell)).join('');
      if (i + 1 < lines.length) out += '\n';
    }
  };
  const format = (widths: number[], line0: number, line1: number) => {
    const column = widths.length;
    for (let at = line0; at < line1; at++) {
      if (column >= lines[at].length - 1) continue;
      write(widths, line0, at);
      line0 = at;
      let w = 0;
      for (; at < line1 && column < lines[at].length - 1; at++) w = Math.max(w, width(lines[at][column]) + 3);
      format([...widths, w], line0, at);
      line0 = at;
    }
    write(widths, line0, line1);
  };
  format([], 0, lines.length);
  return out;
}

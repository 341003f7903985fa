// Kubernetes' two serialisations of a point in time: metav1.Time (RFC 3339 at second precision,
// what creationTimestamp, condition times and status times carry) and metav1.MicroTime (RFC 3339
// with microseconds, what Leases carry). Every timestamp bosun writes into an object goes
// through one of these, so the API server and the clients write the same form. And ages as kubectl
// prints them (humanDuration, age), for every server-side Table.

/** The current second's text, kept: the API server stamps a create or a write's managedFields with it. */
let nowSecond = NaN;
let nowText = '';

/** RFC 3339 at second precision (`2024-01-02T03:04:05Z`), as metav1.Time serialises; now when no date is given. */
export function rfc3339(date?: Date): string {
  if (date !== undefined) return secondText(date);
  const ms = Date.now();
  const second = Math.floor(ms / 1000);
  if (second !== nowSecond) {
    nowText = secondText(new Date(ms));
    nowSecond = second;
  }
  return nowText;
}

function secondText(date: Date): string {
  // toISOString() is always `YYYY-MM-DDTHH:MM:SS.sssZ` for the years objects carry (0–9999).
  const iso = date.toISOString();
  return iso.length === 24 ? `${iso.slice(0, 19)}Z` : iso.replace(/\.\d{3}Z$/, 'Z');
}

/** RFC 3339 with microseconds (`2024-01-02T03:04:05.678000Z`), as metav1.MicroTime serialises. */
export function rfc3339Micro(date: Date = new Date()): string {
  const iso = date.toISOString();
  return iso.length === 24 ? `${iso.slice(0, 23)}000Z` : iso.replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** A duration the way kubectl prints ages (`45s`, `3m12s`, `25m`, `5h3m`, `20h`, `3d4h`, `120d`, `2y30d`). */
export function humanDuration(ms: number): string {
  // Truncated toward zero like Go's int(d.Seconds()): up to 1.999 s in the future still reads "0s".
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const d = Math.floor(hours / 24) % 365;
    return d === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${d}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

/** kubectl's AGE of a timestamp `now` (ms) sees: `<unknown>` when it is not a time. */
export function age(timestamp: unknown, now: number): string {
  if (typeof timestamp !== 'string') return '<unknown>';
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

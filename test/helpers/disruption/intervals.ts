// The arithmetic of disruption, as OpenShift's backend-disruption monitors count it: a poller's
// samples (one request each, with when it started and ended and whether it succeeded) become the
// spans during which the backend did not answer — from the start of the first failed request to
// the start of the next successful one — and their total in seconds. Pure functions over plain
// data, shared by the observer process (observer.ts) and whoever reads its report.

/** One request of a poller. Times are milliseconds since the epoch. */
export interface Sample {
  start: number;
  end: number;
  ok: boolean;
  /** Why it failed (an error code, a status, "timeout"). */
  error?: string;
}

/** A span during which a backend did not answer, and the first error seen in it. */
export interface Outage {
  from: number;
  to: number;
  error: string;
}

/**
 * The outages in `samples` (any order): each run of failed samples is an outage from the first
 * failure's start to the start of the next success, or to the last failure's end when none
 * followed (the poller was stopped while the backend was still down).
 */
export function outages(samples: Sample[]): Outage[] {
  const sorted = [...samples].sort((a, b) => a.start - b.start);
  const out: Outage[] = [];
  let open: Outage | undefined;
  for (const s of sorted) {
    if (!s.ok) {
      if (open) open.to = Math.max(open.to, s.end);
      else open = { from: s.start, to: s.end, error: s.error ?? 'failed' };
    } else if (open) {
      open.to = s.start;
      out.push(open);
      open = undefined;
    }
  }
  if (open) out.push(open);
  return out;
}

/** Overlapping or touching spans joined, in order. */
export function merge(spans: Array<{ from: number; to: number }>): Array<{ from: number; to: number }> {
  const sorted = [...spans].sort((a, b) => a.from - b.from);
  const out: Array<{ from: number; to: number }> = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s.from <= last.to) last.to = Math.max(last.to, s.to);
    else out.push({ from: s.from, to: s.to });
  }
  return out;
}

/** Total seconds covered by `spans` (overlaps counted once). */
export function seconds(spans: Array<{ from: number; to: number }>): number {
  return merge(spans).reduce((sum, s) => sum + (s.to - s.from), 0) / 1000;
}

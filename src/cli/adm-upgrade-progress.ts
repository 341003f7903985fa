// The progress line `bosun adm upgrade --wait` shows while the ClusterVersion updates. The CVO's
// Progressing message counts the sync pass it is on ("Working towards 1.0.1: 44 of 64 done (68%
// complete), waiting on cluster-api"), and a pass that ends short — an operator not yet at the new
// version — is followed by a new pass that counts from the start again, so the raw count of a
// clean update can go 63 → 44 → 63. A progress bar never goes back: the tracker keeps, per target
// version, the furthest any pass has got, draws the bar there, and says when the pass now running
// is behind it ("pass retried; 63 of 64 done at best"). Pure: it is fed ClusterVersion states.

import type { ClusterVersion, ClusterVersionCondition } from '../api/index.js';

/** One pass's count, as the CVO's Progressing message gives it. */
export interface PassProgress {
  version: string;
  done: number;
  total: number;
  percent: number;
  /** What follows the count, e.g. ", waiting on cluster-api". */
  rest: string;
}

const PROGRESS = /^Working towards (\S+): (\d+) of (\d+) done \((\d+)% complete\)(.*)$/s;

/** The count in a Progressing message ("Working towards V: n of m done (p% complete)…"), if any. */
export function parsePassProgress(message: string): PassProgress | undefined {
  const m = PROGRESS.exec(message);
  return m ? { version: m[1], done: Number(m[2]), total: Number(m[3]), percent: Number(m[4]), rest: m[5] } : undefined;
}

const fraction = (p: PassProgress): number => (p.total === 0 ? 1 : p.done / p.total);

/** A one-line progress bar: `[#####.....]  50%  text`. */
export function progressBar(percent: number, text: string, width = 30): string {
  const filled = Math.round((Math.min(Math.max(percent, 0), 100) / 100) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(percent).padStart(3)}%  ${text}`;
}

const condition = (cv: ClusterVersion, type: string): ClusterVersionCondition | undefined => (cv.status?.conditions ?? []).find((c) => c.type === type);

/** Follows one `--wait`: each ClusterVersion state in, the line to show out; never backwards. */
export class UpgradeProgressTracker {
  /** The furthest pass seen, by target version. */
  private readonly furthest = new Map<string, PassProgress>();

  constructor(private readonly width = 30) {}

  /** The progress line for a ClusterVersion state. */
  observe(cv: ClusterVersion): string {
    const message: string = condition(cv, 'Progressing')?.message || 'waiting for the cluster-version operator';
    const failing = condition(cv, 'Failing');
    const suffix = failing?.status === 'True' ? `  (failing: ${failing.reason})` : '';
    const pass = parsePassProgress(message);
    if (!pass) {
      // "Unable to apply 1.0.1: …" and the like: the bar stays where the target's best pass got.
      const best = this.furthest.get(/^Unable to apply (\S+):/.exec(message)?.[1] ?? cv.status?.desired?.version ?? '');
      return progressBar(best?.percent ?? 0, `${message}${best ? ` (${best.done} of ${best.total} done at best)` : ''}`, this.width) + suffix;
    }
    const best = this.furthest.get(pass.version);
    if (!best || fraction(pass) >= fraction(best)) {
      this.furthest.set(pass.version, pass);
      return progressBar(pass.percent, message, this.width) + suffix;
    }
    const text = `Working towards ${pass.version}: pass retried; ${best.done} of ${best.total} done at best (this pass: ${pass.done} of ${pass.total}${pass.rest})`;
    return progressBar(best.percent, text, this.width) + suffix;
  }
}

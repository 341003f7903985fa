// PrometheusRules → Prometheus's rule files, as the Prometheus Operator writes them into the
// `prometheus-<name>-rulefiles-<n>` ConfigMaps: one file per PrometheusRule,
// `<namespace>-<name>.yaml`, holding its groups unchanged. For tests only, `forOverride` replaces
// every alert's `for:` with a shorter duration (the operator's --alert-for-override flag), so
// that "an operator down for 10 minutes fires ClusterOperatorDown" can be seen in seconds. Pure.
import { stringify } from 'yaml';
import type * as api from '../api/index.js';

export interface RuleFilesOptions {
  /** Every alert's `for:` becomes this (a Prometheus duration such as `5s`), when shorter. */
  forOverride?: string;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 };

/** A Prometheus duration (`1h30m`, `10s`, `0`) in milliseconds; undefined if it is not one. */
export function durationMs(text: string): number | undefined {
  if (text === '0') return 0;
  const parts = [...text.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) return undefined;
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * UNITS[unit], 0);
}

/** The ConfigMap data: one rule file per PrometheusRule, in a stable order. */
export function ruleFiles(rules: api.PrometheusRule[], options: RuleFilesOptions = {}): Record<string, string> {
  const overrideMs = options.forOverride === undefined ? undefined : durationMs(options.forOverride);
  if (options.forOverride !== undefined && overrideMs === undefined) throw new Error(`"${options.forOverride}" is not a Prometheus duration (e.g. 5s, 1m)`);
  const out: Record<string, string> = {};
  const sorted = [...rules].sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
  for (const rule of sorted) {
    const groups = (rule.spec?.groups ?? []).map((g) => ({
      ...g,
      rules: (g.rules ?? []).map((r) => {
        if (overrideMs === undefined || r.for === undefined || !r.alert) return r;
        const ms = durationMs(r.for);
        return ms !== undefined && ms > overrideMs ? { ...r, for: options.forOverride } : r;
      }),
    }));
    out[`${rule.metadata.namespace}-${rule.metadata.name}.yaml`] = stringify({ groups }, { lineWidth: 0 });
  }
  return out;
}

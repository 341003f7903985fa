// Update Health: the insights the control plane, the pools and their nodes raise, ordered and
// written as oc writes them. An insight without a message, a description or a reference is left
// out; the rest go newest first, then the most severe first. With none left, one Info line says
// the update is proceeding well (and --details=health has nothing more to show).
import { shortDuration, tabwrite, truncateDuration, SECOND, ZERO_TIME } from './format.js';

export const LEVELS = ['Info', 'Warning', 'Error', 'Critical'] as const;
export type Level = (typeof LEVELS)[number];
export type Impact = 'None' | 'Unknown' | 'API Availability' | 'Cluster Capacity' | 'Application Availability' | 'Application Outage' | 'Data Loss' | 'Update Speed' | 'Update Stalled';

/** An object an insight is about: its kind written as oc writes it (`nodes`, `clusteroperators.config.openshift.io`). */
export interface InsightResource { kind: string; name: string }

export interface Insight {
  /** When the problem started (ms), ZERO_TIME when unknown ("-"). */
  startedAt: number;
  level: Level;
  impact: Impact;
  summary: string;
  description: string;
  reference: string;
  resources: InsightResource[];
}

export const kinds = {
  clusterVersion: 'clusterversions.config.openshift.io',
  clusterOperator: 'clusteroperators.config.openshift.io',
  pool: 'machineconfigpools.machineconfiguration.openshift.io',
  node: 'nodes',
};

export interface Health { insights: Insight[]; evaluatedAt: number; detailed: boolean }

/** The insights worth showing, in oc's order; `detailed` is false when only "proceeding well" is left. */
export function assessHealth(insights: Insight[], updatingFor: number, now: number): Health {
  const shown = insights
    .filter((i) => i.summary && i.description && i.reference)
    .sort((a, b) => b.startedAt - a.startedAt)
    .sort((a, b) => LEVELS.indexOf(b.level) - LEVELS.indexOf(a.level));
  if (shown.length) return { insights: shown, evaluatedAt: now, detailed: true };
  const well: Insight = { startedAt: now - updatingFor, level: 'Info', impact: 'None', summary: 'Update is proceeding well', description: '', reference: '', resources: [] };
  return { insights: [well], evaluatedAt: now, detailed: false };
}

const since = (h: Health, i: Insight) => (i.startedAt === ZERO_TIME ? '-' : shortDuration(truncateDuration(h.evaluatedAt - i.startedAt, SECOND)));

export function writeHealth(h: Health, detailed: boolean): string {
  let out = '= Update Health =\n';
  if (!detailed) {
    out += tabwrite(`SINCE\tLEVEL\tIMPACT\tMESSAGE\n${h.insights.map((i) => `${since(h, i)}\t${i.level}\t${i.impact}\t${i.summary}\n`).join('')}`);
    if (h.insights.length > 1 || h.insights[0].level !== 'Info') out += '\nRun with --details=health for additional description and links to related online documentation\n';
    return out;
  }
  const field = (name: string, value: string) => `  ${name.padEnd(13)}${value}\n`;
  return out + h.insights.map((i) => {
    let item = `Message: ${i.summary}\n${field('Since:', since(h, i))}${field('Level:', i.level)}${field('Impact:', i.impact)}${field('Reference:', i.reference)}`;
    if (i.resources.length) {
      const kindsOf = [...new Set(i.resources.map((r) => `${r.kind}: `))].sort();
      const pad = Math.max(...kindsOf.map((k) => k.length));
      item += '  Resources:\n';
      for (const k of kindsOf) item += `    ${k.padEnd(pad)}${i.resources.filter((r) => `${r.kind}: ` === k).map((r) => r.name).sort().join(', ')}\n`;
    }
    return item + field('Description:', i.description.replaceAll('\n', `\n${' '.repeat(15)}, `));
  }).join('\n');
}
